"""The viewer's data: every event, its op and citations, the surface and the replacements."""

from __future__ import annotations

from agentlog import fold_surface, thaw
from agentlog.stores import Inspection
from agentlog.viewer import view_data
from tests.cli.coding import coding_session


def test_view_data_holds_the_log_compactly() -> None:
    session = coding_session()
    inspection = Inspection(
        session=session, stored_events=40, stored_version=4, location=None, torn_tail=False
    )
    data = view_data(inspection)
    assert data["session"]["storedEvents"] == 40
    assert len(data["events"]) == session.seq
    for event, (type_index, time, op, cites, payload) in zip(
        session.events, data["events"], strict=True
    ):
        assert data["types"][type_index] == event.type
        assert time == event.time
        assert thaw(payload) == thaw(event.data)
        assert cites == (None if event.source_event_seqs is None else list(event.source_event_seqs))
        if event.surface_op is None:
            assert op == 0
        elif event.surface_op == "append":
            assert op == 1
        else:
            assert op == [event.surface_op["startSeq"], event.surface_op["endSeq"]]
    assert data["surface"] == list(session.surface.nodes)
    fold = fold_surface(session.events)
    assert data["replacements"] == [[r.seq, list(r.shadowed_seqs)] for r in fold.replacements]
