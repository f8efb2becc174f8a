"""The async store contract mirrors the sync one: the same primitives, names and parameters."""

from __future__ import annotations

import inspect

from agentlog.stores.aio_base import AsyncBackend
from agentlog.stores.base import Backend
from agentlog.stores.postgres_aio import AsyncPostgresBackend


def test_every_async_primitive_is_a_backend_primitive_with_its_parameters() -> None:
    abstract = sorted(AsyncBackend.__abstractmethods__ - {"connect"})
    assert abstract == [
        "append",
        "close",
        "delete",
        "exists",
        "lease",
        "list",
        "list_page",
        "read",
    ]
    for name in abstract:
        sync = inspect.signature(getattr(Backend, name))
        asynchronous = inspect.signature(getattr(AsyncBackend, name))
        assert list(asynchronous.parameters) == list(sync.parameters), name
        assert inspect.iscoroutinefunction(getattr(AsyncPostgresBackend, name)), name
    connect = inspect.signature(AsyncBackend.connect)
    assert list(connect.parameters) == list(inspect.signature(Backend.from_url).parameters)
