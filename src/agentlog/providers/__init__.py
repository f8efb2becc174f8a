"""Model providers behind one protocol (``agentlog.loop.model.Provider``).

``Scripted`` answers from a script (tests, demos, offline use); ``OpenAIChat`` speaks Chat
Completions to any compatible server (OpenAI, DeepSeek, vLLM, Ollama, LiteLLM, ...) through the
official ``openai`` client (extra ``agentlog[openai]``); ``Anthropic`` speaks the Messages API
through the official ``anthropic`` client (extra ``agentlog[anthropic]``). Each is imported on
first use, so ``import agentlog.providers`` needs neither client.

The message adapters ``to_chat_completions`` and ``to_anthropic`` are pure functions from
derived messages to each wire format; they need no client library either.
"""

from __future__ import annotations

import importlib
from typing import Any

from agentlog.providers.anthropic_messages import to_anthropic
from agentlog.providers.base import BaseProvider, require_extra
from agentlog.providers.openai_messages import to_chat_completions

__all__ = [
    "Anthropic",
    "BaseProvider",
    "OpenAIChat",
    "Scripted",
    "require_extra",
    "to_anthropic",
    "to_chat_completions",
]

_LAZY = {
    "Anthropic": "agentlog.providers.anthropic",
    "OpenAIChat": "agentlog.providers.openai",
    "Scripted": "agentlog.providers.scripted",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agentlog.providers' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
