"""A process running Pydantic AI turns saved in an ``AgentlogConversationStore``, to be killed.

``python -m tests.adapters.pydantic_ai_child serve`` is a fork server
(``tests.adapters.children``); each worker runs ``run(url, conversation, mode, ...)``:

* ``run N``: N turns; each loads the conversation, runs the agent (the model calls ``add``
  twice, then answers) and saves, reporting ``A <n>``; ``T <n>`` while the tool runs;
* ``crash``: turns until killed;
* ``resume``: one turn whose model reports the history it was sent (``I <json>``);
* ``conflict GO``: loads, reports ``L``, waits for the file ``GO``, then runs and saves,
  reporting ``C`` on ``ConversationConflict`` and ``S`` when the save went through.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.conversation import Conversation
from pydantic_ai.conversation_store import ConversationConflict
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from agentlog.adapters.pydantic_ai import AgentlogConversationStore
from tests.adapters.children import say, serve


def calculator(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Calls ``add`` twice for a new prompt, then answers with the results."""
    last = messages[-1]
    returns = [p for p in last.parts if p.part_kind == "tool-return"]
    if returns:
        return ModelResponse(parts=[TextPart(" and ".join(str(p.content) for p in returns))])
    n = len(messages)
    return ModelResponse(
        parts=[
            ToolCallPart("add", {"a": n, "b": 1}, tool_call_id=f"m{n}a"),
            ToolCallPart("add", {"a": n, "b": 2}, tool_call_id=f"m{n}b"),
        ]
    )


def make_agent(model: FunctionModel | None = None) -> Agent[None, str]:
    agent = Agent(model or FunctionModel(calculator))

    @agent.tool_plain
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        say(f"T {a}")
        time.sleep(0.002)
        return a + b

    return agent


async def turn(store: AgentlogConversationStore, cid: str, prompt: str, agent: Any) -> None:
    conversation = await store.load(cid) or Conversation(conversation_id=cid)
    result = await agent.run(prompt, conversation=conversation)
    await store.save(result)


async def main(url: str, cid: str, mode: str, arg: str = "1") -> None:
    store = AgentlogConversationStore(url)
    agent = make_agent()
    if mode == "resume":
        seen: list[Any] = []

        def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
            from pydantic_ai.messages import ModelMessagesTypeAdapter

            seen.extend(ModelMessagesTypeAdapter.dump_python(messages, mode="json"))
            return ModelResponse(parts=[TextPart("resumed")])

        await turn(store, cid, "and now?", make_agent(FunctionModel(answer)))
        say("I " + json.dumps(seen))
    elif mode == "conflict":
        conversation = await store.load(cid) or Conversation(conversation_id=cid)
        say("L")
        while not Path(arg).exists():
            await asyncio.sleep(0.01)
        result = await agent.run("mine", conversation=conversation)
        try:
            await store.save(result)
            say("S")
        except ConversationConflict:
            say("C")
    else:
        n = 1
        while mode == "crash" or n <= int(arg):
            await turn(store, cid, f"turn {n}", agent)
            say(f"A {n}")
            n += 1
    store.close()


def run(url: str, cid: str, mode: str, *args: str) -> None:
    asyncio.run(main(url, cid, mode, *args))


if __name__ == "__main__":
    serve(run)
