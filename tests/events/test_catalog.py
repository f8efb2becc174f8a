"""The event-type catalog: the built-in format-4 vocabulary and plugin declarations.

Covers spec/core.md §8.2 (the 59 known format-4 types, the five surface types, the
message-projection types) and DESIGN decision 5: a session appends a type only when it is
declared (core or plugin) or appended as ``ignorable``. Plugin declarations are global, so the
tests here declare names under their own ``tests-catalog/`` namespace.
"""

from __future__ import annotations

import uuid

import pytest

from agentlog import (
    KNOWN_EVENT_TYPES,
    MESSAGE_PROJECTION_EVENT_TYPES,
    SURFACE_EVENT_TYPES,
    EventRejected,
    declare_event_type,
)
from agentlog.events import (
    DECLARED,
    declaration,
    declared_event_types,
    is_declared,
    render_event_catalog,
)
from tests.session.support import new_session

F0_TYPES = {
    "agent-preset/selected",
    "agent/inbox/spliced",
    "approval/asked",
    "approval/decided",
    "approval/policy",
    "assistant/chunk",
    "assistant/message",
    "command/done",
    "command/run",
    "compaction/end",
    "compaction/prune",
    "compaction/start",
    "compaction/summary",
    "feedback/record",
    "goal/change",
    "hook/invoked",
    "hook/result",
    "llm/retry",
    "llm/retry-started",
    "permission/preset",
    "plan/mode",
    "request/context",
    "request/header",
    "sandbox/mode",
    "schedule/change",
    "session/end-seed",
    "session/title",
    "session/title-llm-request",
    "step/end",
    "step/start",
    "subagent/descriptor",
    "team/member",
    "team/message/delivered",
    "team/message/queued",
    "team/task",
    "todo/write",
    "tool-workflow/agent-end",
    "tool-workflow/agent-start",
    "tool-workflow/run-end",
    "tool-workflow/run-start",
    "tool/call",
    "tool/code-dispatch",
    "tool/code-dispatch-start",
    "tool/result",
    "turn/end",
    "turn/start",
    "user/message",
    "web/deepseek-search-llm-request",
}
"""spec/core.md §8.2, the format-0 list (48)."""

F4_TYPES = (F0_TYPES - {"assistant/chunk", "tool/code-dispatch", "tool/code-dispatch-start"}) | {
    "assistant/attempt",
    "deliverables/presented",
    "developer/message",
    "feedback/message-delete",
    "feedback/message-put",
    "image/offload",
    "model/selection",
    "session-log-deepseek/delivery-accepted",
    "subagent/catalog",
    "subagent/model-selection-policy",
    "system/message",
    "tool/ptc-dispatch",
    "tool/ptc-dispatch-start",
    "workspace/changes",
}
"""spec/core.md §8.2, the format-4 list: the above minus three, plus fourteen (59)."""


def test_the_known_types_are_exactly_the_format_4_list() -> None:
    assert len(F0_TYPES) == 48
    assert len(F4_TYPES) == 59
    assert KNOWN_EVENT_TYPES == F4_TYPES


def test_the_surface_types_are_the_closed_set_of_five() -> None:
    assert {
        "system/message",
        "developer/message",
        "user/message",
        "assistant/message",
        "tool/result",
    } == SURFACE_EVENT_TYPES
    for name in SURFACE_EVENT_TYPES:
        decl = declaration(name)
        assert decl is not None
        assert decl.badge == "surface"


def test_image_offload_is_the_only_built_in_projection_type() -> None:
    assert {"image/offload"} == MESSAGE_PROJECTION_EVENT_TYPES
    decl = declaration("image/offload")
    assert decl is not None
    assert decl.badge == "projection"


def test_every_known_type_is_declared_with_a_description() -> None:
    for name in KNOWN_EVENT_TYPES:
        decl = declaration(name)
        assert decl is not None, name
        assert decl.name == name
        assert decl.doc.strip()
    assert declaration("never/declared") is None
    assert not is_declared("never/declared")


def test_declared_types_are_listed_sorted() -> None:
    names = [decl.name for decl in declared_event_types()]
    assert names == sorted(names)
    assert set(names) >= KNOWN_EVENT_TYPES


def test_a_plugin_type_is_appendable_once_declared() -> None:
    name = f"tests-catalog/ping-{uuid.uuid4().hex[:8]}"
    session = new_session()
    with pytest.raises(EventRejected) as info:
        session.append(name, {"n": 1})
    assert str(info.value) == (
        f'session event "{name}" has an undeclared type; declare it or append it as ignorable'
    )
    decl = declare_event_type(name, doc="A ping. Data `{n}`.", owner="tests")
    assert (decl.name, decl.badge, decl.owner) == (name, "log-only", "tests")
    assert is_declared(name)
    event = session.append(name, {"n": 1})
    assert event.seq == 0
    assert event.ignorable is False


def test_redeclaring_the_same_type_identically_is_a_no_op() -> None:
    first = declare_event_type("tests-catalog/same", doc="Same. Data `{}`.", owner="tests")
    assert declare_event_type("tests-catalog/same", doc="Same. Data `{}`.", owner="tests") is first


def test_a_conflicting_redeclaration_is_refused() -> None:
    declare_event_type("tests-catalog/taken", doc="Taken. Data `{}`.", owner="tests")
    with pytest.raises(ValueError, match="event type 'tests-catalog/taken' is already declared by"):
        declare_event_type("tests-catalog/taken", doc="Something else.", owner="tests")
    with pytest.raises(ValueError, match="event type 'turn/start' is already declared by 'core'"):
        declare_event_type("turn/start", doc="Mine now.", owner="plugin")


def test_a_plugin_cannot_add_a_surface_type() -> None:
    with pytest.raises(ValueError, match="the surface types are a closed set"):
        declare_event_type("tests-catalog/visible", doc="Visible.", owner="tests", badge="surface")
    assert not is_declared("tests-catalog/visible")


@pytest.mark.parametrize(("name", "doc"), [("", "A description."), ("tests-catalog/nodoc", "  ")])
def test_a_declaration_needs_a_name_and_a_description(name: str, doc: str) -> None:
    with pytest.raises(ValueError, match="needs a"):
        declare_event_type(name, doc=doc, owner="tests")


def test_a_plugin_projection_type_needs_its_projection_to_be_appended() -> None:
    declare_event_type(
        "tests-catalog/redact", doc="Redacts text. Data `{seq}`.", owner="tests", badge="projection"
    )
    session = new_session()
    with pytest.raises(EventRejected) as info:
        session.append("tests-catalog/redact", {"seq": 0})
    assert str(info.value) == (
        'session event "tests-catalog/redact" requires a message projection; load its owning '
        "plugin or supply its projection definition"
    )


def test_the_rendered_catalog_lists_every_known_type_once_with_its_badge() -> None:
    text = render_event_catalog()
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    names = [row.split("`")[1] for row in rows]
    assert sorted(names) == sorted(KNOWN_EVENT_TYPES)
    assert "| `image/offload` | projection | image-offload |" in text
    assert "| `user/message` | surface | core |" in text
    assert "tests-catalog/" not in text
    assert f"{len(KNOWN_EVENT_TYPES)} built-in types." in text


def test_declared_is_a_live_read_only_view_of_the_catalog() -> None:
    name = f"tests-catalog/view-{uuid.uuid4().hex[:8]}"
    assert name not in DECLARED
    decl = declare_event_type(name, doc="A view. Data `{}`.", owner="tests")
    assert name in DECLARED
    assert DECLARED[name] is decl
    assert all((type_ in DECLARED) is is_declared(type_) for type_ in ("turn/start", "nope/x"))
    with pytest.raises(TypeError):
        DECLARED[name] = decl  # type: ignore[index]  # read-only: the test is that it raises
