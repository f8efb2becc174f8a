"""Every session a test builds runs under the invariant companion (spec/core.md §11).

So every test that appends also checks turn, step and tool-call structure. Tests whose very
subject is structure-free core behaviour — the surface rules, the reference vectors, random
append sequences — opt out with ``@pytest.mark.structure_free("why")`` (per test or per module).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import settings

from agentlog import install_invariants
from agentlog.session import on_session_created

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
