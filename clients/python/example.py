#!/usr/bin/env python3
"""A game backend's loop with matchmaker_client: enqueue a player, wait for
the match (accepting its ready check when the queue has one), print it.

Usage: example.py QUEUE PLAYER RATING    (connects with the PG* variables)
"""
import sys

from matchmaker_client import Client, MatchmakerError


def main():
    queue, player, rating = sys.argv[1], sys.argv[2], float(sys.argv[3])
    mm = Client("")
    try:
        ticket = mm.enqueue(queue, player, rating)
        print("ticket %d for %s in %s" % (ticket, player, queue))
        status = mm.wait_for_match(ticket, timeout=120)
        if status.state == "proposed":
            print("match %d proposed: accepting" % status.match_id)
            mm.accept(ticket)
            status = mm.wait_for_match(ticket, timeout=120)
        print("%s: match %s, team %s, after %s" % (status.state, status.match_id, status.team, status.waited))
    except MatchmakerError as err:
        print("refused (SQLSTATE %s): %s%s" % (err.sqlstate, err.message,
                                               "; " + err.hint if err.hint else ""))
        return 1
    except TimeoutError as err:
        print("gave up: %s" % err)
        mm.cancel(ticket)
        return 2
    finally:
        mm.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
