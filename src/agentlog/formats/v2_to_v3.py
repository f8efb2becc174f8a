"""Format 2 → 3: the system prompt becomes a surface node; PTC names; canonical shapes.

Implements ``session-format-v2-to-v3`` (spec/persistence.md §5.4). Right after the first
``step/start`` an empty ``system/message`` is appended (the head); before each
``request/header`` whose ``header.system`` (absent = empty) differs from the current prompt, a
``system/message`` replacing the head node is inserted, and ``header.system`` is removed from
every request header. A synthetic message has role ``system``, source ``{kind: "plugin",
plugin: "@deepseek-ai/dsh-system-prompt"}``, content ``[]`` for an empty prompt, the turn and
step of the open step, its anchor's time, and the id ``v2-to-v3-system-`` + the hex SHA-256 of
``["session-format-v2-to-v3", <session id>, <anchor seq>, <anchor type>]``.

Also: ``tool/code-dispatch(-start)`` → ``tool/ptc-dispatch(-start)``, the ``tools-code-mode``
attribution → ``tools-ptc``, agent preset ``code`` → ``ptc``, replace ops ``{start, end}`` →
``{startSeq, endSeq}``, and request headers lose exactly ``tools: []`` and
``adapterDefaults: {}``. Events are renumbered around the inserted messages.

A replace that would shadow a system node (a compaction over a range the head now sits in)
cites it too, as the format-3 surface requires, and the current prompt is appended again right
after it: format 2 never hid the system prompt from the model, so the migrated log does not
either. A prompt change outside an open step is refused.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, Final

from agentlog.formats.artifact import Artifact, Refusal
from agentlog.formats.references import Renumbering
from agentlog.formats.vocabulary import refuse_unknown_types
from agentlog.values import dumps

__all__ = ["NAME", "SYSTEM_PROMPT_PLUGIN", "migrate"]

NAME: Final = "session-format-v2-to-v3"
SYSTEM_PROMPT_PLUGIN: Final = "@deepseek-ai/dsh-system-prompt"

_RENAMED_TYPES: Final = {
    "tool/code-dispatch": "tool/ptc-dispatch",
    "tool/code-dispatch-start": "tool/ptc-dispatch-start",
}
_SURFACE_TYPES: Final = frozenset(
    {"user/message", "assistant/message", "tool/result", "system/message"}
)


class _Surface:
    """The surface's node seqs (new numbering) and which of them are system nodes."""

    def __init__(self) -> None:
        self.nodes: list[int] = []
        self.system: set[int] = set()

    def shadowed(self, start: Any, end: Any) -> list[int]:
        """The nodes a replace of ``start..end`` would shadow (empty when it cannot apply)."""
        try:
            first, last = self.nodes.index(start), self.nodes.index(end)
        except ValueError:
            return []
        return self.nodes[first : last + 1]

    def apply(self, event: Mapping[str, Any]) -> None:
        seq, surface_op = event["seq"], event.get("surfaceOp")
        if event.get("type") == "system/message":
            self.system.add(seq)
        if surface_op == "append":
            self.nodes.append(seq)
        elif isinstance(surface_op, Mapping) and surface_op.get("op") == "replace":
            shadowed = self.shadowed(surface_op.get("startSeq"), surface_op.get("endSeq"))
            if shadowed:
                first = self.nodes.index(shadowed[0])
                self.nodes[first : first + len(shadowed)] = [seq]


class _Migration:
    """One pass over a format-2 log, emitting format 3."""

    def __init__(self, artifact: Artifact) -> None:
        self.session_id = artifact.session_id
        self.out: list[Mapping[str, Any]] = []
        self.renumbering = Renumbering(self.session_id)
        self.surface = _Surface()
        self.prompt = ""
        self.head: int | None = None  # the current system node
        self.step: tuple[Any, Any] | None = None  # (turn, step) of the open step
        self.ids = _message_ids(artifact)

    def run(self, events: Any) -> list[Mapping[str, Any]]:
        for event in events:
            event_type = event.get("type")
            if event_type == "request/header":
                self._prompt_at(event)
            self._emit(_canonical(self.renumbering.event(event, len(self.out))), event)
            if event_type == "step/start":
                data = event.get("data")
                turn_step = (
                    (data.get("turn"), data.get("step")) if isinstance(data, Mapping) else None
                )
                self.step = turn_step
                if self.head is None:
                    self._system(event, replace=False)
            elif event_type == "step/end":
                self.step = None
        return self.out

    def _emit(self, event: Mapping[str, Any], old: Mapping[str, Any] | None) -> None:
        seq = len(self.out)
        if old is None:
            self.renumbering.inserted(seq)
        else:
            self.renumbering.keep(old["seq"], seq)
        surface_op = event.get("surfaceOp")
        reappend = False
        if isinstance(surface_op, Mapping) and surface_op.get("op") == "replace":
            shadowed = self.surface.shadowed(surface_op.get("startSeq"), surface_op.get("endSeq"))
            hidden = [node for node in shadowed if node in self.surface.system]
            if hidden and event.get("type") != "system/message":
                sources = event.get("sourceEventSeqs")
                cited = list(sources) if isinstance(sources, list) else []
                event = {**event, "sourceEventSeqs": cited + [n for n in hidden if n not in cited]}
                reappend = self.head in hidden
        self.out.append(event)
        if event.get("type") in _SURFACE_TYPES:
            self.surface.apply(event)
        if reappend:
            self.head = None
            self._system(old if old is not None else event, replace=False)

    def _prompt_at(self, header_event: Mapping[str, Any]) -> None:
        data = header_event.get("data")
        header = data.get("header") if isinstance(data, Mapping) else None
        if not _names_a_model(header):
            return  # not a request header at all: validation refuses it, with its own reason
        assert isinstance(header, Mapping)
        prompt = header.get("system", "")
        if prompt == self.prompt:
            return
        if self.step is None or self.head is None:
            raise Refusal(
                f'session "{self.session_id}" request/header at seq {header_event.get("seq")} '
                "changes the system prompt outside an open step"
            )
        self.prompt = prompt
        self._system(header_event, replace=True)

    def _system(self, anchor: Mapping[str, Any], *, replace: bool) -> None:
        """Insert the system node for ``anchor`` (appended head, or the head's replacement)."""
        anchor_seq, anchor_type = anchor.get("seq"), anchor.get("type")
        digest = hashlib.sha256(dumps([NAME, self.session_id, anchor_seq, anchor_type])).hexdigest()
        message_id = f"v2-to-v3-system-{digest}"
        if message_id in self.ids:
            raise Refusal(
                f'session "{self.session_id}" already holds a message with id "{message_id}"'
            )
        self.ids.add(message_id)
        text = self.prompt
        content = [{"type": "text", "text": text}] if text != "" else []
        turn, step = self.step if self.step is not None else (None, None)
        event: dict[str, Any] = {
            "type": "system/message",
            "seq": len(self.out),
            "time": anchor.get("time"),
            "data": {
                "turn": turn,
                "step": step,
                "message": {
                    "id": message_id,
                    "role": "system",
                    "content": content,
                    "source": {"kind": "plugin", "plugin": SYSTEM_PROMPT_PLUGIN},
                },
            },
        }
        if replace and self.head is not None:
            event["surfaceOp"] = {"op": "replace", "startSeq": self.head, "endSeq": self.head}
            event["sourceEventSeqs"] = [self.head]
        else:
            event["surfaceOp"] = "append"
        self.head = event["seq"]
        self._emit(event, None)


def migrate(artifact: Artifact) -> Artifact:
    """Make the system prompt part of the surface and canonicalise a format-2 artifact.

    Raises:
        Refusal: for a prompt change outside an open step, an id collision, or an undeclared
            required type.
    """
    refuse_unknown_types(artifact.events, 2, artifact.session_id)
    header = {**artifact.header, "version": 3}
    if header.get("agentPreset") == "code":
        header["agentPreset"] = "ptc"
    events = _Migration(artifact).run(artifact.events)
    return Artifact(header=header, events=events)


def _names_a_model(header: object) -> bool:
    config = header.get("config") if isinstance(header, Mapping) else None
    return isinstance(config, Mapping) and all(
        type(config.get(key)) is str and config[key] != "" for key in ("provider", "model")
    )


def _message_ids(artifact: Artifact) -> set[str]:
    ids = set()
    for event in artifact.events:
        data = event.get("data")
        if not isinstance(data, Mapping):
            continue
        message = data if event.get("type") == "user/message" else data.get("message")
        if isinstance(message, Mapping) and type(message.get("id")) is str:
            ids.add(message["id"])
    return ids


def _canonical(event: Mapping[str, Any]) -> Mapping[str, Any]:
    """Format-3 names and shapes for one (renumbered) event."""
    changes: dict[str, Any] = {}
    event_type = event.get("type")
    if event_type in _RENAMED_TYPES:
        changes["type"] = _RENAMED_TYPES[event_type]
    surface_op = event.get("surfaceOp")
    if (
        isinstance(surface_op, Mapping)
        and surface_op.get("op") == "replace"
        and ("start" in surface_op or "end" in surface_op)
    ):
        op = {key: value for key, value in surface_op.items() if key not in ("start", "end")}
        changes["surfaceOp"] = {
            **op,
            **({"startSeq": surface_op["start"]} if "start" in surface_op else {}),
            **({"endSeq": surface_op["end"]} if "end" in surface_op else {}),
        }
    data = event.get("data")
    if isinstance(data, Mapping):
        new_data = _canonical_data(event_type, data)
        if new_data is not data:
            changes["data"] = new_data
    return {**event, **changes} if changes else event


def _canonical_data(event_type: Any, data: Mapping[str, Any]) -> Mapping[str, Any]:
    if event_type == "request/header":
        header = data.get("header")
        if not isinstance(header, Mapping):
            return data
        drop = {"system"}
        if header.get("tools") == []:
            drop.add("tools")
        if header.get("adapterDefaults") == {}:
            drop.add("adapterDefaults")
        if not drop & header.keys():
            return data
        return {**data, "header": {k: v for k, v in header.items() if k not in drop}}
    if event_type == "agent-preset/selected":
        renamed = {key: "ptc" for key in ("preset", "agentPreset") if data.get(key) == "code"}
        return {**data, **renamed} if renamed else data
    if event_type in _SURFACE_TYPES:
        message = data if event_type == "user/message" else data.get("message")
        if not isinstance(message, Mapping):
            return data
        source = message.get("source")
        if not (isinstance(source, Mapping) and source.get("plugin") == "tools-code-mode"):
            return data
        renamed_message = {**message, "source": {**source, "plugin": "tools-ptc"}}
        return (
            renamed_message
            if event_type == "user/message"
            else {**data, "message": renamed_message}
        )
    return data
