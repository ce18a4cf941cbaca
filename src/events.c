/*
 * events.c
 *		The NOTIFY events of matchmaker: every payload is one JSON object
 *		whose first key is "event" and second "queue"; it goes to the
 *		channel "matchmaker", and also to the queue's own channel when the
 *		queue names one.  Sent by Async_Notify, so it is delivered when the
 *		transaction that made the event commits, and never otherwise.
 */
#include "matchmaker.h"

#include "commands/async.h"
#include "utils/json.h"

/* The channel every event goes to. */
#define MM_CHANNEL	"matchmaker"

/*
 * Start an event's payload in buf (reset first): {"event": event,
 * "queue": queue.  The caller appends its fields (", \"key\": value") and
 * the closing brace.
 */
void
mm_event_start(StringInfo buf, const char *event, const char *queue)
{
	resetStringInfo(buf);
	appendStringInfoString(buf, "{\"event\": ");
	escape_json(buf, event);
	appendStringInfoString(buf, ", \"queue\": ");
	escape_json(buf, queue);
}

/* Append a list of ids to an event's payload: , "key": [id, ...]. */
void
mm_event_ids(StringInfo buf, const char *key, const int64 *ids, int n)
{
	appendStringInfoString(buf, ", ");
	escape_json(buf, key);
	appendStringInfoString(buf, ": [");
	for (int i = 0; i < n; i++)
		appendStringInfo(buf, "%s" INT64_FORMAT, i ? ", " : "", ids[i]);
	appendStringInfoChar(buf, ']');
}

/*
 * Close an event's payload and send it (see mm_event_send).  When it would
 * reach MM_EVENT_MAX_BYTES, what was appended after head bytes (its lists)
 * is left out and "truncated": true says so: the listener reads the
 * tickets with ticket_status or from the tables.
 */
void
mm_event_finish(StringInfo buf, int head, const char *channel)
{
	if (buf->len + 1 >= MM_EVENT_MAX_BYTES)
	{
		buf->len = head;
		buf->data[head] = '\0';
		appendStringInfoString(buf, ", \"truncated\": true");
	}
	appendStringInfoChar(buf, '}');
	mm_event_send(channel, buf->data);
}

/*
 * Send a payload on "matchmaker" and, when channel is neither NULL nor
 * "matchmaker", on channel too.  Payloads must stay below
 * MM_EVENT_MAX_BYTES (the caller leaves lists out to keep them there).
 */
void
mm_event_send(const char *channel, const char *payload)
{
	Assert(strlen(payload) < MM_EVENT_MAX_BYTES);
	Async_Notify(MM_CHANNEL, payload);
	if (channel != NULL && strcmp(channel, MM_CHANNEL) != 0)
		Async_Notify(channel, payload);
}
