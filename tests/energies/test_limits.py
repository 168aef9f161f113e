"""energies.limits: one deadline over every phase of a layout, and sizes refused before allocation.

Oracles: places and numbers derived by hand from the programs below; the deadline's phases from
where each program spends its time; sizes from tracemalloc (a refusal allocates almost nothing).
"""

from __future__ import annotations

import time
import tracemalloc

import pytest

from energies.diagram_build import build_diagram
from energies.lang.errors import DiagramError
from energies.limits import (
    DeadlineExceeded,
    SizeLimitError,
    check_deadline,
    check_size,
    deadline,
    remaining,
)

CANVAS = "canvas {\n  width = 400\n  height = 300\n}\n"


def refusal(substance: str, style: str, domain: str = "type Set") -> DiagramError:
    with pytest.raises(DiagramError) as caught:
        build_diagram(domain, substance, style, "v")
    return caught.value


def refusal_without_allocation(substance: str, style: str) -> DiagramError:
    tracemalloc.start()
    try:
        error = refusal(substance, style)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50_000_000, f"the refusal allocated {peak:,} bytes first"
    return error


def test_deadline_is_inherited_and_restored():
    check_deadline("nothing")  # no deadline: never raises
    assert remaining() == float("inf")
    with deadline(10.0):
        assert 9.0 < remaining() <= 10.0
        with deadline(100.0):  # a nested deadline cannot extend the outer one
            assert remaining() <= 10.0
        with deadline(0.0):
            time.sleep(0.001)
            with pytest.raises(DeadlineExceeded, match="while testing"):
                check_deadline("testing")
    assert remaining() == float("inf")


def test_deadline_is_not_swallowed_by_except_exception():
    with deadline(0.0):
        time.sleep(0.001)
        try:
            check_deadline("a library call")
        except Exception:  # noqa: BLE001 - what user-error reporting code does
            pytest.fail("DeadlineExceeded was caught as an ordinary error")
        except DeadlineExceeded:
            pass


def test_check_size_names_the_construct_and_the_limit():
    check_size("a thing", 10, 10)
    with pytest.raises(SizeLimitError, match="a thing is 11, above the limit of 10"):
        check_size("a thing", 11, 10)


@pytest.mark.parametrize(
    ("substance", "message"),
    [
        ("Set s_i for i in [1, 100000000000]", "100,000,000,000 combinations, above the limit of 5,000,000"),
        ("Set s_i for i in [1, 100000], j in [1, 100000]", "10,000,000,000 combinations"),
        (
            "Set s_i for i in [1, 4000000]",
            "makes 4,000,000 statements, beyond the Substance's limit of 100,000 statements",
        ),
    ],
)
def test_index_sets_are_judged_before_their_arrays_exist(substance, message):
    error = refusal_without_allocation(substance, CANVAS)
    assert (error.source, error.line, error.column) == ("substance", 1, 13)  # the `for`'s index set
    assert message in error.message and error.kind == "IndexSetTooLarge"


def test_the_substance_limit_counts_every_index_set(monkeypatch):
    monkeypatch.setattr("energies.lang.substance_env.MAX_SUBSTANCE_STATEMENTS", 100)
    build_diagram("type Set", "Set a_i for i in [1, 60]\nSet b_i for i in [1, 40]", CANVAS, "v")
    error = refusal("Set a_i for i in [1, 60]\nSet b_i for i in [1, 41]", CANVAS)
    assert (error.line, error.column) == (2, 13)
    assert "index set makes 41 statements" in error.message


@pytest.mark.parametrize(
    ("expr", "column", "message"),
    [
        ("count(repeat(300000000, 1))", 28, "repeat's count n is 300,000,000, above the limit of 100,000"),
        ("identity(100000)", 22, "identity's dimension n is 100,000, above the limit of 1,000"),
        (
            "ticksOnLine((0, 0), (1, 0), 1, 1000000, 1)",
            22,
            "ticksOnLine's numTicks is 1,000,000, above the limit of 100,000",
        ),
    ],
)
def test_library_sizes_are_refused_at_the_call(expr, column, message):
    error = refusal("Set a", CANVAS + f"forall Set s {{ s.r = {expr} }}")
    assert (error.source, error.line, error.column) == ("style", 5, column)
    assert message in error.message


def test_shape_count_is_refused_before_shapes_are_built(monkeypatch):
    monkeypatch.setattr("energies.style.graph.MAX_SHAPES", 10)
    style = CANVAS + "forall Set s {\n  s.c = Circle { }\n  local = Circle { }\n}"  # local shapes count
    build_diagram("type Set", "Set s_i for i in [1, 5]", style, "v")
    error = refusal("Set s_i for i in [1, 6]", style)
    assert "the Style creates 12 shapes, above the limit of 10" in error.message
    assert (error.source, error.line) in {("style", 6), ("style", 7)}  # a Circle of the sixth set


@pytest.mark.parametrize(("width", "shown"), [("-100", "-100"), ("-0.5", "-0.5"), ("1e9", "1e+09")])
def test_canvas_sizes_must_be_positive_and_bounded(width, shown):
    error = refusal("Set a", f"canvas {{\n  width = {width}\n  height = 300\n}}\n")
    assert (error.source, error.line) == ("style", 2)
    assert f"canvas.width must be from 0 to 100,000 pixels, got {shown}" in error.message


def test_a_zero_canvas_is_penroses_empty_drawing():
    build_diagram("type Set", "Set a", "canvas {\n  width = 0\n  height = 0\n}\n", "v")


def test_the_deadline_cuts_every_phase_it_reaches():
    """A diagram whose Style evaluation alone takes seconds stops within its deadline (measured
    loosely: unbounded, this build takes ten times the allowance)."""
    substance = "Set s_i for i in [1, 15000]\nAutoLabel All"
    style = CANVAS + "forall Set s {\n  s.c = Circle { }\n  s.t = Text { string: s.label }\n}"
    began = time.monotonic()
    with pytest.raises(DeadlineExceeded) as caught, deadline(0.3):
        build_diagram("type Set", substance, style, "v")
    assert time.monotonic() - began < 3.0
    assert caught.value.phase  # names what was running


def test_far_too_many_shapes_are_refused_before_the_style_runs(monkeypatch):
    monkeypatch.setattr("energies.style.env.MAX_SHAPES", 10)
    style = CANVAS + "forall Set s {\n  s.c = Circle { }\n  s.d = Circle { }\n  s.x = 1\n}"
    error = refusal("Set s_i for i in [1, 11]", style)
    assert "would create up to 22 shapes; the limit is 10" in error.message
    assert (error.source, error.line, error.column) == ("style", 5, 1)  # the block's header


def doubling(first: str, step: str, times: int = 17) -> str:
    """A Style block that doubles `s.v0` `times` - 1 times (`step` formats the previous field)."""
    lines = [f"  s.v0 = {first}"] + [f"  s.v{i} = {step.format(f's.v{i - 1}')}" for i in range(1, times)]
    return CANVAS + "forall Set s {\n" + "\n".join(lines) + "\n}\n"


def test_strings_and_paths_doubled_again_and_again_are_refused():
    error = refusal("Set A", doubling('"ab"', "{0} + {0}"))
    assert "the string would be 131,072 characters, above the limit of 100,000" in error.message
    assert (error.line, error.column) == (6 + 16, 11)  # s.v0 is on line 6; s.v16's right-hand side
    path = 'pathFromPoints("open", [(0, 0), (1, 1)])'
    error = refusal("Set A", doubling(path, "concatenatePaths([{0}, {0}])"))
    assert "the joined path's commands is 131,072, above the limit of 100,000" in error.message


def test_a_shapes_points_and_path_commands_are_bounded():
    style = CANVAS + 'forall Set s {\n  s.p = Path { d: pathFromPoints("open", repeat(6000, (1, 2))) }\n}\n'
    error = refusal("Set A", style)
    assert "`A`.p.d has 6,000 path commands, above the limit of 5,000" in error.message
    assert (error.line, error.column) == (6, 16)  # the property's name
    # (a Style's lists stop at repeat's 100,000 numbers, below the 50,000 points of a shape)
    from energies.limits import MAX_SHAPE_POINTS
    from energies.style.shapes import SIZE_LIMITS, PropType

    assert SIZE_LIMITS[PropType.PT_LIST] == (MAX_SHAPE_POINTS, "points") and MAX_SHAPE_POINTS == 50_000


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("repeat(1000, repeat(1000, 1))", "repeat's result is 1,000,000, above the limit of 100,000"),
        ("identity(200) * identity(200)", "needs 8,000,000 multiply-adds, above the limit of 1,000,000"),
        ("diagonal(repeat(5000, 1))", "diagonal's dimension is 5,000, above the limit of 1,000"),
        ("outerProduct(repeat(5000, 1), repeat(5000, 1))", "outerProduct's dimension is 5,000"),
    ],
)
def test_matrices_are_bounded_in_size_and_work(expr, message):
    error = refusal("Set a", CANVAS + f"forall Set s {{ s.r = {expr} }}")
    assert (error.source, error.line, error.column) == ("style", 5, 22)
    assert message in error.message
