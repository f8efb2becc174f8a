"""What every provider shares: its identity, its retry policy and its optional dependency.

A provider implements the loop's ``agentlog.loop.model.Provider`` protocol; ``BaseProvider`` is
the ABC agentlog's own providers subclass (one module each beside this one: ``scripted``,
``openai``, ``anthropic``). Retries belong to the loop, not to the provider's client
(DESIGN.md, Public API): every provider carries the default policy of spec/plugins.md §4.9
unless given another, and creates its official client with ``max_retries=0``.
"""

from __future__ import annotations

import importlib
import ipaddress
import os
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Mapping
from types import ModuleType
from urllib.parse import urlsplit

from agentlog.errors import ProviderError
from agentlog.loop.model import DEFAULT_RETRY_POLICY, Chunk, ModelRequest, RetryPolicy

__all__ = ["ALLOW_MODEL_REQUESTS", "BaseProvider", "check_model_request", "require_extra"]

ALLOW_MODEL_REQUESTS: bool = os.environ.get("AGENTLOG_ALLOW_MODEL_REQUESTS", "1") != "0"
"""Whether providers may send requests to model servers off this machine.

Test suites set it to ``False`` (as pydantic-ai's ``ALLOW_MODEL_REQUESTS``), so a test can never
reach a real, paid model by mistake: a request to anything but a loopback address then fails
before it is sent. ``AGENTLOG_ALLOW_MODEL_REQUESTS=0`` sets it for child processes too.
"""


class BaseProvider(ABC):
    """A model provider: a name, a default model, a retry policy and ``stream()``.

    Args:
        model: The model requests go to.
        name: The provider id logged in request headers.
        retry_policy: How the loop retries failures (``None``: never).
        context_windows: Known context windows in tokens, by model.
    """

    def __init__(
        self,
        model: str,
        *,
        name: str,
        retry_policy: RetryPolicy | None = DEFAULT_RETRY_POLICY,
        context_windows: Mapping[str, int] | None = None,
    ) -> None:
        if not isinstance(model, str) or not model:
            raise ValueError(f"model must be a non-empty string, got {model!r}")
        if not isinstance(name, str) or not name:
            raise ValueError(f"provider name must be a non-empty string, got {name!r}")
        self._model = model
        self._name = name
        self._retry_policy = retry_policy
        self._context_windows = dict(context_windows or {})

    @property
    def name(self) -> str:
        """The provider id recorded in request headers."""
        return self._name

    @property
    def model(self) -> str:
        """The model requests go to unless the caller names another."""
        return self._model

    @property
    def retry_policy(self) -> RetryPolicy | None:
        """How the loop retries this provider's failures."""
        return self._retry_policy

    def context_window(self, model: str) -> int | None:
        """The model's context window in tokens, when known."""
        return self._context_windows.get(model)

    @abstractmethod
    def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        """Send ``request`` and yield its chunks (``agentlog.loop.model``)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._model!r}, name={self._name!r})"


def require_extra(module: str, extra: str) -> ModuleType:
    """Import an optional dependency, or raise ``ImportError`` naming the extra to install."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{module!r} is not installed; install it with: pip install 'agentlog[{extra}]'"
        ) from exc


def check_model_request(url: str | None) -> None:
    """Refuse a request to a non-loopback server while ``ALLOW_MODEL_REQUESTS`` is false.

    Args:
        url: The server's base URL (``None``: the provider's default, a remote API).

    Raises:
        ProviderError: the request may not be sent (code ``UNKNOWN``; not retried).
    """
    if ALLOW_MODEL_REQUESTS or (url is not None and _is_loopback(url)):
        return
    raise ProviderError.of(
        f"model requests to {url or 'the default API'} are disabled "
        "(agentlog.providers.base.ALLOW_MODEL_REQUESTS is False; only loopback servers are "
        "allowed)",
        "UNKNOWN",
    )


def _is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname
    if host is None:
        return False
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
