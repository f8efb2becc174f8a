"""Writers for the two-process tests: ``python -m tests.stores.concurrency_child MODE ...``.

Each mode plays the agent of ``crash_child`` against one session of a store and reports on
stdout, one line per fact:

``hold URL SID``
    create the session, append one complete turn (``A <seq>`` each), say ``H`` and hold the
    session open until stdin says ``close`` (then ``C``) — or until the test kills it.
``try-open URL SID TAG EVENTS``
    ``L`` if ``Store.open`` raises ``SessionLocked``; else ``O <seq>``, append ``EVENTS``
    events (``A <json>`` each) and close (``C``).
``race-create URL TAG [CWD]``
    per stdin line ``go SID``: create ``SID`` (in ``CWD``) and append one turn, then say
    ``W SID <events>``,
    or ``L SID <error>`` if another writer got the session first; per ``end``: close it and
    say ``C``.
``take-turns URL SID TAG ROUNDS``
    say ``R``, wait for ``go``, then ``ROUNDS`` times: open the session (retrying after each
    ``SessionLocked``; once in, ``L <refusals>`` and ``O <seq>``), append a turn (``A <json>``
    for each event) and close it. ``D`` at the end.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Iterator

from agentlog import Event, Session
from agentlog.errors import SessionAlreadyExists, SessionLocked
from agentlog.stores import open_store
from agentlog.values import dumps
from tests.stores.crash_child import agent_clock, agent_events


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def one_turn(session: Session, seed: int, tag: str) -> Iterator[Event]:
    """The agent's events up to and including its first ``turn/end``."""
    for event in agent_events(session, seed, tag=tag):
        yield event
        if event.type == "turn/end":
            return


def hold(url: str, sid: str) -> None:
    holder: list[Session] = []
    with open_store(url, clock=agent_clock(holder)) as store:
        session = store.create(sid)
        holder.append(session)
        for event in one_turn(session, 1, "holder "):
            say(f"A {event.seq}")
        say("H")
        for line in sys.stdin:
            if line.strip() == "close":
                break
        session.close()
    say("C")


def try_open(url: str, sid: str, tag: str, events: int) -> None:
    holder: list[Session] = []
    with open_store(url, clock=agent_clock(holder)) as store:
        try:
            session = store.open(sid)
        except SessionLocked:
            say("L")
            return
        holder.append(session)
        say(f"O {session.seq}")
        agent = agent_events(session, 2, tag=tag)
        for _ in range(events):
            say("A " + dumps(next(agent)).decode())
        session.close()
    say("C")


def race_create(url: str, tag: str, cwd: str | None) -> None:
    holder: list[Session] = []
    with open_store(url, clock=agent_clock(holder)) as store:
        session: Session | None = None
        for line in sys.stdin:
            command, _, sid = line.strip().partition(" ")
            if command == "end":
                if session is not None:
                    session.close()
                session = None
                say("C")
                continue
            holder.clear()
            try:
                session = store.create(sid, cwd=cwd)
                holder.append(session)
                count = sum(1 for _ in one_turn(session, 3, tag))
            except (SessionLocked, SessionAlreadyExists) as exc:
                say(f"L {sid} {type(exc).__name__}")
            else:
                say(f"W {sid} {count}")


def take_turns(url: str, sid: str, tag: str, rounds: int) -> None:
    holder: list[Session] = []
    seeds = random.Random(tag)
    with open_store(url, clock=agent_clock(holder)) as store:
        say("R")
        sys.stdin.readline()  # "go"
        for _ in range(rounds):
            locked = 0
            while True:
                try:
                    session = store.open(sid)
                except SessionLocked:
                    locked += 1
                    time.sleep(0.001)
                else:
                    break
            holder[:] = [session]
            say(f"L {locked}")
            say(f"O {session.seq}")
            for event in one_turn(session, seeds.randrange(2**32), tag):
                say("A " + dumps(event).decode())
            session.close()
    say("D")


def main(argv: list[str]) -> None:
    mode, url, *rest = argv
    if mode == "hold":
        hold(url, rest[0])
    elif mode == "try-open":
        try_open(url, rest[0], rest[1], int(rest[2]))
    elif mode == "race-create":
        race_create(url, rest[0], rest[1] if len(rest) > 1 else None)
    elif mode == "take-turns":
        take_turns(url, rest[0], rest[1], int(rest[2]))
    else:
        raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
