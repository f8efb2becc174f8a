"""A session read and written as Responses items: exact round trips, valid histories, shadows.

Every session here runs under the invariant companion (tests/conftest.py), so each write is
also checked for turn, step and tool-call structure.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentlog import EventRejected, Session, expand, history_problems, open_store
from agentlog.adapters._item_log import ItemLog, freeze_items
from agentlog.stores import Store
from tests.adapters.strategies import any_item, conversation

_ids = itertools.count()


def fresh(store: Store | None = None) -> ItemLog:
    return ItemLog((store or open_store("memory:")).create(f"s{next(_ids)}"))


def add(log: ItemLog, *items: Any) -> None:
    log.add(freeze_items(log.session.id, items))


def fc(call_id: str, name: str = "add") -> dict[str, Any]:
    return {"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"}


def fco(call_id: str, output: str = "ok") -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call_id, "output": output}


USER = {"role": "user", "content": "hi"}
REPLY = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "yo"}]}


@given(st.lists(st.lists(any_item(), max_size=5), max_size=5))
def test_any_items_come_back_exactly(batches: list[list[Any]]) -> None:
    log = fresh()
    for batch in batches:
        add(log, *batch)
    assert log.items(None) == [item for batch in batches for item in batch]


@given(conversation(canonical=False))
def test_runner_shaped_writes_derive_a_provider_valid_history(batches: list[list[Any]]) -> None:
    log = fresh()
    for batch in batches:
        add(log, *batch)
    assert history_problems(log.session.derive_messages()) == []
    assert log.items(None) == [item for batch in batches for item in batch]


@given(st.lists(st.lists(any_item(), min_size=1, max_size=4), max_size=4))
def test_pop_returns_the_items_newest_first_and_keeps_them_in_the_log(
    batches: list[list[Any]],
) -> None:
    log = fresh()
    for batch in batches:
        add(log, *batch)
    items = [item for batch in batches for item in batch]
    before = [event.to_wire() for event in log.session.events]
    popped = [log.pop() for _ in items]
    assert popped == items[::-1]
    assert log.pop() is None
    assert log.items(None) == []
    assert [event.to_wire() for event in log.session.events[: len(before)]] == before


def test_popping_one_call_of_a_response_keeps_the_others() -> None:
    log = fresh()
    add(log, USER)
    add(log, fc("c1"), fc("c2"))
    assert log.pop() == fc("c2")
    assert log.items(None) == [USER, fc("c1")]
    add(log, fco("c1"), REPLY)
    assert log.items(None) == [USER, fc("c1"), fco("c1"), REPLY]
    assert history_problems(log.session.derive_messages()) == []


def test_pop_shadows_with_a_cited_replace_that_expand_undoes() -> None:
    log = fresh()
    add(log, USER)
    add(log, fc("c1"), fco("c1"))
    node = log.session.surface.nodes[-1]
    assert log.pop() == fco("c1")
    replacement = log.session.events[-3]
    assert (replacement.type, replacement.data["removedBy"]) == ("system/message", "pop_item")
    assert replacement.surface_op == {"op": "replace", "startSeq": node, "endSeq": node}
    assert [e.seq for e in expand(log.session, replacement.seq)] == [node]


def test_clear_shadows_everything_and_a_fork_before_it_has_it_all() -> None:
    store = open_store("memory:")
    log = fresh(store)
    add(
        log, {"type": "message", "role": "system", "content": [{"type": "input_text", "text": "s"}]}
    )
    add(log, USER)
    add(log, fc("c1"), fco("c1"), REPLY)
    before, head = log.session.seq - 1, log.session.surface.nodes[0]
    log.replace_all([], "clear_session")
    assert log.items(None) == []
    child = ItemLog(store.fork(log.session.id, boundary=before, child_id="child"))
    assert len(child.items(None)) == 5
    removals = [e for e in log.session.events[before + 1 :] if e.type == "system/message"]
    assert [e.data["removedBy"] for e in removals] == ["clear_session", "clear_session"]
    # The system message at node 0 may only be replaced on its own (spec/core.md §5.6).
    assert removals[0].surface_op == {"op": "replace", "startSeq": head, "endSeq": head}


def test_an_output_written_later_answers_its_call_through_a_fresh_dispatch() -> None:
    """A run paused for approval writes the call alone; the output comes with the next write."""
    log = fresh()
    add(log, USER)
    add(log, fc("c1"))
    first_call = next(e for e in log.session.events if e.type == "tool/call")
    add(log, fco("c1"))
    result = log.session.events[-3]
    assert result.type == "tool/result"
    again = log.session.event_at(result.source_event_seqs[1])
    assert result.source_event_seqs[0] == first_call.seq
    assert (again.type, again.data["callId"]) == ("tool/call", "c1")
    assert history_problems(log.session.derive_messages()) == []


def test_the_open_call_is_known_again_after_a_reopen() -> None:
    store = open_store("memory:")
    log = fresh(store)
    add(log, USER)
    add(log, fc("c1"))
    log.session.close()
    reopened = ItemLog(store.open(log.session.id))
    add(reopened, fco("c1"))
    assert reopened.session.events[-3].type == "tool/result"
    assert history_problems(reopened.session.derive_messages()) == []


def test_an_output_answering_nothing_is_kept_as_a_user_message() -> None:
    log = fresh()
    add(log, USER, fco("ghost"))
    event = log.session.event_at(log.session.surface.nodes[-1])
    assert (event.type, event.data["source"]) == (
        "user/message",
        {"kind": "orphan-tool-output", "callId": "ghost"},
    )
    assert log.items(None) == [USER, fco("ghost")]
    assert history_problems(log.session.derive_messages()) == []


def test_an_item_outside_lossless_json_is_refused_and_nothing_is_written() -> None:
    log = fresh()
    with pytest.raises(EventRejected, match=r"session item 1 is not lossless JSON at \$.x"):
        freeze_items("s", [USER, {"x": float("nan")}])
    assert log.session.seq == 0


@pytest.mark.parametrize(("limit", "expected"), [(None, 4), (0, 0), (2, 2), (9, 4), (-1, 4)])
def test_limit_takes_the_newest_items(limit: int | None, expected: int) -> None:
    log = fresh()
    add(log, USER)
    add(log, fc("c1"), fco("c1"), REPLY)
    items = log.items(limit)
    assert items == [USER, fc("c1"), fco("c1"), REPLY][4 - expected :]


def test_items_are_fresh_copies() -> None:
    log = fresh()
    add(log, USER)
    log.items(None)[0]["content"] = "changed"
    assert log.items(None) == [USER]


def test_a_long_prompt_is_stored_once_and_comes_back_exactly() -> None:
    prompt = {"role": "user", "content": "please " * 100}
    output = {
        "type": "function_call_output",
        "call_id": "c1",
        "output": [{"type": "input_text", "text": "line " * 50}],
    }
    log = fresh()
    add(log, prompt, fc("c1"), output)
    user = log.session.event_at(log.session.surface.nodes[0])
    assert user.data["responseItems"] == [{"role": "user", "content": None}]
    assert user.data["elidedText"] == [[0, 0, "content"]]
    result = log.session.event_at(log.session.surface.nodes[-1])
    assert result.data["elidedText"] == [[0, 0, "output", 0, "text"]]
    assert log.items(None) == [prompt, fc("c1"), output]
    reread = ItemLog(Session.from_events("copy", log.session.events[:]))  # a replay
    assert reread.items(None) == [prompt, fc("c1"), output]
