"""What the providers built on an official client share: the client's life and the stream pump.

``OpenAIChat`` and ``Anthropic`` each wrap an official async client and translate one streamed
response into the chunks of ``agentlog.loop.model``. The mechanics around that translation are
the same for both, and live here:

* **The client.** A provider creates its client with the client's own retries off
  (``max_retries=0``: retries belong to the loop, spec/plugins.md §4.9); a client passed in is
  used as given. An HTTP connection pool belongs to the event loop that opened it, so a client
  the provider created is replaced when the provider is used from another event loop (as
  successive ``asyncio.run`` calls do); a client passed in is never replaced.
* **The pump.** ``stream()`` opens the response, feeds each event to a per-call translator,
  maps every failure the client raises to a ``ProviderError`` (``map_failure``), lets
  ``asyncio.CancelledError`` through and closes the HTTP response on every way out — so a
  cancelled call closes its connection (the contract of ``agentlog.loop.model``).
"""

from __future__ import annotations

import asyncio
import weakref
from abc import abstractmethod
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

from agentlog.errors import ProviderError
from agentlog.loop.model import DEFAULT_RETRY_POLICY, Chunk, ModelRequest, RetryPolicy
from agentlog.providers.base import BaseProvider, check_model_request

__all__ = ["ClientProvider", "Translator"]


class Translator(Protocol):
    """Turns one response's events into stream chunks (one instance per call)."""

    def feed(self, event: Any) -> list[Chunk]:
        """The chunks one wire event produces (possibly none)."""
        ...

    def end(self) -> list[Chunk]:
        """The closing chunks (usage, finish); raises ``ProviderError`` if the answer is cut."""
        ...


class ClientProvider(BaseProvider):
    """A provider over an official async client (``OpenAIChat``, ``Anthropic``).

    Args:
        model: The model requests go to.
        name: The provider id logged in request headers.
        client: A client to use as given, or ``None`` to create one with ``new_client``.
        new_client: Creates the provider's own client (retries off).
        retry_policy: How the loop retries failures.
        context_window: The model's context window in tokens, when known.
    """

    def __init__(
        self,
        model: str,
        *,
        name: str,
        client: Any,
        new_client: Callable[[], Any],
        retry_policy: RetryPolicy | None = DEFAULT_RETRY_POLICY,
        context_window: int | None = None,
    ) -> None:
        super().__init__(
            model,
            name=name,
            retry_policy=retry_policy,
            context_windows={model: context_window} if context_window is not None else None,
        )
        self._owned = client is None
        self._new_client = new_client
        # Created now, so a bad configuration (no API key) fails here rather than mid-turn.
        self._client = new_client() if client is None else client
        self._client_loop: weakref.ref[asyncio.AbstractEventLoop] | None = None

    @property
    def client(self) -> Any:
        """The official client requests go through."""
        return self._client

    def _client_for_this_loop(self) -> Any:
        if self._owned:
            loop = asyncio.get_running_loop()
            bound = self._client_loop() if self._client_loop is not None else None
            if bound is not loop:
                if self._client_loop is not None:
                    self._client = self._new_client()
                self._client_loop = weakref.ref(loop)
        return self._client

    async def aclose(self) -> None:
        """Close the client this provider created (a client passed in is the caller's)."""
        if self._owned:
            await self._client.close()

    @abstractmethod
    async def _open(self, client: Any, request: ModelRequest) -> Any:
        """Send ``request``; return the client's async stream of wire events."""

    @abstractmethod
    def _translator(self, request: ModelRequest) -> Translator:
        """A fresh translator for one call."""

    @abstractmethod
    def map_failure(self, exc: Exception) -> ProviderError | None:
        """The ``ProviderError`` for an exception the client raised, or ``None`` if unknown."""

    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        """Send ``request`` and yield its chunks (``agentlog.loop.model``).

        Raises:
            ProviderError: The call failed, or the stream ended before the answer finished.
        """
        client = self._client_for_this_loop()
        check_model_request(str(client.base_url))
        translator = self._translator(request)
        try:
            response = await self._open(client, request)
        except Exception as exc:
            failure = self.map_failure(exc)
            if failure is None:
                raise
            raise failure from exc
        try:
            events = response.__aiter__()
            while True:
                try:
                    event = await events.__anext__()
                except StopAsyncIteration:
                    break
                except Exception as exc:
                    failure = self.map_failure(exc)
                    if failure is None:
                        raise
                    raise failure from exc
                for chunk in translator.feed(event):
                    yield chunk
            for chunk in translator.end():
                yield chunk
        finally:
            await response.close()
