"""Compaction configuration: dsh's defaults, keys and error texts (spec/plugins.md §2.6).

``CompactionConfig.from_mapping`` reads dsh's camelCase ``BasicCompactionConfig``; every
refusal is a ``CompactionConfigError`` whose text is dsh's, prefixed ``BasicCompactionConfig:``.
Scenario 20: invalid keys and combinations fail at load; a retained tail too large for a route
fails only when that route's window is known (``CompactionPolicy.spec``).
"""

from __future__ import annotations

from typing import Any

import pytest

from agentlog.errors import CompactionConfigError
from agentlog.plugins.compaction import (
    CompactionConfig,
    CompactionPolicy,
    CompactSpec,
    ModelPolicy,
)


def refusal(raw: dict[str, Any]) -> CompactionConfigError:
    """The error ``from_mapping(raw)`` raises."""
    with pytest.raises(CompactionConfigError) as caught:
        CompactionConfig.from_mapping(raw)
    return caught.value


# --- defaults and reading ------------------------------------------------------------------


def test_defaults_are_dsh_s() -> None:
    config = CompactionConfig.from_mapping({})
    policy = config.policy
    assert (policy.threshold_ratio, policy.retained_ratio, policy.max_tokens) == (0.8, 0.16, 8192)
    assert (policy.compaction_retries, policy.max_overflow_retries) == (1, 1)
    assert (policy.retain_ratio, policy.retain_tokens) == (None, None)
    assert (policy.summarization_provider, policy.summarization_model) == ("", "")
    assert config.auto is True
    assert config.model_policies == ()
    assert config == CompactionConfig()


def test_from_mapping_reads_every_camel_case_key() -> None:
    config = CompactionConfig.from_mapping(
        {
            "thresholdRatio": 0.9,
            "retainTokens": 4000,
            "summarizationProvider": "deepseek",
            "summarizationModel": "deepseek-chat",
            "maxTokens": 2048,
            "compactionRetries": 0,
            "maxOverflowRetries": 3,
            "modelPolicies": [{"provider": "openai", "model": "gpt-4o", "retainRatio": 0.1}],
            "auto": False,
        }
    )
    assert config.policy == CompactionPolicy(
        threshold_ratio=0.9,
        retain_tokens=4000,
        summarization_provider="deepseek",
        summarization_model="deepseek-chat",
        max_tokens=2048,
        compaction_retries=0,
        max_overflow_retries=3,
    )
    assert config.model_policies == (
        ModelPolicy(provider="openai", model="gpt-4o", settings={"retain_ratio": 0.1}),
    )
    assert config.auto is False


def test_the_docstring_example() -> None:
    config = CompactionConfig.from_mapping({"thresholdRatio": 0.75})
    spec = config.policy_for("deepseek", "chat").spec(128_000)
    assert spec == CompactSpec(threshold_tokens=96_000, retain_tokens=20_480)


# --- refusals at load ----------------------------------------------------------------------


def test_an_unknown_key_is_refused() -> None:
    assert str(refusal({"threshold": 0.5})) == 'BasicCompactionConfig: unknown key "threshold"'


def test_an_unknown_key_in_a_model_policy_is_refused() -> None:
    """``auto`` and ``modelPolicies`` are configuration keys, not policy keys."""
    entry = {"provider": "deepseek", "model": "deepseek-chat", "auto": False}
    assert str(refusal({"modelPolicies": [entry]})) == 'BasicCompactionConfig: unknown key "auto"'


@pytest.mark.parametrize("key", ["thresholdRatio", "retainRatio"])
@pytest.mark.parametrize("value", [0, -0.5, 1.01, "0.5", True])
def test_ratios_must_be_in_zero_to_one(key: str, value: Any) -> None:
    assert str(refusal({key: value})) == f"BasicCompactionConfig: {key} must be a number in (0, 1]"


def test_a_ratio_may_be_exactly_one() -> None:
    assert CompactionConfig.from_mapping({"thresholdRatio": 1}).policy.threshold_ratio == 1


def test_retain_ratio_and_retain_tokens_are_mutually_exclusive() -> None:
    assert str(refusal({"retainRatio": 0.1, "retainTokens": 100})) == (
        "BasicCompactionConfig: retainRatio and retainTokens are mutually exclusive"
    )


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        (
            {"retainRatio": 0.8},
            "retainRatio (0.8) must be less than the resolved thresholdRatio (0.8)",
        ),
        (
            {"thresholdRatio": 0.5, "retainRatio": 0.75},
            "retainRatio (0.75) must be less than the resolved thresholdRatio (0.5)",
        ),
        (
            {"thresholdRatio": 0.15},
            "retainRatio (0.16) must be less than the resolved thresholdRatio (0.15)",
        ),
        ({"retainRatio": 1}, "retainRatio (1) must be less than the resolved thresholdRatio (0.8)"),
    ],
)
def test_the_retained_ratio_must_be_below_the_threshold(raw: dict[str, Any], text: str) -> None:
    """The default 0.16 counts too: ``thresholdRatio`` alone may not go below it."""
    assert str(refusal(raw)) == f"BasicCompactionConfig: {text}"


def test_retain_tokens_are_not_checked_against_a_ratio() -> None:
    """An absolute budget needs a context window to compare with (``spec``)."""
    policy = CompactionConfig.from_mapping({"thresholdRatio": 0.1, "retainTokens": 10**9}).policy
    assert policy.retain_tokens == 10**9


@pytest.mark.parametrize(
    "raw",
    [
        {"summarizationProvider": "deepseek"},
        {"summarizationModel": "deepseek-chat"},
        {"summarizationProvider": "deepseek", "summarizationModel": ""},
        {"summarizationProvider": 7, "summarizationModel": 8},
    ],
)
def test_the_summarization_target_is_a_pair(raw: dict[str, Any]) -> None:
    assert str(refusal(raw)) == (
        "BasicCompactionConfig: summarizationProvider and summarizationModel must be set "
        "together as an empty or non-empty pair"
    )


@pytest.mark.parametrize(
    ("key", "value", "text"),
    [
        ("maxTokens", 0, "maxTokens must be a positive integer"),
        ("maxTokens", 1.5, "maxTokens must be a positive integer"),
        ("retainTokens", -1, "retainTokens must be a non-negative integer"),
        ("retainTokens", True, "retainTokens must be a non-negative integer"),
        ("compactionRetries", -1, "compactionRetries must be a non-negative integer"),
        ("compactionRetries", "1", "compactionRetries must be a non-negative integer"),
        ("maxOverflowRetries", -1, "maxOverflowRetries must be a non-negative integer"),
    ],
)
def test_counts_must_be_integers_in_range(key: str, value: Any, text: str) -> None:
    assert str(refusal({key: value})) == f"BasicCompactionConfig: {text}"


def test_zero_counts_are_allowed_where_non_negative() -> None:
    policy = CompactionConfig.from_mapping(
        {"retainTokens": 0, "compactionRetries": 0, "maxOverflowRetries": 0}
    ).policy
    zeros = (policy.retain_tokens, policy.compaction_retries, policy.max_overflow_retries)
    assert zeros == (0, 0, 0)


def test_integral_floats_read_from_json_count_as_integers() -> None:
    policy = CompactionConfig.from_mapping({"maxTokens": 8192.0, "retainTokens": 100.0}).policy
    assert (policy.max_tokens, policy.retain_tokens) == (8192, 100)


def test_auto_must_be_a_boolean() -> None:
    assert str(refusal({"auto": "yes"})) == "BasicCompactionConfig: auto must be a boolean"


def test_a_duplicate_model_policy_is_refused() -> None:
    entry = {"provider": "deepseek", "model": "deepseek-chat"}
    assert str(refusal({"modelPolicies": [entry, {**entry, "maxTokens": 100}]})) == (
        "BasicCompactionConfig: duplicate model policy for deepseek/deepseek-chat"
    )


@pytest.mark.parametrize(
    "entry",
    [{"provider": "deepseek"}, {"provider": "", "model": "m"}, {"provider": "p", "model": 4}],
)
def test_a_model_policy_names_its_route_with_non_empty_strings(entry: dict[str, Any]) -> None:
    assert str(refusal({"modelPolicies": [entry]})) == (
        "BasicCompactionConfig: model policy provider and model must be non-empty strings"
    )


def test_model_policies_must_be_objects() -> None:
    assert str(refusal({"modelPolicies": ["deepseek/deepseek-chat"]})) == (
        "BasicCompactionConfig: modelPolicies entries must be objects"
    )


def test_a_model_policy_that_breaks_the_merged_policy_fails_at_load() -> None:
    """The override is validated merged over the defaults, not when its route is first used."""
    entry = {"provider": "deepseek", "model": "deepseek-chat", "thresholdRatio": 0.1}
    assert str(refusal({"modelPolicies": [entry]})) == (
        "BasicCompactionConfig: retainRatio (0.16) must be less than the resolved "
        "thresholdRatio (0.1)"
    )


def test_a_model_policy_may_not_set_both_retention_fields() -> None:
    entry = {"provider": "p", "model": "m", "retainRatio": 0.1, "retainTokens": 10}
    assert str(refusal({"modelPolicies": [entry]})) == (
        "BasicCompactionConfig: retainRatio and retainTokens are mutually exclusive"
    )


# --- model policies ------------------------------------------------------------------------


def test_an_exact_route_gets_its_override_merged_over_the_defaults() -> None:
    config = CompactionConfig.from_mapping(
        {
            "maxTokens": 4096,
            "modelPolicies": [
                {"provider": "deepseek", "model": "deepseek-chat", "thresholdRatio": 0.5}
            ],
        }
    )
    policy = config.policy_for("deepseek", "deepseek-chat")
    assert (policy.threshold_ratio, policy.max_tokens) == (0.5, 4096)
    assert config.policy_for("deepseek", "deepseek-reasoner") is config.policy
    assert config.policy_for("other", "deepseek-chat") is config.policy


def test_an_override_without_retention_inherits_the_retention_choice() -> None:
    config = CompactionConfig.from_mapping(
        {"retainTokens": 500, "modelPolicies": [{"provider": "p", "model": "m", "maxTokens": 10}]}
    )
    assert config.policy_for("p", "m").retain_tokens == 500


@pytest.mark.parametrize(
    ("defaults", "override", "retention"),
    [
        ({"retainTokens": 500}, {"retainRatio": 0.1}, (0.1, None)),
        ({"retainRatio": 0.1}, {"retainTokens": 500}, (None, 500)),
    ],
)
def test_an_override_that_sets_either_retention_field_replaces_the_inherited_choice(
    defaults: dict[str, Any], override: dict[str, Any], retention: tuple[Any, Any]
) -> None:
    entry = {"provider": "p", "model": "m", **override}
    config = CompactionConfig.from_mapping({**defaults, "modelPolicies": [entry]})
    policy = config.policy_for("p", "m")
    assert (policy.retain_ratio, policy.retain_tokens) == retention


def test_model_policies_can_be_built_directly_with_field_names() -> None:
    config = CompactionConfig(
        policy=CompactionPolicy(retain_tokens=100),
        model_policies=(ModelPolicy(provider="p", model="m", settings={"retain_ratio": 0.2}),),
    )
    assert config.policy_for("p", "m").spec(1000) == CompactSpec(
        threshold_tokens=800, retain_tokens=200
    )


# --- budgets for a context window ----------------------------------------------------------


@pytest.mark.parametrize(
    ("window", "threshold", "retain"),
    [(1000, 800, 160), (999, 799, 159), (128_000, 102_400, 20_480), (7, 5, 1)],
)
def test_budgets_are_floored_shares_of_the_window(window: int, threshold: int, retain: int) -> None:
    assert CompactionPolicy().spec(window) == CompactSpec(
        threshold_tokens=threshold, retain_tokens=retain
    )


def test_an_absolute_retain_budget_is_used_as_is() -> None:
    spec = CompactionPolicy(retain_tokens=300).spec(1000)
    assert spec == CompactSpec(threshold_tokens=800, retain_tokens=300)


@pytest.mark.parametrize("window", [0, -1, 1.5, True, None])
def test_the_window_must_be_a_positive_integer(window: Any) -> None:
    with pytest.raises(CompactionConfigError) as caught:
        CompactionPolicy().spec(window, "deepseek/deepseek-chat")
    shown = {0: "0", -1: "-1", 1.5: "1.5", True: "True", None: "None"}[window]
    assert str(caught.value) == (
        f"BasicCompactionConfig: contextWindow ({shown}) must be a positive integer"
    )
    assert caught.value.target_key == "deepseek/deepseek-chat"


def test_an_integral_float_window_is_a_positive_integer() -> None:
    assert CompactionPolicy().spec(1000.0) == CompactSpec(  # type: ignore[arg-type]  # JSON number
        threshold_tokens=800, retain_tokens=160
    )


def test_retain_tokens_must_be_below_the_threshold_of_the_route() -> None:
    """Scenario 20: fails only when that route is measured, naming it in ``target_key``."""
    policy = CompactionConfig.from_mapping({"retainTokens": 800}).policy
    assert policy.spec(1010).retain_tokens == 800  # below the threshold 808 of a larger window
    with pytest.raises(CompactionConfigError) as caught:
        policy.spec(1000, "deepseek/deepseek-chat")
    assert str(caught.value) == (
        "BasicCompactionConfig: deepseek/deepseek-chat retainTokens (800) must be less than "
        "threshold tokens 800"
    )
    assert caught.value.target_key == "deepseek/deepseek-chat"


def test_a_tiny_window_floors_both_budgets_to_zero_and_fails() -> None:
    with pytest.raises(CompactionConfigError) as caught:
        CompactionPolicy().spec(1, "p/m")
    assert str(caught.value) == (
        "BasicCompactionConfig: p/m retainTokens (0) must be less than threshold tokens 0"
    )
    assert caught.value.target_key == "p/m"


def test_errors_at_load_name_no_route() -> None:
    assert refusal({"threshold": 1}).target_key is None


@pytest.mark.parametrize(
    "key", ["retainRatio", "retainTokens", "summarizationProvider", "maxTokens"]
)
def test_an_explicit_null_is_refused_rather_than_read_as_the_default(key: str) -> None:
    assert str(refusal({key: None})) == (
        f"BasicCompactionConfig: {key} must not be null (leave it out for the default)"
    )
