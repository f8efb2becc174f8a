"""Model providers behind one protocol (``agentlog.loop.model.Provider``).

``Scripted`` answers from a script (tests, demos, offline use); ``OpenAIChat`` speaks Chat
Completions to any compatible server (OpenAI, DeepSeek, vLLM, Ollama, LiteLLM, ...) through the
official ``openai`` client (extra ``agentlog[openai]``); ``Anthropic`` speaks the Messages API
through the official ``anthropic`` client (extra ``agentlog[anthropic]``). Each is imported on
first use, so ``import agentlog.providers`` needs neither client.
"""

from __future__ import annotations

import importlib
from typing import Any

from agentlog.providers.base import BaseProvider, require_extra

__all__ = ["Anthropic", "BaseProvider", "OpenAIChat", "Scripted", "require_extra"]

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
