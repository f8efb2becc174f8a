"""Compaction policy: when it triggers, how much history it keeps, what it may spend.

Implements spec/plugins.md §2.6 (``BasicCompactionConfig``), with dsh's defaults and its error
texts, which name the configuration keys as dsh's files spell them (``thresholdRatio``,
``retainTokens``, ...). ``CompactionConfig.from_mapping`` reads such a mapping;
``policy_for(provider, model)`` merges the exact model override; ``CompactionPolicy.spec`` turns
a context window into token budgets.

Example:
    >>> config = CompactionConfig.from_mapping({"thresholdRatio": 0.75})
    >>> spec = config.policy_for("deepseek", "chat").spec(128_000)
    >>> spec.threshold_tokens, spec.retain_tokens
    (96000, 20480)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Final

from agentlog.errors import CompactionConfigError
from agentlog.values import is_safe_integer

__all__ = ["CompactSpec", "CompactionConfig", "CompactionPolicy", "ModelPolicy"]

_PREFIX: Final = "BasicCompactionConfig"
_KEYS: Final = {
    "thresholdRatio": "threshold_ratio",
    "retainRatio": "retain_ratio",
    "retainTokens": "retain_tokens",
    "summarizationProvider": "summarization_provider",
    "summarizationModel": "summarization_model",
    "maxTokens": "max_tokens",
    "compactionRetries": "compaction_retries",
    "maxOverflowRetries": "max_overflow_retries",
}
_DEFAULT_RETAIN_RATIO: Final = 0.16


def _error(message: str, target_key: str | None = None) -> CompactionConfigError:
    return CompactionConfigError(f"{_PREFIX}: {message}", target_key=target_key)


def _is_ratio(value: object) -> bool:
    return type(value) in (int, float) and 0 < value <= 1  # type: ignore[operator]


def _is_count(value: object, minimum: int) -> bool:
    """An integer of at least ``minimum``; an integral float (JSON written elsewhere) counts."""
    return is_safe_integer(value) and value >= minimum  # type: ignore[operator]  # a number


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactSpec:
    """A policy's token budgets for one context window."""

    threshold_tokens: int
    """Compact before a step when the measured request reaches this."""
    retain_tokens: int
    """Keep at least this much of the newest history verbatim."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionPolicy:
    """The settings that apply to one model route (defaults merged with its override)."""

    threshold_ratio: float = 0.8
    retain_ratio: float | None = None
    retain_tokens: int | None = None
    summarization_provider: str = ""
    summarization_model: str = ""
    max_tokens: int = 8192
    compaction_retries: int = 1
    max_overflow_retries: int = 1

    def __post_init__(self) -> None:
        if not _is_ratio(self.threshold_ratio):
            raise _error("thresholdRatio must be a number in (0, 1]")
        if self.retain_ratio is not None and not _is_ratio(self.retain_ratio):
            raise _error("retainRatio must be a number in (0, 1]")
        if self.retain_ratio is not None and self.retain_tokens is not None:
            raise _error("retainRatio and retainTokens are mutually exclusive")
        if self.retain_tokens is not None and not _is_count(self.retain_tokens, 0):
            raise _error("retainTokens must be a non-negative integer")
        if self.retain_tokens is None and self.retained_ratio >= self.threshold_ratio:
            raise _error(
                f"retainRatio ({_js(self.retained_ratio)}) must be less than the resolved "
                f"thresholdRatio ({_js(self.threshold_ratio)})"
            )
        pair = (self.summarization_provider, self.summarization_model)
        if not all(type(v) is str for v in pair) or (pair[0] == "") != (pair[1] == ""):
            raise _error(
                "summarizationProvider and summarizationModel must be set together as an "
                "empty or non-empty pair"
            )
        if not _is_count(self.max_tokens, 1):
            raise _error("maxTokens must be a positive integer")
        if not _is_count(self.compaction_retries, 0):
            raise _error("compactionRetries must be a non-negative integer")
        if not _is_count(self.max_overflow_retries, 0):
            raise _error("maxOverflowRetries must be a non-negative integer")
        for name in ("retain_tokens", "max_tokens", "compaction_retries", "max_overflow_retries"):
            value = getattr(self, name)
            if isinstance(value, float):
                object.__setattr__(self, name, int(value))  # 8192.0 read from JSON is 8192

    @property
    def retained_ratio(self) -> float:
        """The share of the window kept verbatim when no absolute budget is set."""
        return _DEFAULT_RETAIN_RATIO if self.retain_ratio is None else self.retain_ratio

    def spec(self, context_window: int, target: str | None = None) -> CompactSpec:
        """Token budgets for a route with ``context_window`` tokens (``resolveCompactSpec``).

        Raises:
            CompactionConfigError: for a window that is not a positive integer, or a retained
                tail that is not smaller than the threshold (``target_key`` set).
        """
        if not _is_count(context_window, 1):
            raise _error(
                f"contextWindow ({_js(context_window)}) must be a positive integer", target
            )
        context_window = int(context_window)
        threshold = math.floor(context_window * self.threshold_ratio)
        if self.retain_tokens is not None:
            retain = self.retain_tokens
        else:
            retain = math.floor(context_window * self.retained_ratio)
        if retain >= threshold:
            raise _error(
                f"{target or 'this route'} retainTokens ({retain}) must be less than threshold "
                f"tokens {threshold}",
                target,
            )
        return CompactSpec(threshold_tokens=threshold, retain_tokens=retain)


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelPolicy:
    """An exact ``provider``/``model`` override of some policy settings."""

    provider: str
    model: str
    settings: Mapping[str, Any] = field(default_factory=dict)
    """Policy fields (snake_case) this route overrides."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionConfig:
    """The compaction configuration: default policy, per-model overrides, automatic triggers."""

    policy: CompactionPolicy = field(default_factory=CompactionPolicy)
    model_policies: tuple[ModelPolicy, ...] = ()
    auto: bool = True
    """Whether the pressure and overflow triggers run (manual compaction always can)."""

    def __post_init__(self) -> None:
        if type(self.auto) is not bool:
            raise _error("auto must be a boolean")
        seen: set[tuple[str, str]] = set()
        for entry in self.model_policies:
            target = (entry.provider, entry.model)
            if not all(type(part) is str and part for part in target):
                raise _error("model policy provider and model must be non-empty strings")
            if target in seen:
                raise _error(f"duplicate model policy for {entry.provider}/{entry.model}")
            seen.add(target)
            self._merged(entry)  # an invalid override fails at load, not when first used

    @classmethod
    def from_mapping(cls, raw: Mapping[str, Any]) -> CompactionConfig:
        """Read dsh's ``BasicCompactionConfig`` shape (camelCase keys, all optional).

        Raises:
            CompactionConfigError: for an unknown key or an invalid value, with dsh's texts.
        """
        settings = _settings(raw, allowed={*_KEYS, "modelPolicies", "auto"})
        policies = []
        for entry in raw.get("modelPolicies", ()):
            if not isinstance(entry, Mapping):
                raise _error("modelPolicies entries must be objects")
            policies.append(
                ModelPolicy(
                    provider=entry.get("provider"),  # type: ignore[arg-type]  # checked
                    model=entry.get("model"),  # type: ignore[arg-type]  # checked
                    settings=_settings(entry, allowed={*_KEYS, "provider", "model"}),
                )
            )
        return cls(
            policy=CompactionPolicy(**settings),
            model_policies=tuple(policies),
            auto=raw.get("auto", True),
        )

    def policy_for(self, provider: str, model: str) -> CompactionPolicy:
        """The policy of one route: the exact override merged over the defaults."""
        for entry in self.model_policies:
            if (entry.provider, entry.model) == (provider, model):
                return self._merged(entry)
        return self.policy

    def _merged(self, entry: ModelPolicy) -> CompactionPolicy:
        settings = dict(entry.settings)
        if "retain_ratio" in settings or "retain_tokens" in settings:
            # An override that sets either retention field replaces the inherited choice.
            settings.setdefault("retain_ratio", None)
            settings.setdefault("retain_tokens", None)
        return replace(self.policy, **settings)


def _settings(raw: Mapping[str, Any], *, allowed: set[str]) -> dict[str, Any]:
    for key, value in raw.items():
        if key not in allowed:
            raise _error(f'unknown key "{key}"')
        if value is None:
            raise _error(f"{key} must not be null (leave it out for the default)")
    names = {f.name for f in fields(CompactionPolicy)}
    return {_KEYS[key]: value for key, value in raw.items() if _KEYS.get(key) in names}


def _js(value: object) -> str:
    """A number as JavaScript prints it (``0.8``, ``16``)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
