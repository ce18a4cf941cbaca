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
