"""``Session``: one append-only event log, its surface and the history derived from it.

Implements spec/core.md §3 (the session object), §4 (the append pipeline, in its order), §6.2
(``derive_messages`` with its generation-keyed cache), §7 (request header and context folds)
and §9 (construction from a seed). A session is synchronous (DESIGN decision 9) and may be
shared by threads: appends, flushes, group commits and ``close`` are serialized by one lock, so
seqs stay dense and a store sees one ordered stream. Stores attach to a session as its sink.
"""

from __future__ import annotations

import threading
import time as _time
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from typing import Any, Final

from agentlog.errors import EventRejected, NotLosslessJson, SeedRejected
from agentlog.events import (
    DECLARED,
    RULE_TYPES,
    Event,
    RuleViolation,
    build_event,
    check_event,
)
from agentlog.session.header import build_header
from agentlog.session.hooks import Hooks, Observer, Trace, Validator, announce
from agentlog.session.ids import check_session_id
from agentlog.session.log import EventLog, MessageLog
from agentlog.session.request import canonical_header
from agentlog.session.seed import mark_seed_end, replay_seed
from agentlog.session.sink import Sink
from agentlog.session.view import Surface
from agentlog.surface import (
    APPEND,
    MessageProjection,
    SurfaceState,
    derive_event_message,
    derive_node_messages,
    projection_registry,
)
from agentlog.values import MAX_SAFE_INTEGER, FrozenDict, JsonValue, snapshot, snapshot_fast

__all__ = ["Clock", "PendingAppend", "Session", "wall_clock"]

Clock = Callable[[], int]
"""A source of epoch milliseconds."""

_STALE: Final[Any] = object()
_EMPTY_HEADER: Final[FrozenDict] = snapshot({})
_TRACKED: Final = ("request/header", "request/context")
_get_ident: Final = threading.get_ident


PendingAppend = tuple[Event, Any, tuple[Observer, ...], Any]
"""An event checked by ``Session._prepare`` and not yet applied (``Session._commit``): the
event, its surface plan, the observers and traces to tell. A plain tuple: this is the append's
hot path."""


def wall_clock() -> int:
    """The current time in epoch milliseconds."""
    return _time.time_ns() // 1_000_000


class Session:
    """An agent session: an append-only event log and the message history derived from it.

    Build one with ``Session.create()`` (empty) or ``Session.from_events()`` (from a seed:
    replay, resume, fork); stores hand out attached sessions. Append events with ``append()``;
    read the history the model sees with ``derive_messages()``.

    Example:
        >>> from agentlog import Session, messages
        >>> s = Session.create("demo", clock=lambda: 0)
        >>> ev = s.append("user/message", messages.user("hi", id="u1"), surface_op="append")
        >>> ev.seq, s.surface.nodes, [m["id"] for m in s.derive_messages()]
        (0, (0,), ['u1'])
    """

    __slots__ = (
        "__weakref__",
        "_batch_depth",
        "_batch_idle",
        "_batch_owner",
        "_batch_waiters",
        "_clock",
        "_closed",
        "_context",
        "_derived",
        "_derived_generation",
        "_derived_nodes",
        "_events_view",
        "_header_value",
        "_hooks",
        "_last_header",
        "_lock",
        "_log",
        "_projections",
        "_sink",
        "_state",
        "first_lifecycle_seq",
        "first_live_seq",
        "header",
        "id",
        "inherited_event_count",
        "surface",
    )

    def __init__(self) -> None:
        raise TypeError("build sessions with Session.create() or Session.from_events()")

    # --- construction -------------------------------------------------------------------

    @classmethod
    def create(
        cls,
        session_id: str,
        header: JsonValue = None,
        *,
        projections: Iterable[MessageProjection] = (),
        clock: Clock | None = None,
    ) -> Session:
        """Create an empty, detached session.

        Args:
            session_id: The session id; a supplied header must carry the same ``id``.
            header: A format-4 session header, or ``None`` to synthesize one.
            projections: Message projections the session may use (e.g. ``IMAGE_OFFLOAD``).
            clock: Epoch-ms source for event times and a synthesized ``createdAt``.

        Raises:
            SeedRejected: for an invalid header or a seeded header (which needs a seed).
        """
        clock = clock or wall_clock
        registry = _registry(session_id, projections)
        frozen_header = build_header(check_session_id(session_id), header, clock)
        if frozen_header.get("isSeeded") is True:
            raise SeedRejected(
                "seeded session requires an explicit constructor seed", session_id=session_id
            )
        session = cls.__new__(cls)
        session._setup(session_id, frozen_header, [], registry, clock)
        return announce(session)

    @classmethod
    def from_events(
        cls,
        session_id: str,
        events: Iterable[Any],
        header: JsonValue = None,
        *,
        inherited_event_count: int | None = None,
        restore: bool = False,
        projections: Iterable[MessageProjection] = (),
        clock: Clock | None = None,
    ) -> Session:
        """Build a session from a seed: a complete event list (replay, resume, fork).

        Every entry is checked as in spec/core.md §9.1 and folded through the surface; then the
        ``session/end-seed`` marker of §9.4 is appended unless the seed already ends with one.

        Args:
            session_id: The session id.
            events: ``Event``s or wire dicts, contiguous from seq 0.
            header: The session header, or ``None`` to synthesize an unseeded one.
            inherited_event_count: For a seeded header (a fork child): how many leading events
                were inherited from the parent.
            restore: The resume-from-storage path: only the ordinary ``{}`` marker is added.
            projections: Message projections the log may use.
            clock: Epoch-ms source for new events and a synthesized ``createdAt``.

        Raises:
            SeedRejected: with the text of the first failing rule (E30–E48, E63–E76).
        """
        clock = clock or wall_clock
        session_id = check_session_id(session_id)
        registry = _registry(session_id, projections)
        frozen_header = build_header(session_id, header, clock) if restore else None
        session = cls.__new__(cls)
        log: list[Event] = []
        session._setup(session_id, _EMPTY_HEADER, log, registry, clock)
        latest: dict[str, Event | None] = dict.fromkeys(_TRACKED)
        replay_seed(session_id, events, session._state, log, restore=restore, latest=latest)
        if frozen_header is None:
            frozen_header = build_header(session_id, header, clock)
        session.header = frozen_header
        cut = mark_seed_end(
            session_id,
            log,
            session._state,
            seeded=frozen_header.get("isSeeded") is True,
            inherited=inherited_event_count,
            restore=restore,
            clock=clock,
        )
        session.first_live_seq = cut.first_live_seq
        session.first_lifecycle_seq = cut.first_lifecycle_seq
        session.inherited_event_count = cut.inherited_event_count
        for event in latest.values():  # only the latest of each type matters
            if event is not None:
                session._track(event)
        return announce(session)

    def _setup(
        self,
        session_id: str,
        header: FrozenDict,
        log: list[Event],
        projections: dict[str, MessageProjection],
        clock: Clock,
    ) -> None:
        self.id = session_id
        self.header = header
        self._log = log
        self._clock = clock
        self._projections = projections
        self._state = SurfaceState(self._lookup, projections)
        self.surface = Surface(self._state)
        self.first_live_seq = 0
        self.first_lifecycle_seq = 0
        self.inherited_event_count = 0
        self._events_view: EventLog | None = None
        self._derived: list[JsonValue] = []
        self._derived_nodes = 0
        self._derived_generation = 0
        self._last_header: Event | None = None
        self._header_value: Any = None
        self._context: JsonValue = None
        self._hooks = Hooks()
        self._sink: Sink | None = None
        self._closed = False
        self._lock = threading.RLock()
        self._batch_idle = threading.Condition(self._lock)
        self._batch_owner: int | None = None
        self._batch_depth = 0
        self._batch_waiters = 0

    def _lookup(self, seq: int) -> Event | None:
        log = self._log
        return log[seq] if 0 <= seq < len(log) else None

    # --- reading ------------------------------------------------------------------------

    @property
    def clock(self) -> Clock:
        """The epoch-ms source of this session's event times."""
        return self._clock

    @property
    def projections(self) -> tuple[MessageProjection, ...]:
        """The message projections this session may use."""
        return tuple(self._projections.values())

    @property
    def seq(self) -> int:
        """The next seq, which is also the number of events."""
        return len(self._log)

    @property
    def events(self) -> EventLog:
        """Every event, as an immutable sequence (the same object until the next append)."""
        view = self._events_view
        if view is None or len(view) != len(self._log):
            view = self._events_view = EventLog(self._log, len(self._log))
        return view

    def event_at(self, seq: int) -> Event:
        """The event at ``seq``.

        Raises:
            IndexError: when no event has that seq.
        """
        event = self._lookup(seq) if type(seq) is int else None
        if event is None:
            raise IndexError(f"session {self.id!r} has no event at seq {seq!r}")
        return event

    def event_at_or_none(self, seq: int) -> Event | None:
        """The event at ``seq``, or ``None`` when the log has none there."""
        return self._lookup(seq) if type(seq) is int else None

    def own_events(self) -> tuple[Event, ...]:
        """The events after the inherited prefix of a fork child (all events otherwise)."""
        return tuple(self._log[self.inherited_event_count :])

    def is_own_seq(self, seq: int) -> bool:
        """Whether ``seq`` names an event this session wrote itself (not inherited)."""
        return self.inherited_event_count <= seq < len(self._log)

    def derive_messages(self) -> list[JsonValue]:
        """The message history the model sees: one message per visible surface node.

        Returns a fresh list of shared, immutable messages (spec/core.md §6.2). Only nodes added
        since the last call are projected while ``content_generation`` is unchanged; the copy
        into a fresh list is the only part that grows with the history (``messages()`` skips it).
        """
        return list(self._refresh_messages())

    def messages(self) -> MessageLog:
        """The same history as ``derive_messages()``, as an immutable view: no copy.

        The view never changes: later appends or replaces give later views. Use it to read a
        long history every step without paying for a fresh list each time.
        """
        derived = self._refresh_messages()
        return MessageLog(derived, len(derived))

    def _refresh_messages(self) -> list[JsonValue]:
        """Bring the derive cache up to date (spec/core.md §6.2) and return it."""
        state = self._state
        if state.content_generation != self._derived_generation:
            # A new list, never an in-place edit: views of the old one stay valid.
            self._derived = []
            self._derived_nodes = 0
            self._derived_generation = state.content_generation
        nodes = state.nodes
        if self._derived_nodes < len(nodes):
            self._derived += derive_node_messages(
                self._log, nodes[self._derived_nodes :], state.projected
            )
            self._derived_nodes = len(nodes)
        return self._derived

    def derive_event_message(self, event: Mapping[str, Any]) -> JsonValue:
        """The message one event contributes, with this session's projections applied."""
        return derive_event_message(event, self._state.projected)

    def request_header(self) -> JsonValue:
        """The canonical request header in force (spec/core.md §7.2), or ``None``."""
        value = self._header_value
        if value is _STALE:
            assert self._last_header is not None
            # The header's parts are frozen already: the snapshot copies only the top level.
            canonical = canonical_header(self._last_header["data"]["header"])
            value = self._header_value = snapshot(canonical)
        return value

    def request_context(self) -> JsonValue:
        """The data of the latest ``request/context`` event (spec/core.md §7.5), or ``None``."""
        return self._context

    def _track(self, event: Event) -> None:
        event_type = event["type"]
        if event_type == "request/header":
            self._last_header = event
            self._header_value = _STALE
        elif event_type == "request/context":
            self._context = event["data"]

    def fork(self, boundary: int | None = None, child_id: str | None = None) -> Session:
        """Fork a detached child that inherits this session's events ``0..boundary``.

        Implements spec/core.md §10.1–§10.2 for an in-memory session: any seq may be the
        boundary (default: the last event); a turn the cut leaves open is closed in the child
        with ``forked`` closers. The parent is never touched; the child shares its immutable
        events instead of copying them.

        Raises:
            agentlog.SessionForkError: ``INVALID_BOUNDARY`` for a boundary that is not a seq
                of this session.
        """
        # The one reach from session down into lifecycle, allowed by the import contract:
        # a fork seed is built by the lifecycle layer, which itself builds on Session.
        from agentlog.lifecycle.fork import fork_session

        return fork_session(self, boundary, child_id)

    # --- hooks --------------------------------------------------------------------------

    def add_validator(self, validator: Validator) -> Callable[[], None]:
        """Run ``validator(session, candidate)`` before every commit; raising vetoes the append.

        Returns:
            A function that removes the validator.
        """
        return self._hooks.add_validator(validator)

    def add_observer(self, observer: Observer) -> Callable[[], None]:
        """Call ``observer(session, event)`` after every commit (spec/core.md §4 step 9d).

        Exceptions are logged as warnings and never change the append's result; an awaitable
        result is scheduled on the running event loop and its failure logged the same way.

        Returns:
            A function that removes the observer.
        """
        return self._hooks.add_observer(observer)

    def add_trace(self, trace: Trace) -> Callable[[], None]:
        """Fold every later append through ``trace``, a companion's state (spec/core.md §11).

        ``trace.check(candidate)`` runs before the validators (raising vetoes the append and
        nothing changes); ``trace.apply(event)`` runs right after commit, before the observers.
        The log so far is not replayed: ``agentlog.lifecycle.install_trace`` does that first.

        Returns:
            A function that removes the trace.
        """
        return self._hooks.add_trace(trace)

    # --- appending ----------------------------------------------------------------------

    def append(
        self,
        event_type: str,
        data: JsonValue,
        *,
        surface_op: JsonValue = None,
        source_event_seqs: JsonValue = None,
        ignorable: bool = False,
    ) -> Event:
        """Validate and append one event; return it as stored (spec/core.md §4).

        Args:
            event_type: A declared event type, or any type when ``ignorable`` is true.
            data: The payload; snapshotted (validated, deep-frozen) before anything else.
            surface_op: ``"append"`` or ``{"op": "replace", "startSeq": s, "endSeq": e}``;
                required for the five surface types, forbidden for the others.
            source_event_seqs: Seqs this event cites; a replace must cite every node it shadows.
            ignorable: Mark the event as skippable by readers that do not know its type.

        Returns:
            The committed, immutable event.

        Raises:
            EventRejected: with the catalogue text; the session is unchanged and the seq unused.
        """
        with self._lock:
            owner = self._batch_owner
            if owner is not None and owner != _get_ident():
                self._wait_for_other_batch()
            # The pipeline of spec/core.md §4 in line (one call frame fewer per append).
            event, plan, observers, traces = self._prepare(
                event_type, data, surface_op, source_event_seqs, ignorable
            )
            sink = self._sink
            if sink is not None:
                sink.persist(event)
            # ``_commit`` in line (one call frame fewer per append): keep the two alike.
            log = self._log
            if event["seq"] != len(log):  # a sink that appended from its persist()
                raise RuntimeError(
                    f"session {self.id!r}: seq {event['seq']} was taken while its append was "
                    "persisted"
                )
            log.append(event)
            if plan is None:  # a log-only event: all SurfaceState.apply would do, without a call
                self._state.expected_seq += 1
            else:
                self._state.apply(plan)
            if traces:
                for trace in traces:
                    trace.apply(event)
            if event_type in _TRACKED:
                self._track(event)
            if observers:
                self._hooks.publish(self, event, observers)
            return event

    def _prepare(
        self,
        event_type: str,
        data: JsonValue,
        surface_op: JsonValue,
        source_event_seqs: JsonValue,
        ignorable: bool,
    ) -> PendingAppend:
        """Steps 1-8 of the append pipeline (spec/core.md §4): the checked event, nothing changed.

        The persistence step (9) is the caller's: ``append`` hands the event to the sink; an
        ``agentlog.aio`` session over an async store awaits its write. ``_commit`` then applies
        it, provided nothing was appended meanwhile.
        """
        if type(event_type) is not str:
            raise self._rejected(f"session event type must be a string, got {event_type!r}", None)
        if not ignorable and event_type not in DECLARED:
            raise self._rejected(
                f'session event "{event_type}" has an undeclared type; declare it or append it '
                "as ignorable",
                event_type,
            )
        try:
            data = snapshot_fast(data)
        except NotLosslessJson as exc:
            raise self._rejected(
                f'session event "{event_type}" carries non-JSON-serializable data', event_type, exc
            ) from exc
        if (surface_op is not None and surface_op != APPEND) or source_event_seqs is not None:
            try:
                surface_op = snapshot(surface_op)
                source_event_seqs = snapshot(source_event_seqs)
            except NotLosslessJson as exc:
                raise self._rejected(
                    f'session event "{event_type}" carries non-JSON-serializable surface metadata',
                    event_type,
                    exc,
                ) from exc
        if self._closed:
            raise self._rejected(f'session "{self.id}" is closed', event_type)
        hooks = self._hooks
        if hooks.publishing:
            raise self._rejected(
                "session append cannot reenter while another append is being published",
                event_type,
            )
        log = self._log
        seq = len(log)
        clock = self._clock
        # The default clock's body in line (one call fewer per append); any other is called.
        now = _time.time_ns() // 1_000_000 if clock is wall_clock else clock()
        if type(now) is not int or not -MAX_SAFE_INTEGER <= now <= MAX_SAFE_INTEGER:
            raise self._rejected(
                f"session clock returned {now!r}, not epoch milliseconds (a safe integer)", None
            )
        event = build_event(event_type, seq, now, data, source_event_seqs, surface_op, ignorable)
        if event_type in RULE_TYPES:  # the other types have no per-type rules: no call
            try:
                check_event(event_type, data)
            except RuleViolation as violation:
                raise self._rejected(
                    f'session event "{event_type}" at seq {seq} {violation}', event_type
                ) from None
        state = self._state
        try:
            plan = state.plan(event)
        except EventRejected as exc:
            exc.session_id = self.id
            raise
        observers = tuple(hooks.observers) if hooks.observers else ()
        traces = hooks.traces
        if traces:
            try:
                for trace in traces:
                    trace.check(event)
            except EventRejected as exc:
                exc.session_id = self.id
                raise
        if hooks.validators:
            hooks.validate(self, event)
        return event, plan, observers, traces

    def _commit(self, pending: PendingAppend) -> Event:
        """Steps 10-12 (spec/core.md §4): apply a prepared, persisted event and publish it.

        For the async writer, which persists between ``_prepare`` and this. ``append`` runs the
        same steps in line (the call costs ≈ 1.3k instructions, 7% of an append, under
        callgrind): a change here belongs there too.

        Raises:
            RuntimeError: when another append took the seq since ``_prepare`` (a caller that
                persists outside the session lock must serialize its appends).
        """
        event, plan, observers, traces = pending
        log = self._log
        seq = event["seq"]  # the wire key, not the property: this is the hot path
        if seq != len(log):
            raise RuntimeError(
                f"session {self.id!r}: seq {seq} was taken while its append was persisted"
            )
        log.append(event)
        self._state.apply(plan)
        if traces:
            for trace in traces:
                trace.apply(event)
        if event["type"] in _TRACKED:
            self._track(event)
        if observers:
            self._hooks.publish(self, event, observers)
        return event

    def _rejected(
        self, message: str, event_type: str | None, cause: NotLosslessJson | None = None
    ) -> EventRejected:
        if cause is None:
            return EventRejected(message, session_id=self.id, event_type=event_type, seq=self.seq)
        # The catalogue text says neither where nor why: name the JSON path and the reason.
        return EventRejected(
            f"{message}: {cause.detail}",
            spec_text=message,
            session_id=self.id,
            event_type=event_type,
            seq=self.seq,
        )

    # --- persistence --------------------------------------------------------------------

    def attach(self, sink: Sink) -> None:
        """Attach the session to a store's sink (stores call this; one sink per session).

        Raises:
            RuntimeError: when the session already has a sink or is closed.
        """
        if self._sink is not None or self._closed:
            raise RuntimeError(f"session {self.id!r} is already attached or closed")
        self._sink = sink

    @property
    def attached(self) -> bool:
        """Whether appends are persisted to a store."""
        return self._sink is not None

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called; a closed session refuses appends."""
        return self._closed

    def flush(self) -> None:
        """Return once every appended event is durable (a no-op for a detached session)."""
        with self._lock:
            if self._sink is not None:
                self._sink.flush()

    def batch(self) -> AbstractContextManager[Session]:
        """Group commit: the appends inside reach the store as one durable write at the end.

        Each append inside is validated and applied at its call, as always (a rejected one
        raises there and changes nothing); the store receives the accepted events together when
        the outermost block exits — one write and one fsync for JSONL (one zstd frame), one
        transaction for SQL stores — on the calling thread, with no timer. Nested blocks join
        the outer one. An exception inside the block still writes what was accepted, then
        propagates. Other threads' appends wait until the block has been written.

        Raises:
            StoreError: from the exit, when the write failed: the block's events stay in the
                session and queued, and the next ``flush()`` (or durable append) writes them.
        """
        return _Batch(self)

    def _open_batch(self) -> bool:
        """Enter a group commit on this thread; whether it is the outermost block."""
        with self._lock:
            if self._batch_owner is not None:
                self._wait_for_other_batch()
            self._batch_owner = threading.get_ident()
            self._batch_depth += 1
            outermost = self._batch_depth == 1
            if outermost and self._sink is not None:
                self._sink.hold()
            return outermost

    def _close_batch(self, *, write: bool) -> None:
        """Leave a group commit; the outermost exit writes the held events (``write``)."""
        with self._lock:
            self._batch_depth -= 1
            if self._batch_depth:
                return
            try:
                if self._sink is not None:
                    self._sink.release(write=write)
            finally:
                self._batch_owner = None
                if self._batch_waiters:
                    self._batch_idle.notify_all()

    def _wait_for_other_batch(self) -> None:
        """Block (the lock held) while another thread's group commit is open."""
        me = threading.get_ident()
        while self._batch_owner is not None and self._batch_owner != me:
            self._batch_waiters += 1
            try:
                self._batch_idle.wait()
            finally:
                self._batch_waiters -= 1

    def close(self) -> None:
        """Flush, release the store's writer lock and refuse further appends; idempotent."""
        with self._lock:
            if self._batch_owner is not None:
                self._wait_for_other_batch()
            if self._closed:
                return
            if self._batch_depth:
                raise RuntimeError(f"session {self.id!r} cannot close inside its own batch()")
            if self._sink is not None:
                self._sink.close()  # may raise (a failed final flush): the session stays open
                self._sink = None
            self._closed = True

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Session({self.id!r}, {len(self._log)} events, nodes={len(self._state.nodes)})"


class _Batch:
    """The block of ``Session.batch()``: one per turn, so a plain context manager.

    A generator-based one would cost a generator and its frames on every use.
    """

    __slots__ = ("_session",)

    def __init__(self, session: Session) -> None:
        self._session = session

    def __enter__(self) -> Session:
        self._session._open_batch()
        return self._session

    def __exit__(self, *exc_info: object) -> None:
        # Written whether the block raised or not; an exception from the block propagates.
        self._session._close_batch(write=True)


def _registry(
    session_id: str, projections: Iterable[MessageProjection]
) -> dict[str, MessageProjection]:
    try:
        return projection_registry(projections)
    except ValueError as exc:
        raise SeedRejected(str(exc), session_id=session_id) from None
