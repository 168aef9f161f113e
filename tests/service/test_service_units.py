"""Small pieces of the service: content negotiation, the result cache, the layout job's classification."""

from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from energies.lang.errors import DiagramError, DiagramErrors
from service.examples import example
from service.http.diagrams import negotiate
from service.http.result_cache import ResultCache, request_key
from service.jsonable import finite_or_none
from service.settings import settings_from_env
from service.workers.layout_job import diagnostics_of, run_layout, wire


def test_negotiate_respects_media_types_and_quality():
    assert negotiate("application/json") == "json"
    assert negotiate(None) == negotiate("") == "svg"
    assert negotiate("image/svg+xml") == "svg"
    assert negotiate("*/*") == negotiate("image/*") == negotiate("text/html") == "svg"  # the default
    assert negotiate("image/svg+xml;q=0.5, application/json") == "json"
    assert negotiate("application/json;q=0.2, image/svg+xml") == "svg"
    assert negotiate("application/json;q=0") == "svg"
    assert negotiate("text/html, application/json, */*;q=0.8") == "json"
    assert negotiate("image/png") == "png"
    assert negotiate("application/pdf, image/svg+xml;q=0.9") == "pdf"
    assert negotiate("image/png;q=0.5, image/svg+xml") == "svg"
    assert negotiate("image/png, */*;q=0.8") == "png"


def test_request_key_depends_on_every_field():
    base = ("d", "s", "t", "v", ["W"])
    keys = {request_key(*base)}
    for i in range(4):
        changed = list(base)
        changed[i] = changed[i] + "x"
        keys.add(request_key(*changed))
    keys.add(request_key("d", "s", "t", "v", []))
    assert len(keys) == 6
    # field boundaries matter: ("ab", "c") is not ("a", "bc")
    assert request_key("ab", "c", "", "", []) != request_key("a", "bc", "", "", [])
    assert request_key("d", "s", "t", "v", ["A", "B"]) == request_key("d", "s", "t", "v", ["B", "A"])


def test_result_cache_is_lru_and_bounded_by_entries_and_bytes():
    cache = ResultCache(max_entries=2, max_bytes=10_000)
    cache.put("a", {"svg": "A"})
    cache.put("b", {"svg": "B"})
    assert cache.get("a") == {"svg": "A"}  # 'a' is now the most recent
    cache.put("c", {"svg": "C"})
    assert cache.get("b") is None and cache.get("a") is not None and cache.get("c") is not None
    by_size = ResultCache(max_entries=100, max_bytes=5_000)
    for k in "pqr":
        by_size.put(k, {"svg": "x" * 1_500})  # 2,524 bytes each with the report allowance
    assert len(by_size) == 1 and by_size.get("r") is not None
    assert by_size.weight <= 5_000
    by_size.put("huge", {"svg": "x" * 10_000})  # larger than the whole cache: not stored
    assert by_size.get("huge") is None and by_size.get("r") is not None


def test_finite_or_none_makes_reports_json_safe():
    value = {"e": math.inf, "g": [1.0, math.nan, {"v": -math.inf}], "s": "x", "i": 3}
    out = finite_or_none(value)
    assert out == {"e": None, "g": [1.0, None, {"v": None}], "s": "x", "i": 3}
    json.dumps(out, allow_nan=False)
    import numpy as np

    assert finite_or_none({"n": np.float64("nan"), "k": np.int64(3), "t": (np.float32(0.5),)}) == {
        "n": None,
        "k": 3,
        "t": [0.5],
    }


def test_diagnostics_are_deduplicated_by_place_and_message():
    one = DiagramError("style", 3, 5, "unknown constraint foo", "x\n^")
    other = DiagramError("style", 4, 1, "bad")
    diags = diagnostics_of(DiagramErrors([one, one, other, one]))
    assert [(d.line, d.message) for d in diags] == [(3, "unknown constraint foo"), (4, "bad")]


def test_run_layout_classifies_outcomes():
    trio = example("vectors")
    job = {"domain": trio.domain, "substance": trio.substance, "style": trio.style, "timeLimit": 10}
    ok = run_layout({**job, "variation": trio.variation})
    assert ok.ok and ok.svg.startswith("<svg")
    json.dumps(wire(ok), allow_nan=False)  # the worker's answer is plain JSON
    bad = run_layout({**job, "substance": "Vector u\nOrthogonal(u, nope)\n"})
    assert bad.kind == "diagram" and bad.diagnostics[0].source == "substance"
    arrow = run_layout({**job, "style": trio.style.replace('"straight"', '"zigzag"')})
    assert arrow.kind == "render" and "zigzag" in arrow.message


def test_run_layout_is_safe_unless_the_job_says_unsafe():
    trio = example("sets")
    style = trio.style + '\nforall Set s {\n  s.h = Circle { onclick: "alert(1)" }\n}\n'
    job = {"domain": trio.domain, "substance": trio.substance, "style": style, "timeLimit": 10}
    assert "onclick" not in run_layout(job).svg
    assert 'onclick="alert(1)"' in run_layout({**job, "unsafeSvg": True}).svg


def test_the_unsafe_setting_is_read_as_a_flag(monkeypatch):
    for raw, expected in (
        ("", False),
        ("0", False),
        ("off", False),
        ("1", True),
        ("TRUE", True),
        ("yes", True),
    ):
        monkeypatch.setenv("PENROSE_UNSAFE_SVG", raw)
        assert settings_from_env().unsafe_svg is expected
    monkeypatch.setenv("PENROSE_UNSAFE_SVG", "maybe")
    with pytest.raises(
        ValueError, match="PENROSE_UNSAFE_SVG must be 1/true/yes/on or 0/false/no/off, got 'maybe'"
    ):
        settings_from_env()


TOKENS = [
    "{",
    "}",
    "(",
    ")",
    ",",
    ";",
    "=",
    ":",
    "?",
    "forall",
    "where",
    "ensure",
    "1e309",
    "-",
    ".",
    '"',
    "\n",
]


@st.composite
def mutated_trio(draw):
    name = draw(st.sampled_from(["sets", "graph", "vectors"]))
    trio = example(name)
    texts = {"domain": trio.domain, "substance": trio.substance, "style": trio.style}
    which = draw(st.sampled_from(sorted(texts)))
    text = texts[which]
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.integers(0, len(text)))
        if draw(st.booleans()):
            text = text[:pos] + text[pos + draw(st.integers(1, 6)) :]
        else:
            text = text[:pos] + draw(st.sampled_from(TOKENS)) + text[pos:]
    texts[which] = text
    return {**texts, "variation": trio.variation, "timeLimit": 5}


@given(job=mutated_trio())
@settings(max_examples=40, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
def test_mutated_examples_never_end_as_internal_errors(job):
    # every broken program is the user's mistake: a located diagnostic, never a crash of ours
    outcome = run_layout(job)
    assert outcome.ok or outcome.kind != "internal", outcome.message


def test_a_layout_out_of_time_before_wasm_is_a_timeout_naming_the_phase():
    """15,000 labelled sets take seconds to evaluate, before anything runs in Wasm."""
    style = "canvas {\n  width = 400\n  height = 300\n}\n"
    style += "forall Set s {\n  s.t = Text { string: s.label }\n}\n"
    job = {"domain": "type Set", "substance": "Set s_i for i in [1, 15000]\nAutoLabel All", "style": style}
    outcome = run_layout({**job, "timeLimit": 0.3})
    assert (outcome.kind, outcome.status) == ("layout", "timeout")
    assert outcome.message.startswith("the layout exceeded its time limit of 0.3 s while ")


def test_a_layout_out_of_time_while_optimizing_says_how_far_it_got():
    """300 circles that cannot all fit a 60 x 60 canvas: the penalty weight grows round after round
    until the time limit; the message says the layout was optimizing, and for how long."""
    style = "canvas {\n  width = 60\n  height = 60\n}\n"
    style += "forall Set x { x.icon = Circle { r: 10 } }\n"
    style += "forall Set x; Set y { ensure disjoint(x.icon, y.icon, 2) }\n"
    job = {"domain": "type Set", "substance": "Set s_i for i in [1, 300]", "style": style}
    outcome = run_layout({**job, "timeLimit": 2})
    assert (outcome.kind, outcome.status) == ("layout", "timeout")
    so_far = r"(, after [\d,]+ evaluations of its energy)?"  # (none where Wasm itself was cut)
    assert re.fullmatch(
        f"the layout exceeded its time limit of 2 s while optimizing{so_far}", outcome.message
    )


def test_an_energy_wasm_cannot_compile_is_a_layout_error_not_a_crash(monkeypatch):
    from adcore import WasmCompileError

    def refuse(*args, **kwargs):
        raise WasmCompileError("invalid wasm module: function too large")

    monkeypatch.setattr("service.pipeline.compile_problem", refuse)
    trio = example("sets")
    job = {"domain": trio.domain, "substance": trio.substance, "style": trio.style, "timeLimit": 10}
    outcome = run_layout({**job, "variation": "wasm-refused"})
    assert (outcome.kind, outcome.status) == ("layout", "optimize-error")
    assert "too large to compile" in outcome.message


# The documented variables (docs/operations.md), typed as their settings: an independent list.
VARIABLES = {
    "PENROSE_WORKERS": ("workers", "7", 7),
    "PENROSE_TIME_LIMIT": ("time_limit", "2.5", 2.5),
    "PENROSE_MAX_BODY_BYTES": ("max_body_bytes", "7", 7),
    "PENROSE_CACHE_ENTRIES": ("result_cache_entries", "7", 7),
    "PENROSE_CACHE_BYTES": ("result_cache_bytes", "7", 7),
    "PENROSE_KILL_GRACE": ("kill_grace", "2.5", 2.5),
    "PENROSE_QUEUE": ("queue_limit", "7", 7),
    "PENROSE_QUEUE_SECONDS": ("queue_seconds", "2.5", 2.5),
    "PENROSE_MAX_TOTAL_BODY_BYTES": ("max_total_body_bytes", "7", 7),
    "PENROSE_WORKER_MEMORY_MB": ("worker_memory_mb", "7", 7),
    "PENROSE_WORKER_RECYCLE_MB": ("worker_recycle_mb", "7", 7),
    "PENROSE_COMPILE_CACHE_DIR": ("compile_cache_dir", "/srv/cache", "/srv/cache"),
    "PENROSE_COMPILE_CACHE_MB": ("compile_cache_mb", "7", 7),
    "PENROSE_DIAGRAM_CACHE_MB": ("diagram_cache_mb", "7", 7),
    "PENROSE_ENERGY_CACHE_MB": ("energy_cache_mb", "7", 7),
    "PENROSE_MODULE_CACHE_MB": ("module_cache_mb", "7", 7),
    "PENROSE_PARSE_CACHE_MB": ("parse_cache_mb", "7", 7),
    "PENROSE_DRAIN_SECONDS": ("drain_seconds", "2.5", 2.5),
    "PENROSE_LIVE_SESSIONS": ("live_sessions", "7", 7),
    "PENROSE_LIVE_IDLE": ("live_idle", "2.5", 2.5),
    "PENROSE_UNSAFE_SVG": ("unsafe_svg", "on", True),
    "PENROSE_START_PROCESSES": ("start_processes", "7", 7),
    "PENROSE_EVALUATION_THREADS": ("evaluation_threads", "2", 2),
}


def test_every_setting_is_read_from_its_documented_variable(monkeypatch):
    from service.settings import Settings

    assert {field for field, _, _ in VARIABLES.values()} == set(Settings.model_fields)
    for name, (_, raw, _) in VARIABLES.items():
        monkeypatch.setenv(name, raw)
    s = settings_from_env()
    assert {field: getattr(s, field) for field, _, _ in VARIABLES.values()} == {
        field: value for field, _, value in VARIABLES.values()
    }
    assert Settings(workers=1).workers == 1  # explicit settings never read the environment
    monkeypatch.setenv("PENROSE_WORKERS", "")  # empty is unset
    assert settings_from_env().workers == Settings().workers == 2
    monkeypatch.setenv("PENROSE_WORKERS", "two")
    with pytest.raises(ValueError, match="PENROSE_WORKERS must be a whole number, got 'two'"):
        settings_from_env()
    monkeypatch.setenv("PENROSE_WORKERS", "2")
    monkeypatch.setenv("PENROSE_EVALUATION_THREADS", "0")
    with pytest.raises(ValueError, match="PENROSE_EVALUATION_THREADS must be at least 1, got '0'"):
        settings_from_env()
