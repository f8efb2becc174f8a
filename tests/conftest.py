"""Every session a test builds runs under the invariant companion (spec/core.md §11).

So every test that appends also checks turn, step and tool-call structure. Tests whose very
subject is structure-free core behaviour — the surface rules, the reference vectors, random
append sequences — opt out with ``@pytest.mark.structure_free("why")`` (per test or per module).
And no test reaches a real model: providers may talk to loopback servers only.

PostgreSQL tests take ``postgres_url``: the server at 127.0.0.1:5432 (user ``postgres``, trust
auth, database ``test``), a schema of their own that is dropped afterwards. Without a server
they skip, saying so, except under ``CI=true``, where a missing server fails them.
"""

from __future__ import annotations

import os
import uuid
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


POSTGRES_SERVER = "postgresql://postgres@127.0.0.1:5432/test"
"""The PostgreSQL server the tests use (``.ci/run`` starts it when it is not up)."""


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """A store URL on the test server, in a fresh schema of its own (dropped after the test)."""
    import psycopg  # the postgres extra is part of dev; imported here, for PostgreSQL tests only

    try:
        admin = psycopg.connect(POSTGRES_SERVER, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        reason = f"no PostgreSQL server at 127.0.0.1:5432 (user postgres, database test): {exc}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; under CI=true PostgreSQL tests must run")
        pytest.skip(reason)
    schema = f"test_{uuid.uuid4().hex[:16]}"
    try:
        yield f"{POSTGRES_SERVER}?schema={schema}"
    finally:
        with admin:
            admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
