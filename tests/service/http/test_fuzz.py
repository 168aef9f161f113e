"""Schemathesis fuzzes our OpenAPI schema against a live server: no input may produce a 5xx, and
every status answered is one the OpenAPI document lists for that operation. Hypothesis fuzzes the
pipeline in process with well-formed Styles of arbitrary content: each ends as an SVG that parses
as XML and is inert, or as one of the pipeline's user-facing errors.

(Hypothesis drives schemathesis' strategies directly: its pytest plugin does not run under our
pytest version.)
"""

from __future__ import annotations

import warnings

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings

from energies.lang.errors import DiagramError
from energies.optimize.portfolio import PortfolioSettings
from registry.svg_check import svg_problems
from service.pipeline import LayoutError, render_trio
from service.render.svg import RenderError
from tests.energies.test_languages_fuzz import DOMAIN, STYLES, SUBSTANCE

EXAMPLES_PER_OPERATION = 30
ONE_START = PortfolioSettings(starts=1)
# Events read of an event stream (POST /live) before the client hangs up: the session's id and its
# first frame or error. The status, all the test judges, comes before any of them. A session asked
# for `paused` or `interactive` keeps its stream open for commands until it idles, so without a
# bound each such example would be read until the request's timeout. The hang-up is an input too:
# the server ends the session of a client that left.
STREAM_EVENTS = 2


@pytest.fixture(scope="module")
def operations(live_server):
    schema = schemathesis.openapi.from_url(f"{live_server}/openapi.json")
    schema.config.max_stream_events = STREAM_EVENTS
    return [result.ok() for result in schema.get_all_operations()]


def test_schema_lists_our_operations(operations):
    found = {(op.method.upper(), op.path) for op in operations}
    assert {("POST", "/diagrams"), ("GET", "/healthz"), ("GET", "/readyz"), ("GET", "/metrics")} <= found


def test_no_input_produces_a_server_error(operations, live_server):
    statuses: dict[str, list[int]] = {}
    for op in operations:
        documented = frozenset(op.definition.raw["responses"])

        @given(case=op.as_strategy())
        # derandomized: the same examples every run, so a failure reproduces and the time is the same
        @settings(
            max_examples=EXAMPLES_PER_OPERATION,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            derandomize=True,
        )
        def check(case):
            response = case.call(base_url=live_server, timeout=30)
            statuses.setdefault(f"{case.method} {case.path}", []).append(response.status_code)
            assert response.status_code < 500, (
                case.method,
                case.path,
                response.status_code,
                response.text[:500],
            )
            # check() runs within this iteration, so `documented` is this operation's
            assert str(response.status_code) in documented, (case.method, case.path, response.status_code)  # noqa: B023

        check()
    # the fuzzer really reached the renderer with many bodies
    assert len(statuses["POST /diagrams"]) >= 10


@given(style=STYLES)
@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_any_well_formed_style_ends_as_an_inert_svg_or_a_user_error(style):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rendering = render_trio(DOMAIN, SUBSTANCE, style, "fuzz", time_limit=5.0, portfolio=ONE_START)
    except (DiagramError, LayoutError, RenderError):
        return
    assert not svg_problems(rendering.svg)
    rendering.svg.encode("utf-8")
