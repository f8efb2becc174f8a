"""``verify_session``: check a stored session in full, without writing anything.

Three checks, each reported with every problem it finds:

* **load** — the log reads and every event passes full validation (envelope, per-type rules,
  surface rules, provenance; an older format through the migration chain), exactly as a resume
  would see it (``Store.inspection``). A failure here is what would stop ``Store.open``.
* **history** — the derived history is provider-valid: every tool call answered once, in place
  (``agentlog.history_problems``).
* **structure** — the invariant companions: turn, step and tool-call structure
  (spec/core.md §11, ``agentlog.check_invariants``) and compaction brackets
  (spec/plugins.md §2.3). They are opt-in at append time, and dsh loads logs that break them
  (stream fragments outside a turn, say), so a structure problem is a warning unless ``strict``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from agentlog.errors import AgentlogError, InvariantError, SessionNotFound
from agentlog.lifecycle import check_invariants, history_problems
from agentlog.plugins.compaction import install_compaction_invariants
from agentlog.session import Session
from agentlog.stores import Store

__all__ = ["Problem", "Verification", "verify_session"]

Check = Literal["load", "history", "structure"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Problem:
    """One thing a check found."""

    check: Check
    """Which check found it."""
    message: str
    """What is wrong and where."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Verification:
    """The verdict on one session."""

    session_id: str
    location: str | None
    """The file it is stored in (file stores)."""
    events: int
    """Stored events read (0 when the log did not load)."""
    problems: tuple[Problem, ...]
    """What fails the session."""
    warnings: tuple[Problem, ...]
    """What is reported without failing it (structure, unless strict)."""

    @property
    def ok(self) -> bool:
        """Whether the session passed."""
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        """The verdict as a JSON object."""
        return {
            "session": self.session_id,
            "ok": self.ok,
            "location": self.location,
            "events": self.events,
            "problems": [{"check": p.check, "message": p.message} for p in self.problems],
            "warnings": [{"check": p.check, "message": p.message} for p in self.warnings],
        }


def verify_session(store: Store, session_id: str, *, strict: bool = False) -> Verification:
    """Check ``session_id`` of ``store`` in full; nothing is written.

    Args:
        store: The store holding it (a read-only store is enough).
        session_id: The session.
        strict: Count structure problems (the invariant companions) as failures.

    Raises:
        SessionNotFound: when the store has no such session.
    """
    try:
        inspection = store.inspection(session_id)
    except SessionNotFound:
        raise
    except AgentlogError as exc:  # every reason the log does not load is the verdict
        return Verification(
            session_id=session_id,
            location=getattr(exc, "path", None),
            events=0,
            problems=(Problem(check="load", message=str(exc)),),
            warnings=(),
        )
    session = inspection.session
    failures = [
        Problem(check="history", message=problem)
        for problem in history_problems(session.derive_messages())
    ]
    structure = []
    for check in (_check_invariants, _check_compactions):
        try:
            check(session)
        except InvariantError as exc:
            structure.append(Problem(check="structure", message=str(exc)))
    return Verification(
        session_id=session_id,
        location=inspection.location,
        events=inspection.stored_events,
        problems=tuple(failures + structure if strict else failures),
        warnings=() if strict else tuple(structure),
    )


def _check_invariants(session: Session) -> None:
    check_invariants(session.events)


def _check_compactions(session: Session) -> None:
    install_compaction_invariants(session)()  # replays the whole log, then uninstalls
