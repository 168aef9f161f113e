"""Schemathesis fuzzes our OpenAPI schema against a live server: no input may produce a 5xx.

(Hypothesis drives schemathesis' strategies directly: its pytest plugin does not run under our
pytest version.)
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

EXAMPLES_PER_OPERATION = 30


@pytest.fixture(scope="module")
def operations(live_server):
    schema = schemathesis.openapi.from_url(f"{live_server}/openapi.json")
    return [result.ok() for result in schema.get_all_operations()]


def test_schema_lists_our_operations(operations):
    found = {(op.method.upper(), op.path) for op in operations}
    assert {("POST", "/diagrams"), ("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/metrics")} <= found


def test_no_input_produces_a_server_error(operations, live_server):
    statuses: dict[str, list[int]] = {}
    for op in operations:

        @given(case=op.as_strategy())
        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, suppress_health_check=list(HealthCheck))
        def check(case):
            response = case.call(base_url=live_server, timeout=30)
            statuses.setdefault(f"{case.method} {case.path}", []).append(response.status_code)
            assert response.status_code < 500, (
                case.method,
                case.path,
                response.status_code,
                response.text[:500],
            )

        check()
    # the fuzzer really reached the renderer with many bodies
    assert len(statuses["POST /diagrams"]) >= 10
