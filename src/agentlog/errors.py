"""Every failure agentlog raises, in one tree.

```
AgentlogError
├── NotLosslessJson (ValueError)     a value outside the lossless JSON domain
├── EventRejected (ValueError)       an append or a fold refused an event
│   └── InvariantError               the invariant companion vetoed an event
├── SeedRejected (ValueError)        a seed, header or constructor option was refused
├── SessionForkError (ValueError)    a fork was refused; ``code`` names the reason
├── StreamRecordError (ValueError)   an assistant stream record is malformed
├── ToolPairingError (ValueError)    the surface's tool calls and results do not pair up
├── InvalidHistory (ValueError)      a derived history would be refused by a model provider
├── ConversionError (ValueError)     a message or part has no form in the other format
├── CompactionError (RuntimeError)   a compaction did not replace history (``code`` says why)
├── CompactionConfigError (ValueError)  a compaction or pruning configuration is invalid
├── TokenMeterError (ValueError)     the token meter cannot fold a log
├── ProviderError (RuntimeError)     a model call failed (``failure``: the logged LlmFailure)
├── SettlementRejected (RuntimeError)  a failed model stream's settling event was refused
└── StoreError                       a store could not do what was asked
    ├── SessionNotFound (LookupError)        no session with that id in the store
    ├── SessionAlreadyExists (ValueError)    the id is taken
    ├── SessionLocked (RuntimeError)         another writer holds the session
    ├── ConcurrentWriteError (RuntimeError)  another writer got there first
    ├── FormatVersionError (ValueError)      the stored format version cannot be read
    │   └── MigrationRefused                 an older log cannot be upgraded
    └── CorruptLog (ValueError)              stored bytes are damaged (``path``, ``line``)
```

``str(error)`` starts with the text of the spec's error catalogue (spec/core.md §14) wherever
the spec gives one; where that text does not say where or why (``carries non-JSON-serializable
data``), it goes on with the JSON path and the reason (``NotLosslessJson.detail``), and
``error.spec_text`` keeps the catalogue text alone for comparisons. Context lives in typed
attributes (``session_id``, ``seq``, ``index``, ``event_type``, ``path``, ``code``) that survive
pickling.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AgentlogError",
    "CompactionConfigError",
    "CompactionError",
    "ConcurrentWriteError",
    "ConversionError",
    "CorruptLog",
    "EventRejected",
    "FormatVersionError",
    "InvalidHistory",
    "InvariantError",
    "MigrationRefused",
    "NotLosslessJson",
    "ProviderError",
    "SeedRejected",
    "SessionAlreadyExists",
    "SessionForkError",
    "SessionLocked",
    "SessionNotFound",
    "SettlementRejected",
    "StoreError",
    "StreamRecordError",
    "TokenMeterError",
    "ToolPairingError",
]


class AgentlogError(Exception):
    """Base class of every error agentlog raises.

    Args:
        message: The error text; for spec-defined failures, it starts with the catalogue text.
        **context: Typed context attributes (``session_id``, ``seq``, ...), set on the instance;
            ``spec_text`` is the catalogue text alone when ``message`` goes on after it.

    Attributes:
        spec_text: The spec's catalogue text alone (``message`` unless it says more).
    """

    spec_text: str

    def __init__(self, message: str, **context: Any) -> None:
        super().__init__(message)
        self.message = message
        self.spec_text = message
        for name, value in context.items():
            setattr(self, name, value)

    def __str__(self) -> str:
        return self.message

    def __reduce__(self) -> tuple[Any, ...]:
        context = {k: v for k, v in self.__dict__.items() if k != "message"}
        if context.get("spec_text") == self.message:
            del context["spec_text"]
        return (_rebuild, (type(self), self.message, context))


def _rebuild(cls: type[AgentlogError], message: str, context: dict[str, Any]) -> AgentlogError:
    return cls(message, **context)


class NotLosslessJson(AgentlogError, ValueError):
    """A value is outside the lossless JSON domain (DESIGN decision 3).

    ``str()`` is ``value is not lossless JSON: <path> <reason>``; errors that refuse data for
    this reason go on after their own text the same way (``... carries non-JSON-serializable
    data: $.targets[0].value is -0.0 (no JSON form)``), with ``detail``.

    Attributes:
        path: JSONPath of the offending value, e.g. ``$.content[2].text`` (of the object, for a
            key that is not a string).
        reason: What the value is and why it has no JSON form, phrased to follow the path:
            ``is nan (not a finite number)``, ``is of type tuple (not a JSON type)``.
        well_formed: For JSON text: it was well-formed JSON holding a value outside the domain
            (a number no double can hold), not malformed text.
    """

    path: str = "$"
    reason: str = ""
    well_formed: bool = False

    @property
    def detail(self) -> str:
        """Where and why, as one phrase: ``$.targets[0].value is -0.0 (no JSON form)``."""
        return f"{self.path} {self.reason}"


class EventRejected(AgentlogError, ValueError):
    """An append (or a fold over a log) refused an event; nothing changed.

    Attributes:
        session_id: The session, when the event was appended to one.
        event_type: The refused event's type, when known.
        seq: The seq the event would have had, when known.
    """

    session_id: str | None = None
    event_type: str | None = None
    seq: int | None = None


class InvariantError(EventRejected):
    """The invariant companion (spec/core.md §11) vetoed an event."""


class SeedRejected(AgentlogError, ValueError):
    """A session could not be built from the given seed, header or options.

    Attributes:
        session_id: The session being built.
        index: Position of the offending seed event, when one is to blame.
    """

    session_id: str | None = None
    index: int | None = None


class SessionForkError(AgentlogError, ValueError):
    """A fork was refused (spec/core.md §10.1).

    Attributes:
        code: ``SESSION_ALREADY_EXISTS``, ``SESSION_NOT_FOUND``, ``SESSION_NOT_LIVE`` or
            ``INVALID_BOUNDARY``.
        session_id: The source session.
    """

    code: str = ""
    session_id: str | None = None


class StreamRecordError(AgentlogError, ValueError):
    """An assistant stream record (or a chunk time) is malformed (spec/core.md §2.5)."""


class ToolPairingError(AgentlogError, ValueError):
    """The surface is corrupt for tool pairing, or a seq is not on it (spec/plugins.md §2.4)."""


class InvalidHistory(AgentlogError, ValueError):
    """A message history breaks the tool-call pairing every model provider requires.

    Attributes:
        problems: Every problem found, in history order (``str()`` is the first).
    """

    problems: tuple[str, ...] = ()


class ConversionError(AgentlogError, ValueError):
    """A framework message, item or part has no form in the format it is converted to.

    Raised by the framework adapters' converters; the text names the part (its index and kind).
    """


class CompactionError(AgentlogError, RuntimeError):
    """A compaction could not replace history; the session says why in its log.

    ``code`` is one of dsh's manual-compaction codes (spec/plugins.md §2.5): ``busy`` (another
    compaction holds the lock, or the turn owner is wrong), ``cancelled``, ``changed`` (the
    selected history changed meanwhile), ``summary`` (no usable, smaller summary), ``commit``
    (the replacement did not land cleanly) or ``persistence`` (it landed but could not be made
    durable); or ``invalid`` for a request that names no replaceable span (a seq not on the
    surface, a reversed span, a split tool-call pair) or prunes outside a turn.

    Attributes:
        code: The failure class, as above.
        session_id: The session.
    """

    code: str = ""
    session_id: str | None = None


class TokenMeterError(AgentlogError, ValueError):
    """The token meter cannot fold a log whose structure it relies on (spec/plugins.md §7)."""


class ProviderError(AgentlogError, RuntimeError):
    """A model call failed; the loop retries it or ends the turn with it (spec/plugins.md §4.8).

    Attributes:
        failure: The ``LlmFailure`` as it is logged: ``{message, code, status?,
            providerRetryAfterMs?, requestId?}``; ``str()`` is its message.
        code: ``failure["code"]`` (``RATE_LIMIT``, ``SERVER``, ``CONTEXT_WINDOW_EXCEEDED``, ...).
    """

    failure: dict[str, Any] | None = None
    code: str = "UNKNOWN"

    @classmethod
    def of(cls, message: str, code: str, **fields: Any) -> ProviderError:
        """An error carrying the failure ``{message, code, **fields}`` (``None`` fields dropped)."""
        failure = {"message": message, "code": code}
        failure.update({key: value for key, value in fields.items() if value is not None})
        return cls(message, failure=failure, code=code)


class SettlementRejected(AgentlogError, RuntimeError):
    """A model stream failed and the event settling its attempt was refused (spec/plugins.md §4.5).

    The spec's ``AggregateError``: ``str()`` is its text, ``errors`` holds the stream's failure
    and the append's refusal (the latter is also the ``__cause__``).

    Attributes:
        errors: ``(stream failure, settlement refusal)``.
    """

    errors: tuple[BaseException, ...] = ()

    @classmethod
    def of(cls, stream: BaseException, settlement: BaseException) -> SettlementRejected:
        """The error for a stream that failed with ``stream`` and a refused ``settlement``."""
        return cls(
            "Assistant stream failed and its durable settlement was rejected",
            errors=(stream, settlement),
        )


class CompactionConfigError(AgentlogError, ValueError):
    """A compaction or pruning configuration is invalid (spec/plugins.md §2.6, §2.12).

    Attributes:
        target_key: ``provider/model`` when the problem is specific to one model route.
    """

    target_key: str | None = None


class StoreError(AgentlogError):
    """A store could not do what was asked; nothing was half-done.

    Attributes:
        session_id: The session concerned, when one is.
        path: The file concerned, for file stores.
    """

    session_id: str | None = None
    path: str | None = None


class SessionNotFound(StoreError, LookupError):
    """The store holds no session with that id."""


class SessionAlreadyExists(StoreError, ValueError):
    """A session with that id already exists (in this store, or on disk)."""


class SessionLocked(StoreError, RuntimeError):
    """Another writer (this process or another) holds the session open for writing."""


class ConcurrentWriteError(StoreError, RuntimeError):
    """Another writer appended to the session first; this append was not written.

    Attributes:
        expected_seq: The seq this writer tried to write.
        stored_seq: The next seq the store holds.
    """

    expected_seq: int | None = None
    stored_seq: int | None = None


class FormatVersionError(StoreError, ValueError):
    """The stored session uses a format version this build cannot read.

    Attributes:
        version: The stored version.
    """

    version: object = None


class MigrationRefused(FormatVersionError):
    """An older log holds something its upgrade to the current format cannot carry forward.

    The text names the step: ``<step> refuses this format vN Session: <why>``
    (spec/persistence.md §5.3).

    Attributes:
        step: The name of the migration step that refused, e.g. ``session-format-v1-to-v2``.
    """

    step: str | None = None


class CorruptLog(StoreError, ValueError):
    """Stored data is damaged: more than an incomplete final record (a torn tail) is wrong.

    Nothing was changed; ``Store.repair(session_id, cut_at=error.seq)`` cuts the log there.

    Attributes:
        line: The 1-based line (JSONL) or row (SQL) where the damage was found, when known.
        offset: The byte offset, for damage found in a compressed frame.
        seq: The seq the damaged record holds the place of (where a repair would cut).
        following: How many well-formed records follow the damage (a cut removes them too).
    """

    line: int | None = None
    offset: int | None = None
    seq: int | None = None
    following: int | None = None
