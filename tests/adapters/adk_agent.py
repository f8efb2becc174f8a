"""An ADK agent for the session-service tests: a scripted model (no network) and two tools.

``ScriptedLlm`` is a real ``BaseLlm`` subclass: to a user message it answers with a call of
``lookup`` (and, when the message says "remember X", a call of ``remember`` too); to function
responses it answers with text naming what it saw. It records how many contents each request
carried, so a test can see that a resumed session hands the model its whole history.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import BaseSessionService
from google.adk.tools.tool_context import ToolContext
from google.genai import types
from pydantic import Field

APP = "app"


class ScriptedLlm(BaseLlm):
    """Calls tools for a user message, then answers; no network."""

    model: str = "scripted-1"
    seen: list[int] = Field(default_factory=list)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.seen.append(len(llm_request.contents))
        last = llm_request.contents[-1]
        responses = [part.function_response for part in last.parts or () if part.function_response]
        if responses:
            names = ", ".join(sorted(str(r.name) for r in responses))
            yield LlmResponse(
                content=types.Content(role="model", parts=[types.Part(text=f"Done: {names}.")])
            )
            return
        text = " ".join(part.text or "" for part in last.parts or ())
        parts = [types.Part(text="Let me look."), _call("lookup", {"query": text[:40]})]
        if text.startswith("remember "):
            parts.append(_call("remember", {"name": text.removeprefix("remember ")}))
        yield LlmResponse(content=types.Content(role="model", parts=parts))


def _call(name: str, args: dict[str, Any]) -> types.Part:
    return types.Part(function_call=types.FunctionCall(name=name, args=args))


def lookup(query: str) -> dict[str, Any]:
    """Look something up."""
    return {"result": f"facts about {query}", "size": len(query)}


def remember(name: str, tool_context: ToolContext) -> dict[str, Any]:
    """Remember the user's name (user state), count calls (app state) and notes (session)."""
    tool_context.state["user:name"] = name
    tool_context.state["app:remembered"] = tool_context.state.get("app:remembered", 0) + 1
    tool_context.state["last"] = name
    tool_context.state["temp:scratch"] = "never stored"
    return {"ok": True}


def runner(service: BaseSessionService, model: BaseLlm | None = None) -> Runner:
    agent = LlmAgent(name="helper", model=model or ScriptedLlm(), tools=[lookup, remember])
    return Runner(agent=agent, app_name=APP, session_service=service)


def user_says(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


async def turn(runner: Runner, user: str, session_id: str, text: str) -> list[Any]:
    """One user turn; the events the runner yielded (each already appended)."""
    return [
        event
        async for event in runner.run_async(
            user_id=user, session_id=session_id, new_message=user_says(text)
        )
    ]
