"""The session header: storage metadata outside the log (format 4).

Covers spec/core.md §2.2 and the constructor texts E63–E75 of §14: a supplied header is
snapshotted (E64), must be a record (E63) with ``version`` 4 (E65), the session's ``id``
(E66), a non-negative safe ``createdAt`` (E67), optional ``cwd`` (absolute, POSIX: E68),
``parentSession`` (E69), ``origin`` (E71), ``delegationDepth`` (E72), ``agentPreset`` (E73),
no ``seedLength`` at all (E74; the format-0 rule E70 does not exist in format 4) and a boolean
``isSeeded`` (E75). Unknown keys are kept; the header is detached and immutable. With no header
one is synthesized from the clock. §15 scenario 51.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentlog import FORMAT_VERSION, SeedRejected, Session
from agentlog.session import new_header, stored_header
from agentlog.values import MAX_SAFE_INTEGER
from tests.session.support import CLOCK_MS, clock, raises_exactly


def header(**fields: Any) -> dict[str, Any]:
    """A valid format-4 header for session ``s`` with ``fields`` changed (``...`` removes)."""
    base: dict[str, Any] = {"version": 4, "id": "s", "createdAt": 1, "isSeeded": False}
    base.update(fields)
    return {k: v for k, v in base.items() if v is not ...}


def refused(value: Any, text: str) -> None:
    with raises_exactly(SeedRejected, text) as info:
        Session.create("s", value, clock=clock)
    assert info.value.session_id == "s"
    with raises_exactly(SeedRejected, text):
        Session.from_events("s", [], value, clock=clock)


def test_the_format_version_is_4() -> None:
    assert FORMAT_VERSION == 4


def test_a_missing_header_is_synthesized_from_the_clock() -> None:
    session = Session.create("s", clock=clock)
    assert session.header == {"version": 4, "id": "s", "createdAt": CLOCK_MS, "isSeeded": False}
    assert list(session.header) == ["version", "id", "createdAt", "isSeeded"]
    assert session.id == "s"


def test_a_valid_header_is_detached_and_immutable() -> None:
    """§15 scenario 51."""
    value = header(cwd="/work", parentSession="p", origin="subagent", delegationDepth=2)
    session = Session.create("s", value, clock=clock)
    value["cwd"] = "/elsewhere"
    assert session.header["cwd"] == "/work"
    with pytest.raises(TypeError):
        session.header["cwd"] = "/x"


def test_unknown_header_keys_are_retained() -> None:
    session = Session.create("s", header(extra={"k": [1]}, agentPreset="coder"), clock=clock)
    assert session.header["extra"] == {"k": [1]}
    assert session.header["agentPreset"] == "coder"


@pytest.mark.parametrize("value", [1, "header", [], [header()], True])
def test_a_header_must_be_a_record(value: Any) -> None:
    """E63; ``None`` means "absent" in Python and synthesizes a header instead."""
    refused(value, "session header is not a plain JSON record")


@pytest.mark.parametrize(
    "value",
    [
        header(createdAt=float("nan")),
        header(extra=(1,)),
        header(extra={1: 2}),
        header(createdAt=2**53),
    ],
)
def test_a_header_must_be_lossless_json(value: Any) -> None:
    """E64 (a ``2**53`` int is outside the value domain, deviation D4)."""
    refused(value, "session header is not losslessly JSON-serializable")


def test_a_refused_header_names_the_path_and_the_reason() -> None:
    with pytest.raises(SeedRejected) as info:
        Session.create("s", header(extra={1: 2}), clock=clock)
    assert str(info.value) == (
        "session header is not losslessly JSON-serializable: $.extra has key 1 of type int "
        "(JSON object keys are strings)"
    )
    assert info.value.spec_text == "session header is not losslessly JSON-serializable"


@pytest.mark.parametrize(
    ("version", "shown"),
    [
        (1, "1"),
        (0, "0"),
        ("4", "4"),
        (True, "true"),
        (None, "null"),
        (4.5, "4.5"),
        (..., "undefined"),
    ],
)
def test_the_version_must_be_4(version: Any, shown: str) -> None:
    """E65, with the value printed the JavaScript way."""
    refused(header(version=version), f"session header version must be 4, got {shown}")


def test_version_4_may_be_written_as_an_integral_float() -> None:
    assert Session.create("s", header(version=4.0), clock=clock).header["version"] == 4


def test_version_is_checked_first() -> None:
    refused({"version": 1}, "session header version must be 4, got 1")


@pytest.mark.parametrize(("header_id", "shown"), [("other", "other"), (..., "undefined"), (7, "7")])
def test_the_header_id_must_match_the_session(header_id: Any, shown: str) -> None:
    """E66."""
    refused(header(id=header_id), f'session header id "{shown}" does not match session id "s"')


@pytest.mark.parametrize("created", ["123", 1.5, -1, float(2**53), True, None, ...])
def test_created_at_must_be_a_non_negative_safe_integer(created: Any) -> None:
    """E67."""
    refused(
        header(createdAt=created), "session header createdAt must be a non-negative safe integer"
    )


def test_created_at_bounds() -> None:
    assert Session.create("s", header(createdAt=0), clock=clock).header["createdAt"] == 0
    top = Session.create("s", header(createdAt=MAX_SAFE_INTEGER), clock=clock)
    assert top.header["createdAt"] == MAX_SAFE_INTEGER


@pytest.mark.parametrize("cwd", [1, None, ["/a"]])
def test_cwd_must_be_a_string(cwd: Any) -> None:
    """E68."""
    refused(header(cwd=cwd), "session header cwd must be a string")


@pytest.mark.parametrize("cwd", ["relative", "", "./x", "C:\\work", "~/x"])
def test_cwd_must_be_an_absolute_posix_path(cwd: str) -> None:
    """E68."""
    refused(header(cwd=cwd), f'session header cwd must be an absolute path, got "{cwd}"')


@pytest.mark.parametrize("parent", [1, None, {}])
def test_parent_session_must_be_a_string(parent: Any) -> None:
    """E69."""
    refused(header(parentSession=parent), "session header parentSession must be a string")


@pytest.mark.parametrize("seed_length", [1, 0, "1", 0.5, -1, None])
def test_seed_length_is_forbidden_in_format_4(seed_length: Any) -> None:
    """E74: any ``seedLength`` key, valid in format 0 (E70) or not."""
    refused(header(seedLength=seed_length), 'session header has invalid field "seedLength"')


@pytest.mark.parametrize("origin", ["fork", "", None, 1])
def test_origin_must_be_subagent(origin: Any) -> None:
    """E71."""
    refused(header(origin=origin), 'session header origin must be "subagent"')


@pytest.mark.parametrize("depth", ["1", 0.5, -1, True, None])
def test_delegation_depth_must_be_a_non_negative_safe_integer(depth: Any) -> None:
    """E72."""
    refused(
        header(delegationDepth=depth),
        "session header delegationDepth must be a non-negative safe integer",
    )


@pytest.mark.parametrize("preset", [1, None, ["coder"]])
def test_agent_preset_must_be_a_string(preset: Any) -> None:
    """E73."""
    refused(header(agentPreset=preset), "session header agentPreset must be a string")


@pytest.mark.parametrize("seeded", ["yes", 1, None, ...])
def test_is_seeded_must_be_a_boolean(seeded: Any) -> None:
    """E75: required in format 4."""
    refused(header(isSeeded=seeded), "session header isSeeded must be a boolean")


@pytest.mark.parametrize("now", [1.5, -5, 2**60])
def test_a_synthesized_header_is_validated_like_a_supplied_one(now: Any) -> None:
    with pytest.raises(SeedRejected):
        Session.create("s", clock=lambda: now)


def test_new_headers_are_the_spec_header_and_stored_headers_add_what_dsh_writes() -> None:
    assert new_header("s", 5) == {"version": 4, "id": "s", "createdAt": 5, "isSeeded": False}
    child = new_header("c", 6, cwd="/w", parent="s")
    assert child == {
        "version": 4,
        "id": "c",
        "createdAt": 6,
        "cwd": "/w",
        "parentSession": "s",
        "isSeeded": True,
    }
    shuffled = {"vendor": 1, "isSeeded": False, "id": "s", "createdAt": 5, "version": 4}
    assert list(stored_header(shuffled).items()) == [
        ("version", 4),
        ("id", "s"),
        ("createdAt", 5),
        ("isSeeded", False),
        ("delegationDepth", 0),
        ("vendor", 1),
    ]
    assert stored_header({**shuffled, "delegationDepth": 2})["delegationDepth"] == 2
