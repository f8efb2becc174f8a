"""Whether and when a failed model call is retried: the ``llm-retry`` policy as a pure function.

Implements the decision of spec/plugins.md §4.9 for one failure: no policy → no retry;
``normal`` retries the listed codes up to ``max_retries`` per step; ``always`` retries every
failure the loop's other recovery paths (context-overflow compaction, image offload) did not
take. The delay is the provider's ``Retry-After`` when it is positive and within
``max_delay_ms`` (a longer one ends a ``normal`` policy's retries; ``always`` waits its own
backoff instead), else ``min(initial · 2^(retry-1), max) · (1 − j + 2j·rand)``, capped at
``max``. The loop appends ``llm/retry`` before the wait and ``llm/retry-started`` after it.

Example:
    >>> from agentlog.loop.model import DEFAULT_RETRY_POLICY
    >>> plan = retry_plan(DEFAULT_RETRY_POLICY, {"message": "busy", "code": "SERVER"}, 2,
    ...                   rand=lambda: 0.5)
    >>> plan.retry, plan.delay_ms
    (3, 2000)
    >>> retry_plan(DEFAULT_RETRY_POLICY, {"message": "no", "code": "AUTHENTICATION"}, 0) is None
    True
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentlog.loop.model import RetryPolicy

__all__ = ["RetryPlan", "retry_plan"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryPlan:
    """A retry the policy allows: which one, and how long to wait first."""

    retry: int
    """1 for the first retry of the step."""
    delay_ms: int
    max_retries: int | None
    """The policy's budget (``normal`` mode only)."""


def retry_plan(
    policy: RetryPolicy | None,
    failure: Mapping[str, Any],
    previous: int,
    *,
    rand: Callable[[], float] = random.random,
) -> RetryPlan | None:
    """The retry ``policy`` grants after ``previous`` retries of this step, or ``None``.

    Args:
        policy: The provider's retry policy (``None``: never retry).
        failure: The ``LlmFailure`` (``code``, optional ``providerRetryAfterMs``).
        previous: Retries already made in this step.
        rand: A source of uniform numbers in ``[0, 1)`` for the jitter.
    """
    if policy is None:
        return None
    normal = policy.mode == "normal"
    if normal and (failure.get("code") not in policy.retryable_codes):
        return None
    if normal and previous >= policy.max_retries:
        return None
    retry = previous + 1
    after: Any = failure.get("providerRetryAfterMs")
    if type(after) in (int, float) and after > 0:
        if after <= policy.max_delay_ms:
            return RetryPlan(
                retry=retry, delay_ms=int(after), max_retries=policy.max_retries if normal else None
            )
        if normal:
            return None
    base = min(policy.initial_delay_ms * 2 ** (retry - 1), policy.max_delay_ms)
    jitter = policy.jitter_ratio
    delay = min(base * (1 - jitter + 2 * jitter * rand()), policy.max_delay_ms)
    return RetryPlan(
        retry=retry, delay_ms=round(delay), max_retries=policy.max_retries if normal else None
    )
