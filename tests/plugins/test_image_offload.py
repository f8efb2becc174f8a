"""Recording ``image/offload``: the oldest images the model still receives become placeholders.

Covers the producer of spec/plugins.md §3 and acceptance scenarios 40–43 (§8). The session the
scripted ``Agent`` builds has images in a user prompt (one nested in a ``tool-result`` block),
in a tool result, in an assistant reply (never a target) and in a later prompt.
``offload_images`` must choose in request order and index each message's images depth-first,
counting those already offloaded. It must write one event that moves no node and changes no id
or stored data, and write nothing when no image is left. The effect must also survive replay
and forks.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentlog import IMAGE_OFFLOAD, EventRejected, SeedRejected, Session
from agentlog import messages as m
from agentlog.plugins.image_offload import (
    OFFLOAD_REQUIRED,
    offload_for_failure,
    offload_images,
)
from tests.plugins.agent import MODEL, PROVIDER, Agent

E27 = (
    'session event "image/offload" requires a message projection; load its owning plugin or '
    "supply its projection definition"
)


def img(name: str) -> dict[str, Any]:
    return m.image(name, "image/png", size=2048, width=64, height=64, name=f"{name}.png")


class Scene:
    """Seqs of the image-carrying nodes an ``Agent`` logged; turn 2 is left open.

    * ``prompt``: a user message with images ``a``, ``b`` (nested in a ``tool-result``
      block) and ``c``, so ``b`` is image index 1 (depth-first);
    * ``result``: a tool result with image ``d``;
    * ``drawing``: an assistant reply with image ``e`` (not an input: never offloaded);
    * ``followup``: the next turn's prompt, with image ``f``.
    """

    def __init__(self, session: Session | None = None) -> None:
        agent = Agent(session)
        self.agent, self.session = agent, agent.session
        agent.start_turn(
            [
                m.text("Compare these screenshots"),
                img("a"),
                {"type": "tool-result", "toolCallId": "upload1", "content": [img("b")]},
                img("c"),
            ]
        )
        self.prompt = self.session.surface.nodes[-1]
        agent.start_step()
        (self.result,) = agent.reply(calls=[("bash", [m.text("captured"), img("d")])])
        agent.end_step()
        agent.start_step()
        reply = m.assistant(
            [m.text("Here is the diff"), img("e")],
            provider=PROVIDER,
            model=MODEL,
            turn=agent.turn,
            step=agent.step,
        )
        self.drawing = self.session.append("assistant/message", reply, surface_op="append").seq
        agent.end_step()
        agent.end_turn()
        agent.start_turn([m.text("And this one?"), img("f")])
        self.followup = self.session.surface.nodes[-1]

    def offloaded(self) -> list[str]:
        """Attachment ids of the images ``derive_messages()`` marks offloaded, in order."""
        names = []
        for message in self.session.derive_messages():
            assert isinstance(message, dict)
            names += _offloaded(message["content"])
        return names


def _offloaded(content: Any) -> list[str]:
    names = []
    for block in content:
        if block.get("type") == "image" and block.get("offloaded") is True:
            names.append(block["attachment"]["attachmentId"])
        names += _offloaded(block.get("content", []))
    return names


def test_the_oldest_images_go_first() -> None:
    scene = Scene()

    event = offload_images(scene.session, 2)

    assert event is not None
    assert event.type == "image/offload"
    assert event.data == {"targets": [{"seq": scene.prompt, "imageIndexes": [0, 1]}]}
    assert scene.offloaded() == ["a", "b"]


def test_selection_continues_across_user_messages_and_tool_results() -> None:
    scene = Scene()
    offload_images(scene.session, 2)

    event = offload_images(scene.session, 3)

    assert event is not None
    assert event.data == {
        "targets": [
            {"seq": scene.prompt, "imageIndexes": [2]},
            {"seq": scene.result, "imageIndexes": [0]},
            {"seq": scene.followup, "imageIndexes": [0]},
        ]
    }
    assert scene.offloaded() == ["a", "b", "c", "d", "f"]


def test_assistant_images_are_never_targets() -> None:
    scene = Scene()

    event = offload_images(scene.session, 10)

    assert event is not None
    assert [target["seq"] for target in event.data["targets"]] == [
        scene.prompt,
        scene.result,
        scene.followup,
    ]
    assert "e" not in scene.offloaded()


def test_indexes_count_every_image_depth_first_offloaded_or_not() -> None:
    """With ``b`` (index 1, nested) already offloaded, the next two are indexes 0 and 2."""
    scene = Scene()
    scene.session.append("image/offload", {"targets": [{"seq": scene.prompt, "imageIndexes": [1]}]})

    event = offload_images(scene.session, 2)

    assert event is not None
    assert event.data == {"targets": [{"seq": scene.prompt, "imageIndexes": [0, 2]}]}
    assert scene.offloaded() == ["a", "b", "c"]


def test_an_offload_changes_content_only() -> None:
    """Scenario 40: the same nodes and message ids; the stored prompt keeps its images."""
    scene = Scene()
    session = scene.session
    nodes = session.surface.nodes
    replaces, contents = session.surface.replace_generation, session.surface.content_generation
    before = session.derive_messages()
    stored = session.event_at(scene.prompt).to_wire()
    seq = session.seq

    event = offload_images(session, 4)

    assert event is not None
    assert event.seq == seq
    assert session.seq == seq + 1
    assert event.surface_op is None
    assert session.surface.nodes == nodes
    assert session.surface.replace_generation == replaces
    assert session.surface.content_generation == contents + 1
    after = session.derive_messages()
    assert len(after) == len(before)
    assert [msg["id"] for msg in after] == [msg["id"] for msg in before]
    assert session.event_at(scene.prompt).to_wire() == stored
    assert after[0] != before[0]
    assert session.derive_event_message(session.event_at(scene.prompt)) == after[0]


def test_within_restricts_the_candidates() -> None:
    """Recovery from a failed summary only offloads inside the summarised span."""
    scene = Scene()

    event = offload_images(scene.session, 1, within={scene.result, scene.followup})

    assert event is not None
    assert event.data == {"targets": [{"seq": scene.result, "imageIndexes": [0]}]}
    assert offload_images(scene.session, 5, within={scene.drawing}) is None


def test_fewer_images_left_than_asked_offloads_what_is_left() -> None:
    scene = Scene()
    offload_images(scene.session, 4)

    event = offload_images(scene.session, 10)

    assert event is not None
    assert event.data == {"targets": [{"seq": scene.followup, "imageIndexes": [0]}]}


@pytest.mark.parametrize("count", [0, -1])
def test_a_count_below_one_offloads_nothing(count: int) -> None:
    scene = Scene()
    seq = scene.session.seq

    assert offload_images(scene.session, count) is None
    assert scene.session.seq == seq


def test_nothing_left_to_offload_appends_nothing() -> None:
    scene = Scene()
    offload_images(scene.session, 5)
    seq, generation = scene.session.seq, scene.session.surface.content_generation

    assert offload_images(scene.session, 1) is None
    assert (scene.session.seq, scene.session.surface.content_generation) == (seq, generation)


def test_a_session_without_images_has_nothing_to_offload() -> None:
    agent = Agent()
    agent.exchange("Hi", "Hello", tool_output="no images here")

    assert offload_images(agent.session, 3) is None


def test_an_offload_required_failure_records_the_offload() -> None:
    """Scenario 42: ``offloadImages: 2`` selects the two oldest input images."""
    scene = Scene()
    failure = {"code": OFFLOAD_REQUIRED, "message": "too many images", "offloadImages": 2}

    event = offload_for_failure(scene.session, failure)

    assert OFFLOAD_REQUIRED == "IMAGE_OFFLOAD_REQUIRED"
    assert event is not None
    assert event.data == {"targets": [{"seq": scene.prompt, "imageIndexes": [0, 1]}]}
    assert scene.session.events[-1] is event


def test_an_offload_required_failure_with_nothing_left_records_nothing() -> None:
    scene = Scene()
    offload_images(scene.session, 5)
    seq = scene.session.seq

    assert (
        offload_for_failure(scene.session, {"code": OFFLOAD_REQUIRED, "offloadImages": 1}) is None
    )
    assert scene.session.seq == seq


@pytest.mark.parametrize(
    "failure",
    [
        {"code": "RATE_LIMIT", "offloadImages": 2},
        {"code": "CONTEXT_WINDOW_EXCEEDED"},
        {"code": OFFLOAD_REQUIRED},
        {"code": OFFLOAD_REQUIRED, "offloadImages": 0},
        {"code": OFFLOAD_REQUIRED, "offloadImages": -2},
        {"code": OFFLOAD_REQUIRED, "offloadImages": True},
        {"code": OFFLOAD_REQUIRED, "offloadImages": 2.0},
        {"code": OFFLOAD_REQUIRED, "offloadImages": "2"},
        {"code": OFFLOAD_REQUIRED, "offloadImages": None},
    ],
)
def test_other_failures_record_nothing(failure: dict[str, Any]) -> None:
    scene = Scene()
    seq = scene.session.seq

    assert offload_for_failure(scene.session, failure) is None
    assert scene.session.seq == seq


def test_a_session_without_the_projection_refuses_the_offload() -> None:
    """core.md §5.4 step 4: the session was created without ``IMAGE_OFFLOAD``."""
    session = Session.create("plain", clock=lambda: 1_700_000_000_000)
    scene = Scene(session)
    seq = session.seq

    with pytest.raises(EventRejected) as caught:
        offload_images(session, 1)

    assert str(caught.value) == E27
    assert session.seq == seq
    assert scene.offloaded() == []


def test_a_replay_reproduces_the_offload() -> None:
    """Scenario 43: the selection is in the log; replaying needs the projection."""
    scene = Scene()
    offload_images(scene.session, 3)
    events = scene.session.events

    replayed = Session.from_events("agent", events, projections=(IMAGE_OFFLOAD,))

    assert replayed.derive_messages() == scene.session.derive_messages()
    assert replayed.surface.content_generation == scene.session.surface.content_generation
    with pytest.raises(SeedRejected) as caught:
        Session.from_events("agent", events)
    assert str(caught.value) == f"invalid seed event at index {len(events) - 1}: {E27}"


def test_a_fork_sees_only_offloads_before_its_boundary() -> None:
    scene = Scene()
    event = offload_images(scene.session, 2)
    assert event is not None

    after = scene.session.fork()
    before = scene.session.fork(event.seq - 1)

    assert after.derive_messages() == scene.session.derive_messages()
    assert before.derive_messages()[0] == scene.session.event_at(scene.prompt).data
    later = offload_images(before, 1)
    assert later is not None
    assert later.data == {"targets": [{"seq": scene.prompt, "imageIndexes": [0]}]}
