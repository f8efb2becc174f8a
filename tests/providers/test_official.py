"""The official-client provider base: the client's life, failure mapping, closing the stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agentlog.errors import ProviderError
from agentlog.loop import Chunk, ModelRequest
from agentlog.providers._official import ClientProvider, Translator


class Client:
    base_url = "http://127.0.0.1:9"  # an official client's attribute; loopback, never dialled

    def __init__(self) -> None:
        self.closed = False

    async def close(self) -> None:
        self.closed = True


class Response:
    """A client's async stream of events: yields ``events``, then raises ``fail`` if given."""

    def __init__(self, events: list[str], fail: Exception | None = None) -> None:
        self.events = events
        self.fail = fail
        self.closed = False

    async def _iterate(self) -> AsyncIterator[str]:
        for event in self.events:
            yield event
        if self.fail is not None:
            raise self.fail

    def __aiter__(self) -> AsyncIterator[str]:
        return self._iterate()

    async def close(self) -> None:
        self.closed = True


class Echo:
    def feed(self, event: Any) -> list[Chunk]:
        return [{"type": "text-delta", "index": 0, "text": str(event)}]

    def end(self) -> list[Chunk]:
        return [{"type": "finish", "reason": {"kind": "stop"}}]


class Mapped(Exception):
    pass


class EchoProvider(ClientProvider):
    def __init__(self, response: Response, client: Any = None) -> None:
        self.response = response
        self.clients: list[Client] = []
        self.opened_with: list[Any] = []
        super().__init__("m", name="echo", client=client, new_client=self._create)

    def _create(self) -> Client:
        self.clients.append(Client())
        return self.clients[-1]

    async def _open(self, client: Any, request: ModelRequest) -> Any:
        self.opened_with.append(client)
        return self.response

    def _translator(self, request: ModelRequest) -> Translator:
        return Echo()

    def map_failure(self, exc: Exception) -> ProviderError | None:
        return ProviderError.of(str(exc), "SERVER") if isinstance(exc, Mapped) else None


REQUEST = ModelRequest(provider="echo", model="m", messages=[])


async def drain(provider: ClientProvider) -> list[Chunk]:
    return [chunk async for chunk in provider.stream(REQUEST)]


def test_an_owned_client_is_replaced_for_each_new_event_loop() -> None:
    provider = EchoProvider(Response(["a"]))
    asyncio.run(drain(provider))
    asyncio.run(drain(provider))
    assert len(provider.clients) == 2  # made at construction, then again for the second loop
    assert provider.opened_with == provider.clients

    async def twice() -> None:
        await drain(provider)
        await drain(provider)

    asyncio.run(twice())
    assert len(provider.clients) == 3  # one loop, one client


def test_a_client_passed_in_is_never_replaced_or_closed() -> None:
    given = Client()
    provider = EchoProvider(Response(["a"]), client=given)
    asyncio.run(drain(provider))
    asyncio.run(drain(provider))
    asyncio.run(provider.aclose())
    assert provider.clients == []
    assert provider.opened_with == [given, given]
    assert not given.closed


def test_aclose_closes_the_client_the_provider_made() -> None:
    provider = EchoProvider(Response([]))
    asyncio.run(provider.aclose())
    assert provider.clients[0].closed


def test_a_mapped_failure_mid_stream_is_a_provider_error_and_the_response_is_closed() -> None:
    response = Response(["a"], fail=Mapped("gone"))
    provider = EchoProvider(response)
    with pytest.raises(ProviderError, match="gone") as caught:
        asyncio.run(drain(provider))
    assert isinstance(caught.value.__cause__, Mapped)
    assert response.closed


def test_an_unknown_exception_passes_through_unchanged() -> None:
    response = Response([], fail=KeyError("a bug"))
    with pytest.raises(KeyError):
        asyncio.run(drain(EchoProvider(response)))
    assert response.closed


def test_the_translators_chunks_are_yielded_in_order() -> None:
    chunks = asyncio.run(drain(EchoProvider(Response(["a", "b"]))))
    assert chunks == [
        {"type": "text-delta", "index": 0, "text": "a"},
        {"type": "text-delta", "index": 0, "text": "b"},
        {"type": "finish", "reason": {"kind": "stop"}},
    ]
