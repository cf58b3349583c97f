"""Property-based fuzzing of the whole HTTP API from its own OpenAPI schema (Schemathesis), on SQLite and
on PostgreSQL: every operation (the three proxies and the MCP endpoint included), generated bodies, paths
and queries, with a tenant's key. Every answer must be documented in the schema (status, content type,
body), none a 5xx, none a stack trace.

Bounded (``MAX_EXAMPLES`` per operation) so that the suite stays within CI's time; the three proxies
forward to the upstream test server (``tests.support.upstream``), which answers in each API's format."""

from __future__ import annotations

import itertools

import pytest
import schemathesis
from schemathesis import GenerationMode
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import FailedHealthCheck, Unsatisfiable
from schemathesis.config import SchemathesisConfig
from schemathesis.core.failures import FailureGroup

from tests.support.servers import create_key
from tests.support.upstream import Upstream

MAX_EXAMPLES = 100
# Every Schemathesis check runs, with two adjustments. "Schema-valid data is accepted" is off: the API
# refuses some schema-valid requests on purpose, with a documented 4xx a schema cannot express (a budget
# too small for the constraints: 422 budget_too_small; a tenant's quota: 413). "Invalid data is
# rejected" also accepts 413, the answer to a body over the size limit.
CONFIG = SchemathesisConfig.from_dict(
    {
        "checks": {
            "positive_data_acceptance": {"enabled": False},
            "negative_data_rejection": {"expected-statuses": ["400", "401", "404", "405", "413", "422", "429"]},
        }
    }
)


@pytest.fixture(scope="module")
def fuzz_server(module_store_db, spawn_module_server):
    key = create_key(module_store_db, "fuzzer")
    with Upstream() as upstream:
        server = spawn_module_server("--db", module_store_db, "--no-abstractive", "--upstream", upstream.url,
                                     "--rate-limit", "0", name="fuzz")
        yield server, {"Authorization": f"Bearer {key}"}, upstream
        server.stop()


def test_every_operation_answers_as_documented(fuzz_server):
    """Each operation of the schema in turn, ``MAX_EXAMPLES`` valid and as many invalid generated cases,
    every Schemathesis check on every answer (its pytest plugin does not run under this pytest)."""
    server, auth, upstream = fuzz_server
    api = schemathesis.openapi.from_url(server.url + "/openapi.json", headers=auth, config=CONFIG)
    operations = [result.ok() for result in api.get_all_operations()]
    labels = {op.label for op in operations}
    assert len(operations) >= 15 and {"POST /v1/responses", "POST /v1/messages", "POST /mcp"} <= labels, labels
    failures = []
    for operation, mode in itertools.product(operations, (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)):

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=MAX_EXAMPLES, deadline=None, database=None,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
        def fuzz(case):
            response = case.call_and_validate(base_url=server.url, headers=auth)
            assert response.status_code < 500, response.text[:300]
            assert "Traceback" not in response.text

        try:
            fuzz()
        except (Unsatisfiable, FailedHealthCheck):
            assert mode is GenerationMode.NEGATIVE, operation.label  # nothing in it can be made invalid
        except (Exception, FailureGroup) as exc:  # every operation is fuzzed; all failures are reported together
            failures.append(f"{operation.label} ({mode.value}): {str(exc)[:1500]}")
    assert not failures, "\n\n".join(failures)
    # the three proxies packed and forwarded generated requests, not only refused them
    assert {r.api for r in upstream.requests if not r.violations} == {"chat", "responses", "anthropic"}
