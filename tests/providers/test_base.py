"""The provider base: identity checks, the default retry policy, optional extras."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

import agentlog.providers
from agentlog.loop import DEFAULT_RETRY_POLICY, Chunk, ModelRequest, ProviderError
from agentlog.providers import BaseProvider, OpenAIChat, base, require_extra


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


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8080/v1", "http://localhost:1234", "http://[::1]:99/x"]
)
def test_loopback_servers_are_allowed_while_model_requests_are_off(url: str) -> None:
    assert base.ALLOW_MODEL_REQUESTS is False  # tests/conftest.py
    base.check_model_request(url)


@pytest.mark.parametrize("url", ["https://api.openai.com/v1", "http://10.0.0.5:8000", None])
def test_other_servers_are_refused_while_model_requests_are_off(url: str | None) -> None:
    with pytest.raises(ProviderError, match=r"model requests to .* are disabled"):
        base.check_model_request(url)


def test_a_provider_refuses_a_remote_api_before_sending_anything() -> None:

    provider = OpenAIChat("gpt-4o-mini", api_key="sk-not-used")  # the default, remote API

    async def first_chunk() -> object:
        request = ModelRequest(provider="openai", model="gpt-4o-mini", messages=[])
        return await anext(aiter(provider.stream(request)))

    with pytest.raises(ProviderError, match=r"api\.openai\.com.* are disabled"):
        asyncio.run(first_chunk())


def test_model_requests_may_be_allowed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "ALLOW_MODEL_REQUESTS", True)
    base.check_model_request("https://api.anthropic.com")
