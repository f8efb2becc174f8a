"""ADK ``Event`` objects rebuilt from the dumps agentlog wrote, without validating them again.

Every carried dump was made by ``Event.model_dump(mode="json")`` of a valid event and checked
at write time to read back equal (``_adk_codec.event_payload``). For the common shapes — text,
function calls and responses, plain state deltas — validating it again on every read only
repeats that work (ADK's and google-genai's validators cost ~50 µs an event). ``build`` makes
those shapes with ``model_construct``, nested models included, where each value already has the
exact type validation would give it; any other shape (another field, another type, an enum, a
base64 ``bytes`` field) falls back to ``Event.model_validate_json``, so the result is always
equal to what validation returns.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, Final, cast

import orjson
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.genai import types
from pydantic import BaseModel

from agentlog.values import thaw

__all__ = ["build"]


class _Untrusted(Exception):
    """A value outside the shapes ``build`` constructs: validate the dump instead."""


def _text(value: Any) -> str:
    if type(value) is not str:
        raise _Untrusted
    return value


def _flag(value: Any) -> bool:
    if type(value) is not bool:
        raise _Untrusted
    return value


def _number(value: Any) -> float:
    if type(value) is float:
        return value
    if type(value) is int:
        return float(value)  # JSON wrote a whole float as an integer; validation converts it
    raise _Untrusted


# A dump is JSON: its objects are dicts and its arrays lists (agentlog's frozen values
# subclass both), so exact type checks in C stand in for the slower abstract ``Mapping``.


def _object(value: Any) -> dict[str, Any]:
    if type(value) is dict:
        # Plain: parsed for this read (a trusted read, a restored field), nobody else's.
        return cast(dict[str, Any], value)
    if not isinstance(value, dict):
        raise _Untrusted
    return cast(dict[str, Any], thaw(value))  # frozen (a session's data): thawed to a dict


def _ids(value: Any) -> set[str] | None:
    """``long_running_tool_ids``: a set, dumped as a sorted list (or ``None``)."""
    if value is None:
        return None
    if not isinstance(value, list):
        raise _Untrusted
    return {_text(item) for item in value}


Field = Callable[[Any], Any]


_IMMUTABLE: Final = (type(None), bool, int, float, str, bytes, tuple, frozenset)


def _model(cls: type[BaseModel], fields: Mapping[str, Field]) -> Field:
    """A builder of ``cls`` from a dump with only ``fields`` (each converted by its builder).

    What ``cls.model_construct(**values)`` does, with the defaults worked out once: the
    immutable ones shared, the others (factories, mutable defaults) made per instance.
    """
    template: dict[str, Any] = {}  # every field in field order, as validation fills __dict__
    made: dict[str, Callable[[], Any]] = {}  # defaults made afresh for each instance
    for name, info in cls.model_fields.items():
        factory = info.default_factory
        if info.is_required():
            template[name] = _Untrusted  # a placeholder the dump must replace
        elif factory is None and isinstance(info.default, _IMMUTABLE):
            template[name] = info.default
        elif factory is not None and not info.default_factory_takes_validated_data:
            template[name] = None
            if isinstance(factory, type) and issubclass(factory, BaseModel):
                # A model made with no arguments (``EventActions()``) is built, not validated.
                made[name] = _blank(factory)
            else:
                made[name] = cast(Callable[[], Any], factory)
        else:
            template[name] = None
            made[name] = functools.partial(info.get_default, call_default_factory=True)
    required = tuple(name for name, value in template.items() if value is _Untrusted)
    nullable = frozenset(name for name, info in cls.model_fields.items() if info.default is None)
    post_init = cls.model_post_init if cls.__pydantic_post_init__ else None
    made_items = tuple(made.items())
    converters = fields.get
    new = cls.__new__
    # The slots of every pydantic model, set directly (``object.__setattr__`` by name would
    # look each one up again).
    set_dict = _slot("__dict__")
    set_fields = _slot("__pydantic_fields_set__")
    set_extra = _slot("__pydantic_extra__")
    set_private = _slot("__pydantic_private__")

    def build(value: Any) -> Any:
        if not isinstance(value, dict):
            raise _Untrusted
        values = template.copy()
        for name, make in made_items:
            if name not in value:
                values[name] = make()
        for key, item in value.items():
            convert = converters(key)
            if convert is not None:
                values[key] = convert(item)
            elif item is None and key in nullable:
                values[key] = None  # a field at its default None that a serializer kept
            else:
                raise _Untrusted
        for name in required:
            if values[name] is _Untrusted:
                raise _Untrusted
        model = new(cls)
        set_dict(model, values)
        set_fields(model, set(value))
        set_extra(model, None)
        set_private(model, None)
        if post_init is not None:
            post_init(model, None)
        return model

    return build


def _blank(cls: type[BaseModel]) -> Callable[[], Any]:
    """A builder of ``cls()`` for a model whose fields all have defaults (no dump to read)."""
    whole = _model(cls, {})
    template: dict[str, Any] = {}
    made: list[tuple[str, Callable[[], Any]]] = []
    for name, info in cls.model_fields.items():
        factory = info.default_factory
        if info.is_required() or cls.__pydantic_post_init__:
            return functools.partial(whole, {})  # the general builder checks and completes it
        if factory is None and isinstance(info.default, _IMMUTABLE):
            template[name] = info.default
        elif factory in (dict, list):
            template[name] = None
            made.append((name, cast(Callable[[], Any], factory)))
        else:
            return functools.partial(whole, {})
    new = cls.__new__
    set_dict = _slot("__dict__")
    set_fields = _slot("__pydantic_fields_set__")
    set_extra = _slot("__pydantic_extra__")
    set_private = _slot("__pydantic_private__")
    made_items = tuple(made)

    def build() -> Any:
        values = template.copy()
        for name, make in made_items:
            values[name] = make()
        model = new(cls)
        set_dict(model, values)
        set_fields(model, set())
        set_extra(model, None)
        set_private(model, None)
        return model

    return build


def _slot(name: str) -> Callable[[Any, Any], None]:
    """The setter of one of ``BaseModel``'s slots (``__dict__`` among them)."""
    return BaseModel.__dict__[name].__set__  # type: ignore[no-any-return]


def _list(item: Field) -> Field:
    def build(value: Any) -> list[Any]:
        if not isinstance(value, list):
            raise _Untrusted
        return [item(entry) for entry in value]

    return build


_FUNCTION_CALL: Final = _model(types.FunctionCall, {"id": _text, "name": _text, "args": _object})
_FUNCTION_RESPONSE: Final = _model(
    types.FunctionResponse, {"id": _text, "name": _text, "response": _object}
)
_PART: Final = _model(
    types.Part,
    {
        "text": _text,
        "thought": _flag,
        "function_call": _FUNCTION_CALL,
        "function_response": _FUNCTION_RESPONSE,
    },
)
_CONTENT: Final = _model(types.Content, {"role": _text, "parts": _list(_PART)})
_ACTIONS: Final = _model(
    EventActions,
    {
        "state_delta": _object,
        "skip_summarization": _flag,
        "transfer_to_agent": _text,
        "escalate": _flag,
    },
)
_EVENT: Final = _model(
    Event,
    {
        "id": _text,
        "invocation_id": _text,
        "author": _text,
        "timestamp": _number,
        "branch": _text,
        "long_running_tool_ids": _ids,
        "partial": _flag,
        "turn_complete": _flag,
        "content": _CONTENT,
        "actions": _ACTIONS,
    },
)


def build(payload: Mapping[str, Any]) -> Event:
    """The ADK event of a dump ``_adk_codec.event_payload`` made (equal to validating it).

    A plain ``dict`` in ``payload`` (arguments, a response, a state delta) becomes part of the
    event as it is: the caller gives a plain dump only when it is nobody else's (parsed for
    this read); a frozen one (a session's data) is copied.
    """
    try:
        event: Event = _EVENT(payload)
    except _Untrusted:
        return Event.model_validate_json(orjson.dumps(payload))
    return event
