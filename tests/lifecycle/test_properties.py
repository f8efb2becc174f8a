"""Properties of repair and fork over random agent logs (issue 3 acceptance).

* Cut a valid log at any seq and append ``open_turn_closers(log, cause)``: the result passes
  the invariant companion and derives a provider-valid history.
* Fork a random 200-event session at every boundary: the child derives the parent's messages
  up to the cut plus the closers, and nothing done to the child reaches the parent.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentlog import (
    Session,
    build_fork_seed,
    check_invariants,
    check_provider_history,
    open_turn_closers,
)
from agentlog import messages as m
from agentlog.lifecycle import CloserCause
from tests.agent_logs import grow_agent_session


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32), length=st.integers(20, 160), data=st.data())
def test_any_cut_plus_closers_is_structurally_sound_and_provider_valid(
    seed: int, length: int, data: st.DataObject
) -> None:
    log = list(grow_agent_session(seed, length).events)
    cut = data.draw(st.integers(1, len(log)), label="cut")
    cause: CloserCause = data.draw(st.sampled_from(["interrupted", "forked"]), label="cause")
    prefix = log[:cut]
    repaired = [*prefix, *open_turn_closers(prefix, cause)]
    check_invariants(repaired)
    session = Session.from_events("repaired", repaired, restore=True)
    check_provider_history(session.derive_messages())
    assert open_turn_closers(session.events) == []  # closing twice changes nothing


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_forking_at_every_boundary_derives_the_parents_prefix_plus_closers(seed: int) -> None:
    parent = grow_agent_session(seed, 200)
    parent_events = parent.events
    parent_messages = parent.derive_messages()
    for boundary in range(parent.seq):
        child = parent.fork(boundary, f"child-{boundary}")
        prefix = list(parent_events[: boundary + 1])
        at_cut = Session.from_events("at-cut", prefix).derive_messages()
        marker = build_fork_seed(parent_events, boundary)[boundary + 1]
        closers = open_turn_closers([*prefix, marker], "forked")
        closer_messages = [c["data"]["message"] for c in closers if c["type"] == "tool/result"]
        assert child.derive_messages() == [*at_cut, *closer_messages], boundary
        assert child.inherited_event_count == boundary + 1
        assert child.events[: boundary + 1] == tuple(prefix)
        check_provider_history(child.derive_messages())
        child.append("user/message", m.user("child only"), surface_op="append")
        with pytest.raises(TypeError):
            child.events[0].data["turn"] = 99
    assert parent.events is parent_events
    assert parent.derive_messages() == parent_messages
