"""Google ADK sessions in an agentlog store: a ``BaseSessionService`` that never loses history.

``AgentlogSessionService(store=None)`` implements ADK's session-service contract on any
agentlog store. Each ADK session is an agentlog session whose events carry the ADK events
exactly, laid out so that agentlog's derived history is a provider-valid conversation
(``_adk_log``). ``append_event`` is one durable group commit; a writer holding an outdated
``Session`` object gets ADK's ``StaleSessionError`` and nothing is written. An ADK compaction
(``EventActions.compaction``) becomes an agentlog replace event citing the exact seqs it
shadows; ``get_session`` then returns the compaction instead of the events it covers, and does
not decode them.

Needs ``pip install 'agentlog[adk]'``. For ``adk web`` / ``adk api_server``, put
``from agentlog.adapters.adk import register_schemes; register_schemes()`` in the agents
directory's ``services.py`` and pass ``--session_service_uri=agentlog+sqlite:///sessions.db``.

Example:
    >>> import asyncio
    >>> import agentlog
    >>> from agentlog.adapters.adk import AgentlogSessionService
    >>> async def main() -> list[str]:
    ...     service = AgentlogSessionService(agentlog.open_store("memory:"))
    ...     session = await service.create_session(app_name="app", user_id="u", state={"k": 1})
    ...     again = await service.get_session(app_name="app", user_id="u", session_id=session.id)
    ...     await service.close()
    ...     return sorted(again.state)
    >>> asyncio.run(main())
    ['k']
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, Final

from agentlog.providers.base import require_extra

require_extra("google.adk", "adk")

from google.adk.errors import StaleSessionError  # noqa: E402
from google.adk.errors.already_exists_error import AlreadyExistsError  # noqa: E402
from google.adk.errors.session_not_found_error import SessionNotFoundError  # noqa: E402
from google.adk.events.event import Event as AdkEvent  # noqa: E402
from google.adk.sessions import BaseSessionService, State  # noqa: E402
from google.adk.sessions import Session as AdkSession  # noqa: E402
from google.adk.sessions.base_session_service import (  # noqa: E402
    GetSessionConfig,
    ListSessionsResponse,
)
from pydantic_core import to_jsonable_python  # noqa: E402

from agentlog.adapters._adk_codec import carried, classify, decode, event_payload  # noqa: E402
from agentlog.adapters._adk_log import (  # noqa: E402
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
from agentlog.adapters._backing_store import StoreArgument, resolve_store  # noqa: E402
from agentlog.errors import (  # noqa: E402
    SessionAlreadyExists,
    SessionLocked,
    SessionNotFound,
)
from agentlog.events import Event  # noqa: E402
from agentlog.session import Session  # noqa: E402
from agentlog.values import snapshot, thaw  # noqa: E402

__all__ = ["AgentlogSessionService", "register_schemes"]

OPEN_SESSIONS: Final = 64
"""Sessions kept open for writing at once; the least recently used one is closed beyond."""


class _Live:
    """A session open for writing, with the fold appending needs."""

    __slots__ = ("session", "trace")

    def __init__(self, session: Session) -> None:
        self.session = session
        self.trace = Trace.scan(session.events)


class AgentlogSessionService(BaseSessionService):
    """An ADK session service that stores every session as an agentlog session.

    Args:
        store: An agentlog ``Store``, a store URL or path, or ``None`` for the default embedded
            store (``agentlog.open_store()``). A store opened here is closed by ``close()``.

    Durability: ``create_session`` and ``append_event`` return once the session's events are
    durable; the ``app:`` and ``user:`` state an event sets is written right after it (a crash
    in between is repaired the next time the session is written). A session written here stays
    open for writing (agentlog's one writer per session) until it is one of the least recently
    used beyond ``OPEN_SESSIONS``, deleted, or the service is closed; another process that
    appends to it meanwhile gets ``StaleSessionError``. Reading never takes the writer lease.
    """

    def __init__(self, store: StoreArgument = None) -> None:
        self.store, self._owns_store = resolve_store(store)
        self._live: OrderedDict[str, _Live] = OrderedDict()
        self._lock = threading.RLock()

    # --- BaseSessionService --------------------------------------------------------------

    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> AdkSession:
        """Create a session, durably; its ``app:`` and ``user:`` state go to their scopes."""
        return await asyncio.to_thread(self._create, app_name, user_id, state, session_id)

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> AdkSession | None:
        """A session with its events (``config`` filters them), or ``None``."""
        return await asyncio.to_thread(self._get, app_name, user_id, session_id, config)

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        """The sessions of an app (or of one user), oldest update first, without events."""
        return await asyncio.to_thread(self._list, app_name, user_id)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Remove a session and every event of it (``Store.delete``); absent is not an error."""
        await asyncio.to_thread(self._delete, app_name, user_id, session_id)

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        """The ``user:`` state of a user in an app, keys without the prefix."""
        return await asyncio.to_thread(self._scoped, user_key(app_name, user_id))

    async def append_event(self, session: AdkSession, event: AdkEvent) -> AdkEvent:
        """Store an event durably and apply it to ``session`` (partial events are skipped).

        Raises:
            StaleSessionError: when ``session`` is older than the stored session; nothing is
                written.
            SessionNotFoundError: when the session does not exist.
        """
        if event.partial:
            return event
        self._apply_temp_state(session, event)
        event = self._trim_temp_delta_state(event)
        await asyncio.to_thread(self._append, session, event)
        return self._commit_event_to_session(session, event)

    async def flush(self) -> None:
        """Nothing is buffered: every event is durable when ``append_event`` returns."""

    async def close(self) -> None:
        """Close every open session, and the store if this service opened it."""
        await asyncio.to_thread(self._close)

    async def __aenter__(self) -> AgentlogSessionService:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    # --- the work, under the lock, in a worker thread -------------------------------------

    def _create(
        self, app: str, user: str, state: Mapping[str, Any] | None, session_id: str | None
    ) -> AdkSession:
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
        with self._lock:
            try:
                session = self.store.create(key)
            except SessionAlreadyExists as exc:
                raise AlreadyExistsError(f"Session with id {sid} already exists.") from exc
            live = self._remember(key, _Live(session))
            seq = self._write(live, [Spec(type=SESSION_RECORD, data=record, ignorable=True)])
            self._write_scoped(app, user, values, key, seq)
            return self._adk_session(app, user, sid, live.session, live.trace, {}, events=[])

    def _get(
        self, app: str, user: str, sid: str, config: GetSessionConfig | None
    ) -> AdkSession | None:
        with self._lock:
            key = session_key(app, user, sid)
            view = self._view(key)
            if view is None:
                return None
            session, trace = view
            carriers = list(visible_carriers(session))
            if config is not None and config.after_timestamp is not None:
                after = config.after_timestamp
                carriers = [c for c in carriers if _payload(c)["timestamp"] >= after]
            if config is not None and config.num_recent_events is not None:
                count = config.num_recent_events
                carriers = carriers[-count:] if count else []
            events = [self._decode(session, carrier) for carrier in carriers]
            return self._adk_session(app, user, sid, session, trace, {}, events=events)

    def _list(self, app: str, user: str | None) -> ListSessionsResponse:
        found: list[AdkSession] = []
        scoped: dict[str, dict[str, Any]] = {}  # each app and user state read once
        with self._lock:
            for info in self.store.list():
                parsed = parse_session_key(info.id)
                if parsed is None or parsed[0] != app or (user is not None and parsed[1] != user):
                    continue
                view = self._view(info.id)
                if view is not None:
                    found.append(self._adk_session(*parsed, *view, scoped, events=[]))
        found.sort(key=lambda s: (s.last_update_time, s.user_id, s.id))
        return ListSessionsResponse(sessions=found)

    def _delete(self, app: str, user: str, sid: str) -> None:
        key = session_key(app, user, sid)
        with self._lock:
            live = self._live.pop(key, None)
            if live is not None:
                live.session.close()
            with contextlib.suppress(SessionNotFound):
                self.store.delete(key)

    def _append(self, adk_session: AdkSession, event: AdkEvent) -> None:
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

    def _specs(self, live: _Live, payload: Mapping[str, Any], actions: Any) -> list[Spec]:
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
        for event in appended:
            live.trace.observe(event)
        return live.trace.revision

    def _write_scoped(
        self, app: str, user: str, delta: Mapping[str, Any], key: str, seq: int
    ) -> None:
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
        return session, Trace.scan(session.events)

    def _scoped(
        self, target: str, cache: dict[str, dict[str, Any]] | None = None
    ) -> dict[str, Any]:
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
        session: Session,
        trace: Trace,
        scoped: dict[str, dict[str, Any]],
        *,
        events: list[AdkEvent],
    ) -> AdkSession:
        """An ADK ``Session`` of a stored one: merged state, revision marker, ``events``."""
        state = _thawed(session_state(session.events))
        targets = ((State.APP_PREFIX, app_key(app)), (State.USER_PREFIX, user_key(app, user)))
        for prefix, target in targets:
            for name, value in self._scoped(target, scoped).items():
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

    def _close(self) -> None:
        with self._lock:
            while self._live:
                _, live = self._live.popitem()
                live.session.close()
            if self._owns_store:
                self.store.close()


def _payload(carrier: Event) -> Mapping[str, Any]:
    payload = carried(carrier.data)
    assert payload is not None  # visible_carriers yields carriers only
    return payload


def _thawed(state: Mapping[str, Any]) -> dict[str, Any]:
    return {key: thaw(value) for key, value in state.items()}


def _set_state(event: Event) -> Mapping[str, Any] | None:
    """The state delta an event of an ADK session sets (its creation's initial state too)."""
    if event.type == SESSION_RECORD:
        return event.data["state"]  # type: ignore[no-any-return]
    payload = carried(event.data)
    return (payload.get("actions") or {}).get("state_delta") if payload else None


# --- adk web / adk api_server ---------------------------------------------------------------

_SCHEMES: Final = (
    "agentlog",
    "agentlog+sqlite",
    "agentlog+jsonl",
    "agentlog+jsonl+zstd",
    "agentlog+memory",
    "agentlog+postgresql",
)
"""The ``--session_service_uri`` schemes ``register_schemes`` adds to ADK's registry."""


def _store_url(uri: str) -> str | None:
    """The agentlog store URL a service URI names (``None``: the default embedded store).

    ``agentlog+sqlite:///x.db`` names ``sqlite:///x.db``; plain ``agentlog:`` (or
    ``agentlog://``) names the default store.
    """
    scheme, _, rest = uri.partition(":")
    if scheme == "agentlog":
        return None
    return f"{scheme.removeprefix('agentlog+')}:{rest}"


def register_schemes() -> None:
    """Register the ``agentlog`` URI schemes with ADK's service registry.

    Call it from the agents directory's ``services.py`` so that ``adk web`` and
    ``adk api_server`` accept ``--session_service_uri=agentlog+sqlite:///sessions.db`` (or
    ``agentlog+jsonl:///dir``, ``agentlog+memory:``, ``agentlog:`` for the default store).
    """
    from google.adk.cli.service_registry import get_service_registry

    def factory(uri: str, **_: Any) -> AgentlogSessionService:
        return AgentlogSessionService(_store_url(uri))

    registry = get_service_registry()
    for scheme in _SCHEMES:
        registry.register_session_service(scheme, factory)
