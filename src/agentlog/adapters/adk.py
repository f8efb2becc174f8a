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

from typing import Any, Final

from agentlog.providers.base import require_extra

require_extra("google.adk", "adk")

from google.adk.events.event import Event as AdkEvent  # noqa: E402
from google.adk.sessions import BaseSessionService  # noqa: E402
from google.adk.sessions import Session as AdkSession  # noqa: E402
from google.adk.sessions.base_session_service import (  # noqa: E402
    GetSessionConfig,
    ListSessionsResponse,
)

from agentlog.adapters._adk_log import user_key  # noqa: E402
from agentlog.adapters._adk_sessions import AdkSessions  # noqa: E402
from agentlog.adapters._adk_worker import Worker  # noqa: E402
from agentlog.adapters._backing_store import StoreArgument, resolve_store  # noqa: E402

__all__ = ["AgentlogSessionService", "register_schemes"]


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
        self.sessions = AdkSessions(self.store)
        """The synchronous work, which the async methods run on the worker thread."""
        self._worker = Worker("agentlog-adk")

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
        return await self._worker.call(self.sessions.create, app_name, user_id, state, session_id)

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> AdkSession | None:
        """A session with its events (``config`` filters them), or ``None``."""
        return await self._worker.call(self.sessions.get, app_name, user_id, session_id, config)

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        """The sessions of an app (or of one user), oldest update first, without events."""
        return await self._worker.call(self.sessions.list, app_name, user_id)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        """Remove a session and every event of it (``Store.delete``); absent is not an error."""
        await self._worker.call(self.sessions.delete, app_name, user_id, session_id)

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        """The ``user:`` state of a user in an app, keys without the prefix."""
        return await self._worker.call(self.sessions.scoped, user_key(app_name, user_id))

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
        await self._worker.call(self.sessions.append, session, event)
        return self._commit_event_to_session(session, event)

    async def flush(self) -> None:
        """Nothing is buffered: every event is durable when ``append_event`` returns."""

    async def close(self) -> None:
        """Close every open session, and the store if this service opened it."""
        await self._worker.call(self._close)
        self._worker.close()

    async def __aenter__(self) -> AgentlogSessionService:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    def _close(self) -> None:
        self.sessions.close()
        if self._owns_store:
            self.store.close()


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
