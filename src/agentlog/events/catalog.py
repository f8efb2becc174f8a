"""The event-type catalog: every type agentlog knows, declared once (spec/core.md §8).

Implements spec/core.md §8.2 for Python: instead of generating the known set from TypeScript
declaration merges, each type is declared here (or by a plugin) through
``declare_event_type()``, with a docstring-like description and its badge:

* ``surface`` — one of the five message-producing types; must carry ``surfaceOp``;
* ``log-only`` — never on the surface; must carry neither ``surfaceOp`` nor ``sourceEventSeqs``;
* ``projection`` — log-only, but changes the content of visible messages through a message
  projection (spec/core.md §5.7).

``KNOWN_EVENT_TYPES`` is the built-in format-4 vocabulary (59 types). ``docs/event-catalog.md``
is rendered from the registry by ``render_event_catalog()``; a test fails when it is stale.
Appending a type that is not declared needs ``ignorable=True`` (DESIGN decision 5).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Literal

from agentlog.events._declarations import CORE_DECLARATIONS

__all__ = [
    "DECLARED",
    "KNOWN_EVENT_TYPES",
    "MESSAGE_PROJECTION_EVENT_TYPES",
    "PROJECTION_TYPES",
    "SURFACE_EVENT_TYPES",
    "Badge",
    "EventTypeDeclaration",
    "declaration",
    "declare_event_type",
    "declared_event_types",
    "is_declared",
    "render_event_catalog",
]

Badge = Literal["surface", "log-only", "projection"]


@dataclass(frozen=True, slots=True, kw_only=True)
class EventTypeDeclaration:
    """One event type of the catalog: its name, badge, owner and meaning."""

    name: str
    """The wire ``type``, e.g. ``"turn/start"``."""
    badge: Badge
    """How the type relates to the surface."""
    owner: str
    """``"core"`` or the plugin that declares it."""
    doc: str
    """What the event records and its ``data`` shape."""


_REGISTRY: dict[str, EventTypeDeclaration] = {}

DECLARED: Final[Mapping[str, EventTypeDeclaration]] = MappingProxyType(_REGISTRY)
"""Every declared event type's declaration, by name: a live read-only view of the catalog
(``event_type in DECLARED`` is ``is_declared`` without a call, for the append path)."""

PROJECTION_TYPES: set[str] = set()
"""Every declared ``projection`` type, built-in or plugin (kept current by declarations)."""


def declare_event_type(
    name: str, *, doc: str, owner: str, badge: Badge = "log-only"
) -> EventTypeDeclaration:
    """Declare an event type so that sessions accept it without ``ignorable=True``.

    Declaring the same type again with the same description is a no-op; a different
    declaration of a taken name is refused. Plugins may declare ``log-only`` and
    ``projection`` types; the five ``surface`` types are a closed set owned by core.

    Args:
        name: The wire type, ``"<namespace>/<name>"``.
        doc: One sentence on what the event records, then its ``data`` shape.
        owner: The declaring plugin (``"core"`` for agentlog's own types).
        badge: ``"log-only"`` (default) or ``"projection"``.

    Returns:
        The registered declaration.

    Raises:
        ValueError: for an empty name or description, a new surface type, or a conflicting
            redeclaration.
    """
    if not isinstance(name, str) or not name:
        raise ValueError("an event type needs a nonempty name")
    if not isinstance(doc, str) or not doc.strip():
        raise ValueError(f"event type {name!r} needs a description")
    if badge == "surface" and name not in SURFACE_EVENT_TYPES:
        raise ValueError(
            f"event type {name!r} cannot be a surface type: the surface types are a closed set"
        )
    decl = EventTypeDeclaration(name=name, badge=badge, owner=owner, doc=doc)
    existing = _REGISTRY.get(name)
    if existing is not None:
        if existing == decl:
            return existing
        raise ValueError(f"event type {name!r} is already declared by {existing.owner!r}")
    _REGISTRY[name] = decl
    if badge == "projection":
        PROJECTION_TYPES.add(name)
    return decl


def declaration(name: str) -> EventTypeDeclaration | None:
    """Return the declaration of ``name``, or ``None`` when it is not declared."""
    return _REGISTRY.get(name)


def is_declared(name: str) -> bool:
    """Tell whether ``name`` is a declared (core or plugin) event type."""
    return name in _REGISTRY


def declared_event_types() -> tuple[EventTypeDeclaration, ...]:
    """Every declared event type, sorted by name."""
    return tuple(_REGISTRY[name] for name in sorted(_REGISTRY))


SURFACE_EVENT_TYPES: Final = frozenset(
    {"system/message", "developer/message", "user/message", "assistant/message", "tool/result"}
)
"""The closed set of message-producing types (spec/core.md §5.2, format 4)."""

for _name, _badge, _owner, _doc in CORE_DECLARATIONS:
    declare_event_type(_name, doc=_doc, owner=_owner, badge=_badge)

KNOWN_EVENT_TYPES: Final = frozenset(_REGISTRY)
"""The built-in format-4 vocabulary: every type a dsh format-4 log may hold (spec §8.2)."""

MESSAGE_PROJECTION_EVENT_TYPES: Final = frozenset(
    name for name, decl in _REGISTRY.items() if decl.badge == "projection"
)
"""Built-in types that need a message projection to be appended (spec/core.md §5.4 step 4)."""


def render_event_catalog() -> str:
    """Render the catalog as the Markdown of ``docs/event-catalog.md``."""
    lines = [
        "<!-- Generated from agentlog.events.catalog by scripts/gen_docs.py; do not edit. -->",
        "",
        "# Event-type catalog",
        "",
        "Every event type a session log can hold (`agentlog catalog` prints the same list).",
        "Kinds: **surface** events show the model a message and carry `surfaceOp`; **log-only**",
        "events are recorded but never shown to the model; **projection** events are log-only",
        "but change what visible messages show (an offloaded image, say).",
        "",
        f"{len(KNOWN_EVENT_TYPES)} built-in types.",
        "",
        "| type | badge | owner | meaning |",
        "|---|---|---|---|",
    ]
    for decl in declared_event_types():
        if decl.name in KNOWN_EVENT_TYPES:
            doc = " ".join(decl.doc.split()).replace("|", "\\|")
            lines.append(f"| `{decl.name}` | {decl.badge} | {decl.owner} | {doc} |")
    return "\n".join(lines) + "\n"
