"""One session-id rule for every entry point: Session, every store, every backend."""

from __future__ import annotations

import pytest

from agentlog import SeedRejected, Session
from agentlog.session import MAX_ID_BYTES, check_session_id

REFUSED = {
    "": "session id must be a nonempty string, got ''",
    "a\x00b": "session id 'a\\x00b' contains a NUL character",
    "\ud800": "session id '\\ud800' contains a lone surrogate (U+D800), which has no UTF-8 form",
    "line\nbreak": "session id 'line\\nbreak' contains a control character (U+000A)",
    "tab\there": "session id 'tab\\there' contains a control character (U+0009)",
    "del\x7f": "session id 'del\\x7f' contains a control character (U+007F)",
    "c1\x85": "session id 'c1\\x85' contains a control character (U+0085)",
    "x" * 256: "session id 'xxxxxxxxxxxxxxxxxxxxxxxx'... is 256 bytes in UTF-8; at most 255 are "
    "allowed",
    "é" * 128: "is 256 bytes in UTF-8",
}


@pytest.mark.parametrize("bad", list(REFUSED), ids=repr)
def test_an_invalid_id_is_refused_with_the_reason(bad: str) -> None:
    with pytest.raises(SeedRejected) as refused:
        check_session_id(bad)
    assert REFUSED[bad] in str(refused.value)
    with pytest.raises(SeedRejected, match="session id"):
        Session.create(bad)
    with pytest.raises(SeedRejected, match="session id"):
        Session.from_events(bad, [])


@pytest.mark.parametrize("bad", [5, None, b"s1", ["s1"]])
def test_an_id_must_be_a_string(bad: object) -> None:
    with pytest.raises(SeedRejected, match="session id must be a nonempty string"):
        check_session_id(bad)


@pytest.mark.parametrize(
    "good", ["s1", " ", "é" * 127, "😀" * 63, "x" * MAX_ID_BYTES, "../x", "a/b", "~002E"]
)
def test_printable_ids_up_to_255_bytes_are_accepted(good: str) -> None:
    assert check_session_id(good) == good
    assert Session.create(good).id == good
