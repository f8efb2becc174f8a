"""The model-call contract: the default retry policy, failures, requests."""

from __future__ import annotations

import asyncio
import dataclasses
import pickle
import re
import typing
from pathlib import Path

import pytest

import agentlog.providers
from agentlog import Agent, Session
from agentlog.loop import DEFAULT_RETRY_POLICY, ErrorCode, ModelRequest, ProviderError, RetryPolicy
from agentlog.providers import Scripted


def test_the_default_retry_policy_is_the_specs() -> None:
    """spec/plugins.md §4.9: normal mode, 5 retries, 500 ms → 10 s, jitter 0.1."""
    assert (
        RetryPolicy(
            mode="normal",
            max_retries=5,
            retryable_codes=frozenset(
                {"EMPTY_RESPONSE", "RATE_LIMIT", "SERVER", "TIMEOUT", "TRANSPORT"}
            ),
            initial_delay_ms=500,
            max_delay_ms=10_000,
            jitter_ratio=0.1,
        )
        == DEFAULT_RETRY_POLICY
    )


def test_a_provider_error_carries_its_failure_and_pickles() -> None:
    error = ProviderError.of("slow down", "RATE_LIMIT", status=429, providerRetryAfterMs=2000)
    assert str(error) == "slow down"
    assert error.code == "RATE_LIMIT"
    assert error.failure == {
        "message": "slow down",
        "code": "RATE_LIMIT",
        "status": 429,
        "providerRetryAfterMs": 2000,
    }
    copy = pickle.loads(pickle.dumps(error))
    assert copy.failure == error.failure
    assert copy.code == "RATE_LIMIT"


def test_absent_failure_fields_are_left_out() -> None:
    assert ProviderError.of("gone", "TRANSPORT", status=None).failure == {
        "message": "gone",
        "code": "TRANSPORT",
    }


def test_a_request_is_a_frozen_value() -> None:
    request = ModelRequest(provider="scripted", model="m", messages=[])
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.model = "other"  # type: ignore[misc]  # the point of the test


def test_every_code_a_provider_maps_to_is_an_error_code() -> None:
    """§5.3 and the providers' mappings: CONTENT_FILTER is a code, not an UNKNOWN."""
    codes = set(typing.get_args(ErrorCode))
    providers = Path(agentlog.providers.__file__).parent
    mapped = {
        code
        for path in providers.glob("*.py")
        for code in re.findall(r'"([A-Z][A-Z_]{4,})"', path.read_text(encoding="utf-8"))
        if code not in {"DEFAULT_MAX_TOKENS", "ENVELOPE_KIND", "ENVELOPE_VERSION"}
        and "MODEL_REQUESTS" not in code
    }
    assert "CONTENT_FILTER" in mapped
    assert mapped <= codes, mapped - codes


def test_a_content_filter_stop_ends_the_turn_without_a_retry() -> None:
    refusal = ProviderError.of("the model refused", "CONTENT_FILTER")
    agent = Agent(Session.create("s"), Scripted([refusal, "never"]))
    result = asyncio.run(agent.run("hi"))
    assert result.reason == "error"
    assert result.error == {"message": "the model refused", "code": "CONTENT_FILTER"}
    assert not [e for e in result.events if e.type == "llm/retry"]
