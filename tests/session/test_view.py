"""``Surface``: the live, read-only view of a session's surface (``Session.surface``).

Covers spec/core.md §3: one view object for the session's life, read at call time; ``nodes``
is a tuple, the same object until the surface changes; the generations count replaces and
content changes.
"""

from __future__ import annotations

import pytest

from tests.session.support import U, new_session, rep


def test_the_surface_view_is_one_live_object() -> None:
    session = new_session()
    surface = session.surface
    session.append("user/message", U("a"), surface_op="append")
    assert session.surface is surface
    assert surface.nodes == (0,)


def test_the_nodes_tuple_is_reused_until_the_surface_changes() -> None:
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    nodes = session.surface.nodes
    session.append("turn/start", {"turn": 1})
    assert session.surface.nodes is nodes
    session.append("user/message", U("b"), surface_op="append")
    assert session.surface.nodes == (0, 2)
    assert nodes == (0,)


def test_a_same_length_replace_gives_a_new_nodes_tuple() -> None:
    session = new_session()
    session.append("user/message", U("a"), surface_op="append")
    nodes = session.surface.nodes
    session.append("user/message", U("b"), surface_op=rep(0, 0), source_event_seqs=[0])
    assert session.surface.nodes == (1,)
    assert nodes == (0,)


def test_the_view_is_read_only() -> None:
    surface = new_session().surface
    with pytest.raises(AttributeError):
        surface.nodes = (1,)  # type: ignore[misc]  # the point: a read-only property
    with pytest.raises(AttributeError):
        surface.replace_generation = 1  # type: ignore[misc]  # the point: a read-only property
    assert repr(surface) == "Surface(nodes=())"
