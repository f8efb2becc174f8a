"""Every session a test builds runs under the invariant companion (spec/core.md §11).

So every test that appends also checks turn, step and tool-call structure. Tests whose very
subject is structure-free core behaviour — the surface rules, the reference vectors, random
append sequences — opt out with ``@pytest.mark.structure_free("why")`` (per test or per module).
And no test reaches a real model: providers may talk to loopback servers only.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import settings

import agentlog.providers.base
from agentlog import install_invariants
from agentlog.session import on_session_created

# No test may reach a real model: providers refuse every server but loopback ones (the fake
# servers), in this process and in the child processes tests start.
agentlog.providers.base.ALLOW_MODEL_REQUESTS = False
os.environ["AGENTLOG_ALLOW_MODEL_REQUESTS"] = "0"

# The fake model servers' fixtures (openai_server, anthropic_server), for any test that drives
# a provider or the loop over real HTTP.
pytest_plugins = ["tests.providers.fake_openai", "tests.providers.fake_anthropic"]

settings.register_profile("agentlog", deadline=None)
settings.load_profile("agentlog")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "structure_free(reason): sessions in this test may break turn/step structure on "
        "purpose, so the invariant companion is not installed",
    )


@pytest.fixture(autouse=True)
def _invariant_companion(request: pytest.FixtureRequest) -> Iterator[None]:
    marker = request.node.get_closest_marker("structure_free")
    if marker is not None:
        if not marker.args:
            pytest.fail("structure_free needs a reason")
        yield
        return
    remove = on_session_created(install_invariants)
    try:
        yield
    finally:
        remove()
