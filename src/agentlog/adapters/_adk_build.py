"""ADK ``Event`` objects rebuilt from the dumps agentlog wrote, without validating them again.

Every carried dump was made by ``Event.model_dump(mode="json")`` of a valid event and checked
at write time to read back equal (``_adk_codec.event_payload``). For the common shapes — text,
function calls and responses, plain state deltas — validating it again on every read only
repeats that work (ADK's and google-genai's validators cost ~50 µs an event). ``build`` makes
those shapes as ``model_construct`` would, nested models included, where each value already
has the exact type validation would give it: each model class's ``Shape`` (its fields in order,
its defaults, which keys it takes and how each converts) is derived once from pydantic's own
field table, and ``agentlog.values._construct`` builds the objects (in C when the accelerator
is built: half the time of per-model Python closures). Any other shape (another field,
another type, an enum, a base64 ``bytes`` field) falls back to ``Event.model_validate_json``,
so the result is always equal to what validation returns.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Final, cast

import orjson
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.genai import types
from pydantic import BaseModel

from agentlog.values import thaw
from agentlog.values._construct import (
    FLAG,
    NUMBER,
    TEXT,
    TEXT_SET,
    Field,
    Shape,
    Unconstructible,
    construct,
    listed,
    mapping,
    nested,
)

__all__ = ["build"]


_IMMUTABLE: Final = (type(None), bool, int, float, str, bytes, tuple, frozenset)


def _thaw(value: Any) -> dict[str, Any]:
    """A frozen object (a session's data) as the plain dict validation would give."""
    return cast(dict[str, Any], thaw(value))


_OBJECT: Final = mapping(_thaw)
"""A dump's JSON object (arguments, a response, a state delta)."""


def _shape(cls: type[BaseModel], fields: Mapping[str, Field]) -> Shape:
    """How to build ``cls`` from a dump with only ``fields``, as ``model_construct`` would.

    Validation fills ``__dict__`` with every field in field order and the unset ones at their
    defaults, records the given keys in ``__pydantic_fields_set__`` and leaves no extra or
    private values; the template holds the defaults worked out once (the immutable ones
    shared, the others — factories, mutable defaults — made per instance). A field whose
    default factory builds a model with no arguments (``EventActions()``) gets that model's
    own shape, built from ``{}``.
    """
    template: dict[str, Any] = {}
    made: list[tuple[str, Any]] = []
    for name, info in cls.model_fields.items():
        factory = info.default_factory
        template[name] = None
        if info.is_required():
            continue  # the dump must hold it (``required``)
        if factory is None and isinstance(info.default, _IMMUTABLE):
            template[name] = info.default
        elif factory is not None and not info.default_factory_takes_validated_data:
            if isinstance(factory, type) and issubclass(factory, BaseModel):
                made.append((name, _shape(factory, {})))
            else:
                made.append((name, factory))
        else:
            made.append((name, functools.partial(info.get_default, call_default_factory=True)))
    return Shape(
        cls=cls,
        template=template,
        fields=dict(fields),
        made=tuple(made),
        required=tuple(name for name, info in cls.model_fields.items() if info.is_required()),
        nullable=frozenset(name for name, info in cls.model_fields.items() if info.default is None),
        dict_attr="__dict__",
        keys_attr="__pydantic_fields_set__",
        constants=(("__pydantic_extra__", None), ("__pydantic_private__", None)),
        post_init=(cls.model_post_init, (None,)) if cls.__pydantic_post_init__ else None,
    )


_FUNCTION_CALL: Final = _shape(types.FunctionCall, {"id": TEXT, "name": TEXT, "args": _OBJECT})
_FUNCTION_RESPONSE: Final = _shape(
    types.FunctionResponse, {"id": TEXT, "name": TEXT, "response": _OBJECT}
)
_PART: Final = _shape(
    types.Part,
    {
        "text": TEXT,
        "thought": FLAG,
        "function_call": nested(_FUNCTION_CALL),
        "function_response": nested(_FUNCTION_RESPONSE),
    },
)
_CONTENT: Final = _shape(types.Content, {"role": TEXT, "parts": listed(_PART)})
_ACTIONS: Final = _shape(
    EventActions,
    {
        "state_delta": _OBJECT,
        "skip_summarization": FLAG,
        "transfer_to_agent": TEXT,
        "escalate": FLAG,
    },
)
_EVENT: Final = _shape(
    Event,
    {
        "id": TEXT,
        "invocation_id": TEXT,
        "author": TEXT,
        "timestamp": NUMBER,
        "branch": TEXT,
        "long_running_tool_ids": TEXT_SET,
        "partial": FLAG,
        "turn_complete": FLAG,
        "content": nested(_CONTENT),
        "actions": nested(_ACTIONS),
    },
)


def build(payload: Mapping[str, Any]) -> Event:
    """The ADK event of a dump ``_adk_codec.event_payload`` made (equal to validating it).

    A plain ``dict`` in ``payload`` (arguments, a response, a state delta) becomes part of the
    event as it is: the caller gives a plain dump only when it is nobody else's (parsed for
    this read); a frozen one (a session's data) is copied.
    """
    try:
        event: Event = construct(_EVENT, payload)
    except Unconstructible:
        return Event.model_validate_json(orjson.dumps(payload))
    return event
