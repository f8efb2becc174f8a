"""Message projections: log-only events that rewrite the content of visible messages.

Covers spec/core.md §5.7 [F4]: ``image/offload`` and the projection contract. A projection
never moves nodes or changes message identity; an accepted one bumps only
``content_generation``, the logged event data stays as it was, and ``fold_surface`` and a
replay reproduce the projected messages. Every ``image/offload`` refusal text of §5.7 is
checked, as are E27 (no projection registered: append, fold and seed) and E29 (a duplicate
registration). E28 cannot happen in agentlog — a session's projections are fixed when it is
built — so the tests check that they cannot be changed afterwards. §15 scenario 86.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from agentlog import (
    IMAGE_OFFLOAD,
    EventRejected,
    MessageProjection,
    ProjectionContext,
    ProjectionError,
    SeedRejected,
    Session,
    declare_event_type,
    fold_surface,
    thaw,
)
from agentlog import messages as m
from agentlog.values import snapshot
from tests.session.support import (
    TR,
    A,
    S,
    U,
    assert_append_rejected,
    assert_rejected,
    begin,
    call,
    clock,
    new_session,
    raises_exactly,
    rep,
)

E27 = (
    'session event "image/offload" requires a message projection; load its owning plugin or '
    "supply its projection definition"
)


def img(name: str) -> dict[str, Any]:
    return m.image(name, "image/png", size=100, width=8, height=8)


def offload(*targets: tuple[int, list[Any]]) -> dict[str, Any]:
    return {"targets": [{"seq": seq, "imageIndexes": indexes} for seq, indexes in targets]}


def image_session() -> Session:
    """Nodes: 0 user with 2 images, 4 tool result with 1 image, 5 user without images,
    7 the replacement of a shadowed user message (6), 8 an assistant message; seqs 1–3 are
    ``turn/start``, ``step/start`` and the ``tool/call`` of the result (log-only)."""
    session = new_session(projections=[IMAGE_OFFLOAD])
    session.append(
        "user/message", m.user([m.text("look"), img("a"), img("b")], id="u0"), surface_op="append"
    )
    begin(session)
    call(session, "c1")
    session.append("tool/result", TR("c1", [img("c")]), surface_op="append")
    session.append("user/message", U("plain"), surface_op="append")
    session.append("user/message", U("shadowed"), surface_op="append")
    session.append("user/message", U("summary"), surface_op=rep(6, 6), source_event_seqs=[6])
    session.append("assistant/message", A("ok", id="a8"), surface_op="append")
    assert session.surface.nodes == (0, 4, 5, 7, 8)
    return session


def offloaded_flags(message: Mapping[str, Any]) -> list[bool]:
    return [
        block.get("offloaded") is True
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "image"
    ]


# --- no projection registered (E27) ------------------------------------------------------


def test_image_offload_needs_its_projection_at_append() -> None:
    """§15 scenario 86 (E27)."""
    session = new_session()
    session.append("user/message", m.user([img("a")], id="u0"), surface_op="append")
    assert_append_rejected(session, E27, "image/offload", offload((0, [0])))


def test_image_offload_needs_its_projection_in_a_fold_and_a_seed() -> None:
    session = image_session()
    session.append("image/offload", offload((0, [0])))
    with raises_exactly(EventRejected, E27):
        fold_surface(session.events)
    with raises_exactly(SeedRejected, f"invalid seed event at index 9: {E27}"):
        Session.from_events("replay", session.events, clock=clock)


def test_ignorable_does_not_excuse_a_missing_projection() -> None:
    session = new_session()
    session.append("user/message", m.user([img("a")], id="u0"), surface_op="append")
    assert_append_rejected(session, E27, "image/offload", offload((0, [0])), ignorable=True)


# --- an accepted offload -----------------------------------------------------------------


def test_an_offload_changes_content_but_not_nodes_identity_or_the_log() -> None:
    """§15 scenario 86."""
    session = image_session()
    before = session.derive_messages()
    nodes = session.surface.nodes
    event = session.append("image/offload", offload((0, [1]), (4, [0])))
    assert event.seq == 9
    assert session.surface.nodes == nodes
    assert session.surface.replace_generation == 1
    assert session.surface.content_generation == 2
    after = session.derive_messages()
    assert [msg["id"] for msg in after] == [msg["id"] for msg in before]
    assert offloaded_flags(after[0]) == [False, True]
    assert offloaded_flags(after[1]) == [True]
    assert after[2] is before[2]
    assert offloaded_flags(session.events[0].data) == [False, False]
    assert session.events[4].data["message"]["content"][0] == img("c")


def test_projected_messages_are_frozen_copies() -> None:
    session = image_session()
    session.append("image/offload", offload((0, [0])))
    projected = session.derive_messages()[0]
    assert projected is not session.events[0].data
    with pytest.raises(TypeError):
        projected["content"][1]["offloaded"] = False


def test_session_derive_event_message_prefers_the_projected_copy() -> None:
    session = image_session()
    session.append("image/offload", offload((0, [0])))
    assert offloaded_flags(session.derive_event_message(session.events[0])) == [True, False]


def test_offloads_accumulate_and_count_every_image_including_offloaded_ones() -> None:
    session = image_session()
    session.append("image/offload", offload((0, [1])))
    session.append("image/offload", offload((0, [0])))
    assert offloaded_flags(session.derive_messages()[0]) == [True, True]
    assert session.surface.content_generation == 3


def test_fold_and_replay_reproduce_the_projected_messages() -> None:
    """§15 scenario 86: ``fold_surface(events, defs).projected_messages``."""
    session = image_session()
    session.append("image/offload", offload((0, [1]), (4, [0])))
    session.append("image/offload", offload((0, [0])))
    fold = fold_surface(session.events, session.projections)
    projected = dict(fold.projected_messages)
    assert set(projected) == {0, 4}
    assert offloaded_flags(projected[0]) == [True, True]
    assert fold.content_generation == session.surface.content_generation == 3
    assert fold.replace_generation == session.surface.replace_generation == 1
    replay = Session.from_events("replay", session.events, projections=[IMAGE_OFFLOAD])
    assert replay.derive_messages() == session.derive_messages()


def test_images_are_counted_depth_first_through_nested_content() -> None:
    session = new_session(projections=[IMAGE_OFFLOAD])
    nested = {"type": "container", "content": [img("b"), {"type": "x", "content": [img("c")]}]}
    session.append(
        "user/message", m.user([img("a"), nested, img("d")], id="u0"), surface_op="append"
    )
    session.append("image/offload", offload((0, [2, 3])))
    content = session.derive_messages()[0]["content"]
    assert content[0].get("offloaded") is None
    assert content[1]["content"][0].get("offloaded") is None
    assert content[1]["content"][1]["content"][0]["offloaded"] is True
    assert content[2]["offloaded"] is True


def test_a_rewritten_tool_result_can_be_offloaded() -> None:
    session = image_session()
    rewritten = thaw(session.events[4].data)
    rewritten["message"]["content"] = [img("small"), img("smaller")]
    session.append("tool/result", rewritten, surface_op=rep(4, 4), source_event_seqs=[4])
    session.append("image/offload", offload((9, [1])))
    assert offloaded_flags(session.derive_messages()[1]) == [False, True]


# --- refusals of image/offload (§5.7) ----------------------------------------------------

NONEMPTY_TARGETS = "image/offload: data must contain a nonempty targets array"
TARGET_SHAPE = "image/offload: each target must contain a seq and nonempty imageIndexes"
INDEXES = "image/offload: imageIndexes must be strictly increasing non-negative safe integers"


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (None, NONEMPTY_TARGETS),
        ([], NONEMPTY_TARGETS),
        ({}, NONEMPTY_TARGETS),
        ({"targets": []}, NONEMPTY_TARGETS),
        ({"targets": {}}, NONEMPTY_TARGETS),
        ({"targets": [{"seq": 0, "imageIndexes": [0]}], "reason": "x"}, NONEMPTY_TARGETS),
        ({"targets": [1]}, TARGET_SHAPE),
        ({"targets": [{"seq": 0}]}, TARGET_SHAPE),
        ({"targets": [{"imageIndexes": [0]}]}, TARGET_SHAPE),
        ({"targets": [{"seq": 0, "imageIndexes": []}]}, TARGET_SHAPE),
        ({"targets": [{"seq": 0, "imageIndexes": 0}]}, TARGET_SHAPE),
        ({"targets": [{"seq": -1, "imageIndexes": [0]}]}, TARGET_SHAPE),
        ({"targets": [{"seq": "0", "imageIndexes": [0]}]}, TARGET_SHAPE),
        ({"targets": [{"seq": True, "imageIndexes": [0]}]}, TARGET_SHAPE),
        ({"targets": [{"seq": 0, "imageIndexes": [0], "why": 1}]}, TARGET_SHAPE),
        (offload((0, [0]), (0, [1])), "image/offload: duplicate target seq 0"),
        (offload((6, [0])), "image/offload: target seq 6 is not a current surface node"),
        (offload((1, [0])), "image/offload: target seq 1 is not a current surface node"),
        (offload((99, [0])), "image/offload: target seq 99 is not a current surface node"),
        (offload((8, [0])), "image/offload: target seq 8 must be user/message or tool/result"),
        (offload((0, [1, 0])), INDEXES),
        (offload((0, [0, 0])), INDEXES),
        (offload((0, [-1])), INDEXES),
        (offload((0, [True])), INDEXES),
        (offload((0, [0.5])), INDEXES),
        (offload((0, ["0"])), INDEXES),
        (offload((0, [2])), "image/offload: image index 2 does not exist"),
        (offload((5, [0])), "image/offload: image index 0 does not exist"),
        (offload((4, [0, 5])), "image/offload: image index 5 does not exist"),
    ],
)
def test_an_invalid_offload_is_rejected_with_its_text(data: Any, text: str) -> None:
    """§15 scenario 86: a rejecting decision leaves the derived messages intact."""
    assert_append_rejected(image_session(), text, "image/offload", data)


def test_a_system_target_is_not_offloadable() -> None:
    session = new_session(projections=[IMAGE_OFFLOAD])
    begin(session)
    session.append("system/message", S("sys"), surface_op="append")
    assert_append_rejected(
        session,
        "image/offload: target seq 2 must be user/message or tool/result",
        "image/offload",
        offload((2, [0])),
    )


def test_an_image_cannot_be_offloaded_twice() -> None:
    session = image_session()
    session.append("image/offload", offload((0, [1])))
    assert_append_rejected(
        session,
        "image/offload: image index 1 is already offloaded",
        "image/offload",
        offload((0, [0, 1])),
    )


def test_a_refused_later_target_commits_nothing_of_the_earlier_ones() -> None:
    session = image_session()
    assert_append_rejected(
        session,
        "image/offload: image index 3 does not exist",
        "image/offload",
        offload((0, [0]), (4, [3])),
    )
    assert offloaded_flags(session.derive_messages()[0]) == [False, False]


# --- the projection contract with a test projection ---------------------------------------

declare_event_type(
    "tests-projection/upper",
    doc="Test projection: uppercases the text of one node. Data `{seq}`.",
    owner="tests",
    badge="projection",
)


class UpperProjection:
    """Uppercases every text block of node ``data.seq``; refuses a non-node seq."""

    type = "tests-projection/upper"

    def project(self, event: Mapping[str, Any], context: ProjectionContext) -> dict[int, Any]:
        seq = event["data"]["seq"]
        if seq not in context.nodes:
            raise ProjectionError(f"upper: {seq} is not a node")
        message = thaw(context.current_message(seq))
        for block in message["content"]:
            if block.get("type") == "text":
                block["text"] = block["text"].upper()
        return {seq: snapshot(message)}


def test_a_custom_projection_satisfies_the_protocol() -> None:
    assert isinstance(UpperProjection(), MessageProjection)
    assert isinstance(IMAGE_OFFLOAD, MessageProjection)


def test_a_custom_projection_rewrites_content_and_bumps_only_the_content_generation() -> None:
    session = new_session(projections=[UpperProjection()])
    session.append("user/message", U("quiet"), surface_op="append")
    session.append("tests-projection/upper", {"seq": 0})
    [message] = session.derive_messages()
    assert message["content"] == [m.text("QUIET")]
    assert message["id"] == "u-quiet"
    assert session.surface.replace_generation == 0
    assert session.surface.content_generation == 1
    assert session.events[0].data["content"] == [m.text("quiet")]


def test_a_projection_error_rejects_the_append_with_its_text() -> None:
    session = new_session(projections=[UpperProjection()])
    session.append("user/message", U("quiet"), surface_op="append")
    assert_append_rejected(session, "upper: 5 is not a node", "tests-projection/upper", {"seq": 5})


def test_a_projection_sees_messages_already_projected() -> None:
    session = new_session(projections=[UpperProjection(), IMAGE_OFFLOAD])
    session.append("user/message", m.user([m.text("hi"), img("a")], id="u0"), surface_op="append")
    session.append("image/offload", offload((0, [0])))
    session.append("tests-projection/upper", {"seq": 0})
    content = session.derive_messages()[0]["content"]
    assert content[0] == m.text("HI")
    assert content[1]["offloaded"] is True


# --- registration (E29) and immutability (instead of E28) ---------------------------------


def test_two_projections_for_one_type_are_refused() -> None:
    """E29."""
    with raises_exactly(
        SeedRejected, 'session message projection "image/offload" is already registered'
    ):
        Session.create("s", projections=[IMAGE_OFFLOAD, IMAGE_OFFLOAD], clock=clock)
    with raises_exactly(
        SeedRejected, 'session message projection "image/offload" is already registered'
    ):
        Session.from_events("s", [], projections=[IMAGE_OFFLOAD, IMAGE_OFFLOAD], clock=clock)


def test_a_session_projections_are_fixed_when_it_is_built() -> None:
    """Instead of E28: the projections a session uses can be neither removed nor replaced."""
    registered: list[MessageProjection] = [IMAGE_OFFLOAD]
    session = Session.create("s", projections=registered, clock=clock)
    registered.clear()
    registered.append(UpperProjection())
    assert session.projections == (IMAGE_OFFLOAD,)
    assert isinstance(session.projections, tuple)
    with pytest.raises(AttributeError):
        session.projections = ()  # type: ignore[misc]  # the point: it is read-only
    session.append("user/message", m.user([img("a")], id="u0"), surface_op="append")
    session.append("image/offload", offload((0, [0])))
    assert session.surface.content_generation == 1


def test_a_rejected_projection_changes_nothing() -> None:
    session = image_session()
    session.append("image/offload", offload((0, [0])))
    assert_rejected(
        session,
        "image/offload: image index 0 is already offloaded",
        lambda: session.append("image/offload", offload((0, [0]))),
    )
