"""The provider base: identity checks, the default retry policy, optional extras."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

import agentlog.providers
from agentlog.loop import DEFAULT_RETRY_POLICY, Chunk, ModelRequest
from agentlog.providers import BaseProvider, require_extra


class Echo(BaseProvider):
    async def stream(self, request: ModelRequest) -> AsyncIterator[Chunk]:
        yield {"type": "finish", "reason": {"kind": "stop"}}


def test_a_provider_has_the_default_retry_policy_unless_given_another() -> None:
    provider = Echo("m1", name="echo", context_windows={"m1": 1000})
    assert provider.retry_policy is DEFAULT_RETRY_POLICY
    assert (provider.name, provider.model) == ("echo", "m1")
    assert provider.context_window("m1") == 1000
    assert provider.context_window("other") is None
    assert Echo("m1", name="echo", retry_policy=None).retry_policy is None


@pytest.mark.parametrize(("model", "name"), [("", "echo"), ("m", "")])
def test_a_provider_needs_a_model_and_a_name(model: str, name: str) -> None:
    with pytest.raises(ValueError, match="non-empty string"):
        Echo(model, name=name)


def test_a_missing_extra_names_what_to_install() -> None:
    with pytest.raises(ImportError, match=r"pip install 'agentlog\[nothing\]'"):
        require_extra("agentlog_no_such_module", "nothing")


def test_an_unknown_provider_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="NoSuchProvider"):
        _ = agentlog.providers.NoSuchProvider
