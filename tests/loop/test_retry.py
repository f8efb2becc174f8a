"""The retry decision of spec/plugins.md §4.9 as a pure function."""

from __future__ import annotations

import pytest

from agentlog.loop import DEFAULT_RETRY_POLICY, RetryPolicy
from agentlog.loop.retry import retry_plan

SERVER = {"message": "busy", "code": "SERVER"}


@pytest.mark.parametrize(("previous", "delay"), [(0, 500), (1, 1000), (4, 8000)])
def test_backoff_doubles_from_the_initial_delay(previous: int, delay: int) -> None:
    plan = retry_plan(DEFAULT_RETRY_POLICY, SERVER, previous, rand=lambda: 0.5)
    assert plan is not None
    assert (plan.retry, plan.delay_ms, plan.max_retries) == (previous + 1, delay, 5)


def test_the_delay_is_capped_and_jittered() -> None:
    policy = RetryPolicy(max_retries=20)
    assert retry_plan(policy, SERVER, 10, rand=lambda: 0.5).delay_ms == 10_000  # type: ignore[union-attr]
    assert retry_plan(policy, SERVER, 0, rand=lambda: 0.0).delay_ms == 450  # type: ignore[union-attr]
    assert retry_plan(policy, SERVER, 0, rand=lambda: 0.999).delay_ms == 550  # type: ignore[union-attr]
    assert retry_plan(policy, SERVER, 10, rand=lambda: 0.999).delay_ms == 10_000  # type: ignore[union-attr]


def test_normal_mode_stops_at_the_budget_and_at_unlisted_codes() -> None:
    assert retry_plan(DEFAULT_RETRY_POLICY, SERVER, 5) is None
    assert retry_plan(DEFAULT_RETRY_POLICY, {"message": "x", "code": "BAD_REQUEST"}, 0) is None
    assert retry_plan(None, SERVER, 0) is None


def test_retry_after_is_used_when_within_the_cap() -> None:
    failure = {**SERVER, "providerRetryAfterMs": 2500}
    assert retry_plan(DEFAULT_RETRY_POLICY, failure, 0).delay_ms == 2500  # type: ignore[union-attr]
    too_long = {**SERVER, "providerRetryAfterMs": 20_000}
    assert retry_plan(DEFAULT_RETRY_POLICY, too_long, 0) is None


def test_always_mode_retries_everything_with_its_own_backoff() -> None:
    policy = RetryPolicy(mode="always")
    failure = {"message": "x", "code": "BAD_REQUEST", "providerRetryAfterMs": 20_000}
    plan = retry_plan(policy, failure, 50, rand=lambda: 0.5)
    assert plan is not None
    assert (plan.retry, plan.delay_ms, plan.max_retries) == (51, 10_000, None)
