"""The synchronous work of ``AgentlogSessionService``: ADK sessions read and written.

``AdkSessions`` does everything the ADK service promises, on the calling thread and under one
lock (the service runs it in a worker thread): sessions open for writing stay open in a small
LRU (agentlog's one writer per session), others are read through ``Store.inspect`` and never
leased. It raises ADK's own errors (``AlreadyExistsError``, ``SessionNotFoundError``,
``StaleSessionError``) so the service passes them through.
"""

from __future__ import annotations

import builtins
import contextlib
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, Final

from google.adk.errors import StaleSessionError
from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event as AdkEvent
from google.adk.sessions import Session as AdkSession
from google.adk.sessions import State
from google.adk.sessions.base_session_service import GetSessionConfig, ListSessionsResponse
from pydantic_core import to_jsonable_python

from agentlog.adapters._adk_codec import carried, classify, decode, event_payload
from agentlog.adapters._adk_log import (
    SESSION_RECORD,
    STATE,
    Spec,
    Trace,
    app_key,
    compaction_span,
    compaction_spec,
    parse_session_key,
    plan,
    scoped_delta,
    session_key,
    session_state,
    user_key,
    visible_carriers,
)
from agentlog.adapters._adk_read import ColdView, adk_events, filtered
from agentlog.adapters._adk_read import read as read_cold
from agentlog.errors import (
    ConcurrentWriteError,
    SessionAlreadyExists,
    SessionLocked,
    SessionNotFound,
    StoreError,
)
from agentlog.events import Event
from agentlog.session import Session
from agentlog.stores import Store
from agentlog.stores.restore import collector_paused
from agentlog.values import snapshot, thaw

__all__ = ["OPEN_SESSIONS", "AdkSessions"]

OPEN_SESSIONS: Final = 64
"""Sessions kept open for writing at once; the least recently used one is closed beyond."""


class _Live:
    """A session open for writing, with the fold appending needs."""

    __slots__ = ("session", "trace")

    def __init__(self, session: Session) -> None:
        self.session = session
        self.trace = Trace.scan(session.events)


class AdkSessions:
    """ADK sessions in one agentlog store, synchronously (see the module docstring).

    Args:
        store: The store; ``close()`` leaves it open.
    """

    def __init__(self, store: Store) -> None:
        self.store = store
        self._live: OrderedDict[str, _Live] = OrderedDict()
        self._lock = threading.RLock()

    def create(
        self, app: str, user: str, state: Mapping[str, Any] | None, session_id: str | None
    ) -> AdkSession:
        """``create_session``: the session record, then its ``app:`` / ``user:`` state."""
        sid = (session_id or "").strip() or str(uuid.uuid4())
        key = session_key(app, user, sid)
        values = to_jsonable_python(dict(state or {}), serialize_unknown=True)
        now = time.time()
        record = {
            "appName": app,
            "userId": user,
            "sessionId": sid,
            "state": values,
            "createTime": now,
        }
        snapshot(record)  # a state agentlog cannot hold is refused before the session exists
        with self._lock:
            try:
                session = self.store.create(key)
            except SessionAlreadyExists as exc:
                raise AlreadyExistsError(f"Session with id {sid} already exists.") from exc
            live = self._remember(key, _Live(session))
            seq = self._write(live, [Spec(type=SESSION_RECORD, data=record, ignorable=True)])
            self._write_scoped(app, user, values, key, seq)
            state = _thawed(session_state(live.session.events))
            return self._adk_session(app, user, sid, state, live.trace, {}, events=[])

    def get(
        self, app: str, user: str, sid: str, config: GetSessionConfig | None
    ) -> AdkSession | None:
        with self._lock:
            key = session_key(app, user, sid)
            # Many small acyclic objects: the collector would walk the whole heap again and
            # again (most of the time of a long session's read) and find nothing to free.
            with collector_paused():
                if key not in self._live:
                    try:
                        cold = read_cold(self.store, key)
                    except SessionNotFound:
                        return None
                    if cold is not None:
                        return self._cold_session(app, user, sid, cold, config)
                view = self._view(key)
                if view is None:
                    return None
                session, trace = view
                carriers = filtered(list(visible_carriers(session)), config)
                events = [self._decode(session, carrier) for carrier in carriers]
                state = _thawed(session_state(session.events))
                return self._adk_session(app, user, sid, state, trace, {}, events=events)

    def _cold_session(
        self, app: str, user: str, sid: str, cold: ColdView, config: GetSessionConfig | None
    ) -> AdkSession:
        """``get`` of a session read with ``_adk_read`` (its plain events decoded in place)."""
        events = adk_events(cold, config)
        trace = Trace()
        trace.revision, trace.updated = cold.revision, cold.updated
        state = _thawed(cold.state)  # the events' deltas hold the same values
        return self._adk_session(app, user, sid, state, trace, {}, events=events)

    def list(self, app: str, user: str | None) -> ListSessionsResponse:
        found: builtins.list[AdkSession] = []
        scoped: dict[str, dict[str, Any]] = {}  # each app and user state read once
        with self._lock:
            for info in self.store.list():
                parsed = parse_session_key(info.id)
                if parsed is None or parsed[0] != app or (user is not None and parsed[1] != user):
                    continue
                view = self._view(info.id)
                if view is not None:
                    session, trace = view
                    state = _thawed(session_state(session.events))
                    found.append(self._adk_session(*parsed, state, trace, scoped, events=[]))
        found.sort(key=lambda s: (s.last_update_time, s.user_id, s.id))
        return ListSessionsResponse(sessions=found)

    def delete(self, app: str, user: str, sid: str) -> None:
        key = session_key(app, user, sid)
        with self._lock:
            live = self._live.pop(key, None)
            if live is not None:
                live.session.close()
            with contextlib.suppress(SessionNotFound):
                self.store.delete(key)

    def append(self, adk_session: AdkSession, event: AdkEvent) -> None:
        app, user = adk_session.app_name, adk_session.user_id
        key = session_key(app, user, adk_session.id)
        with self._lock:
            live = self._writable(key, adk_session.id)
            marker = adk_session._storage_update_marker
            stale = (
                marker != str(live.trace.revision)
                if marker is not None
                else adk_session.last_update_time < live.trace.updated
            )
            if stale:
                raise StaleSessionError(
                    f"Session {adk_session.id} was updated since it was read "
                    "(the stored session has newer events); reload it and retry."
                )
            payload = event_payload(event)
            actions = payload.get("actions") or {}
            specs = self._specs(live, payload, actions)
            seq = self._write(live, specs)
            delta = actions.get("state_delta") or {}
            self._write_scoped(app, user, delta, key, seq)
            adk_session._storage_update_marker = str(live.trace.revision)
            adk_session.last_update_time = event.timestamp

    def _specs(self, live: _Live, payload: Mapping[str, Any], actions: Any) -> builtins.list[Spec]:
        if "compaction" in actions:
            span = compaction_span(live.session, payload)
            if span is not None:
                state = session_state(live.session.events)
                state.update(scoped_delta(actions.get("state_delta") or {}, ""))
                return [compaction_spec(payload, span, state)]
            return plan(live.trace, live.session.events, payload, "other")
        return plan(live.trace, live.session.events, payload, classify(payload))

    # --- helpers --------------------------------------------------------------------------

    def _write(self, live: _Live, specs: Sequence[Spec]) -> int:
        """Append ``specs`` in one durable write; the seq of the event carrying the ADK data."""
        frozen = [snapshot(spec.data) for spec in specs]  # refuse bad data before writing any
        appended: list[Event] = []
        try:
            with live.session.batch():
                for spec, data in zip(specs, frozen, strict=True):
                    appended.append(
                        live.session.append(
                            spec.type,
                            data,
                            surface_op=spec.surface_op,
                            source_event_seqs=spec.sources,
                            ignorable=spec.ignorable,
                        )
                    )
        except StoreError as exc:
            # The session now holds events its store refused: never write through it again.
            for key, held in list(self._live.items()):
                if held is live:
                    del self._live[key]
            if isinstance(exc, ConcurrentWriteError):
                raise StaleSessionError(
                    f"{live.session.id} was written by another process meanwhile; reload the "
                    "session and retry"
                ) from exc
            raise
        for event in appended:
            live.trace.observe(event)
        return live.trace.revision

    def _write_scoped(
        self, app: str, user: str, delta: Mapping[str, Any], key: str, seq: int
    ) -> None:
        if not delta:
            return  # most events set no state
        for scope, target in (("app:", app_key(app)), ("user:", user_key(app, user))):
            values = scoped_delta(delta, scope)
            if values:
                live = self._writable_scope(target)
                data = {"delta": values, "source": [key, seq]}
                self._write(live, [Spec(type=STATE, data=data, ignorable=True)])

    def _writable(self, key: str, sid: str) -> _Live:
        live = self._live.get(key)
        if live is None:
            try:
                session = self.store.open(key)
            except SessionNotFound as exc:
                raise SessionNotFoundError(f"Session {sid} not found.") from exc
            except SessionLocked as exc:
                raise StaleSessionError(
                    f"Session {sid} is being written by another process (agentlog allows one "
                    "writer per session); retry once it is released."
                ) from exc
            live = self._remember(key, _Live(session))
            self._repair_scoped(key, live)
        self._live.move_to_end(key)
        return live

    def _writable_scope(self, target: str) -> _Live:
        live = self._live.get(target)
        if live is None:
            try:
                session = self.store.open(target)
            except SessionNotFound:
                session = self.store.create(target)
            live = self._remember(target, _Live(session))
        self._live.move_to_end(target)
        return live

    def _remember(self, key: str, live: _Live) -> _Live:
        self._live[key] = live
        while len(self._live) > OPEN_SESSIONS:
            _, evicted = self._live.popitem(last=False)
            evicted.session.close()
        return live

    def _repair_scoped(self, key: str, live: _Live) -> None:
        """Write the ``app:`` / ``user:`` state a crash kept from reaching its scope."""
        parsed = parse_session_key(key)
        if parsed is None:
            return
        app, user, _ = parsed
        for scope, target in (("app:", app_key(app)), ("user:", user_key(app, user))):
            view = self._view(target)
            applied = -1
            if view is not None:
                for event in view[0].events:
                    source = event.data.get("source") if event.type == STATE else None
                    if source is not None and source[0] == key:
                        applied = max(applied, source[1])
            for event in live.session.events[applied + 1 :]:
                delta = _set_state(event)
                if delta and scoped_delta(delta, scope):
                    self._write_scoped_one(scope, target, delta, key, event.seq)

    def _write_scoped_one(
        self, scope: str, target: str, delta: Mapping[str, Any], key: str, seq: int
    ) -> None:
        live = self._writable_scope(target)
        data = {"delta": scoped_delta(delta, scope), "source": [key, seq]}
        self._write(live, [Spec(type=STATE, data=data, ignorable=True)])

    def _view(self, key: str) -> tuple[Session, Trace] | None:
        """A session for reading: the open one, or a read-only view; ``None`` if absent."""
        live = self._live.get(key)
        if live is not None:
            return live.session, live.trace
        try:
            session = self.store.inspect(key)
        except SessionNotFound:
            return None
        return session, Trace.revision_of(session.events)

    def scoped(self, target: str, cache: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
        if cache is not None and target in cache:
            return cache[target]
        with self._lock:
            view = self._view(target)
            state: dict[str, Any] = {}
            if view is not None:
                for event in view[0].events:
                    if event.type == STATE:
                        state.update(event.data["delta"])
            state = _thawed(state)
            if cache is not None:
                cache[target] = state
            return state

    def _adk_session(
        self,
        app: str,
        user: str,
        sid: str,
        state: dict[str, Any],
        trace: Trace,
        scoped: dict[str, dict[str, Any]],
        *,
        events: builtins.list[AdkEvent],
    ) -> AdkSession:
        """An ADK ``Session``: its own ``state`` with the app and user state, ``events``.

        Its revision marker and update time are those of ``trace``.
        """
        targets = ((State.APP_PREFIX, app_key(app)), (State.USER_PREFIX, user_key(app, user)))
        for prefix, target in targets:
            for name, value in self.scoped(target, scoped).items():
                state[prefix + name] = value
        adk = AdkSession(
            app_name=app,
            user_id=user,
            id=sid,
            state=state,
            events=events,
            last_update_time=trace.updated,
        )
        adk._storage_update_marker = str(trace.revision)
        return adk

    def _decode(self, session: Session, carrier: Event) -> AdkEvent:
        def block(offset: int, index: int) -> Mapping[str, Any]:
            source = session.event_at(carrier.seq + offset)
            message = source.data if source.type == "user/message" else source.data["message"]
            return message["content"][index]  # type: ignore[no-any-return]

        return decode(carrier.data, block)

    def close(self) -> None:
        """Close every session this object holds open (not the store)."""
        with self._lock:
            while self._live:
                _, live = self._live.popitem()
                live.session.close()


def _thawed(state: Mapping[str, Any]) -> dict[str, Any]:
    return {key: thaw(value) for key, value in state.items()}


def _set_state(event: Event) -> Mapping[str, Any] | None:
    """The state delta an event of an ADK session sets (its creation's initial state too)."""
    if event.type == SESSION_RECORD:
        return event.data["state"]  # type: ignore[no-any-return]
    payload = carried(event.data)
    return (payload.get("actions") or {}).get("state_delta") if payload else None
