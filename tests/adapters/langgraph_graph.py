"""A LangGraph agent for the checkpointer tests: ``add_messages``, a tool and an interrupt.

Each turn: the user asks; the scripted ``agent`` node answers with a tool call; ``review``
interrupts for approval (the test resumes it with ``Command(resume=True)``); ``tools`` runs the
``lookup`` tool through LangGraph's ``ToolNode``; ``agent`` answers. That is six checkpoints
and four messages per turn, with deterministic, distinct content.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Annotated, Any, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt

from agentlog import history_problems

_WORDS = (
    "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega file line code error",
    "value test run build path module function return import class data",
)
_VOCABULARY = " ".join(_WORDS).split(" ")


def prose(seed: str, size: int) -> str:
    """Deterministic text of about ``size`` characters."""
    rng = random.Random(seed)
    words: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(_VOCABULARY)
        words.append(word)
        length += len(word) + 1
    return " ".join(words)


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return f"result for {query}: " + prose(query, 1500)


def agent(state: State) -> dict[str, Any]:
    last = state["messages"][-1]
    n = len(state["messages"])
    if isinstance(last, HumanMessage):
        call = {"name": "lookup", "args": {"query": f"q{n}"}, "id": f"call-{n}"}
        text = "I will look it up. " + prose(f"a{n}", 200)
        return {"messages": [AIMessage(content=text, id=f"ai-{n}", tool_calls=[call])]}
    return {
        "messages": [AIMessage(content="Here is the answer. " + prose(f"b{n}", 300), id=f"ai-{n}")]
    }


def review(state: State) -> dict[str, Any]:
    interrupt({"question": "run the tool?"})
    return {}


def _route(state: State) -> str:
    last = state["messages"][-1]
    return "review" if getattr(last, "tool_calls", None) else END


def build(tools: Sequence[Any] = (lookup,)) -> StateGraph[State]:
    builder = StateGraph(State)
    builder.add_node("agent", agent)
    builder.add_node("review", review)
    builder.add_node("tools", ToolNode(list(tools)))
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", _route, ["review", END])
    builder.add_edge("review", "tools")
    builder.add_edge("tools", "agent")
    return builder


def config(thread: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread}}


def ask(turn: int) -> State:
    return {
        "messages": [
            HumanMessage(content=f"question {turn} " + prose(f"h{turn}", 400), id=f"h-{turn}")
        ]
    }


def run_turns(graph: Any, thread: str, turns: range) -> None:
    """Play ``turns``: each asks, stops at the interrupt, and is resumed."""
    for turn in turns:
        graph.invoke(ask(turn), config(thread))
        graph.invoke(Command(resume=True), config(thread))


def as_agentlog_messages(messages: Sequence[BaseMessage]) -> list[dict[str, Any]]:
    """LangChain messages in agentlog's message shape, for ``history_problems``."""
    shaped: list[dict[str, Any]] = []
    for message in messages:
        if isinstance(message, ToolMessage):
            shaped.append({"role": "tool", "toolCallId": message.tool_call_id, "content": []})
        elif isinstance(message, AIMessage):
            calls = [{"type": "tool-call", "id": call["id"]} for call in message.tool_calls]
            shaped.append({"role": "assistant", "content": calls})
        else:
            shaped.append({"role": "user", "content": []})
    return shaped


def pairing_problems(messages: Sequence[BaseMessage]) -> list[str]:
    """How a message list breaks provider tool-call pairing (empty: a provider accepts it)."""
    return history_problems(as_agentlog_messages(messages))
