"""Growing Penrose trios for the scaling benchmark (benchmarks/scaling.py): N objects, one Style.

    trio(series, n, variation=0, registry=DEFAULT_REGISTRY) -> TrioSpec
    SERIES: the series names, in the order the benchmark runs them

Each series but `circles` takes its Domain and Style from the registry's own files (read, never
copied into this repository) and writes a Substance of n objects:

    graph    graph-domain/simple-graph.{domain,style}. Vertices v0..v{n-1} joined as a random
             recursive tree (vertex i > 0 hangs from a uniformly drawn earlier vertex) plus n // 4
             chords, distinct pairs drawn uniformly among the non-adjacent ones: n - 1 + n // 4
             `Edge`s, `AutoLabel All`.
    venn     set-theory-domain/setTheory.domain and venn.style. n // 4 groups of four sets: a parent
             Ag and three children Bg, Cg, Dg, each `IsSubset(child, parent)`, the children pairwise
             `NotIntersecting` (the set-theory Substances' own syntax), `AutoLabel All`.
    tree     setTheory.domain and tree.style. Sets S0..S{n-1} as a complete binary tree in heap
             order: `IsSubset(Si, S{(i-1)//2})`, the two children of a parent `NotIntersecting`
             (as tree.substance states its siblings), `AutoLabel All`. tree.style's all-pairs
             `notTooClose` makes it an all-pairs objective series next to venn's constraints.
    circles  benchmarks/style_all_pairs.py's trio: n circles of radius 10 with `ensure disjoint`
             over every pair, on that Style's fixed 800 x 700 canvas (the Style is written there,
             not in the registry).
    circles-room  the same circles, on a canvas that keeps 1,000 circles' density beyond 1,000 (800 x
             700 times sqrt(n / 1000)): 2,000 circles of radius 10 cannot fit 800 x 700 at all.

The registry Styles are written for a handful of objects on a fixed canvas; with n objects the
canvas grows so that the area per object stays that of n = 8: the numbers of the Style's
`canvas { width = W  height = H }` block become W * sqrt(n / 8) and H * sqrt(n / 8), rounded to
whole pixels (never below the Style's own), by a textual substitution of that block alone.
Anything else the Style derives from `canvas.width` (tree.style's frame) follows.

Everything is deterministic: the random graph is drawn from `random.Random` seeded with the
series and n (Python's string seeds hash with SHA-512, the same on every machine), so a size's
Substance is the same in every variation; `variation` k only picks the layout's seed,
`scaling-<series>-<n>-<k>`.
"""

from __future__ import annotations

import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from style_all_pairs import DOMAIN as CIRCLES_DOMAIN  # the benchmark next to this one
from style_all_pairs import STYLE as CIRCLES_STYLE
from style_all_pairs import substance as circles_substance

from service import TrioSpec

REPO = Path(__file__).resolve().parents[1]
DEFAULT_REGISTRY = REPO / ".." / "shared" / "penrose-registry"
BASE_N = 8  # the size whose density every larger canvas keeps
_CANVAS = re.compile(r"canvas\s*\{(?P<body>[^{}]*)\}")
_SIDE = re.compile(r"\b(?P<side>width|height)(?P<eq>\s*=\s*)(?P<value>\d+(?:\.\d*)?)")


def canvas_scale(n: int, base: int = BASE_N) -> float:
    return math.sqrt(max(n, base) / base)


def scaled_canvas(style: str, n: int, base: int = BASE_N) -> str:
    """`style` with its canvas block's width and height multiplied by sqrt(n / base), never below
    the Style's own (see above)."""
    found = list(_CANVAS.finditer(style))
    if len(found) != 1:
        raise ValueError(f"the Style has {len(found)} canvas blocks; the benchmark scales exactly one")
    block = found[0]
    factor = canvas_scale(n, base)

    def side(m: re.Match[str]) -> str:
        return f"{m['side']}{m['eq']}{round(float(m['value']) * factor)}"

    body, count = _SIDE.subn(side, block["body"])
    if count != 2:
        raise ValueError(f"the Style's canvas block sets {count} of width and height as numbers")
    return style[: block.start("body")] + body + style[block.end("body") :]


def graph_edges(n: int) -> list[tuple[int, int]]:
    """The `graph` series' edges on n vertices: a random recursive tree, then n // 4 chords."""
    rng = random.Random(f"scaling-graph-{n}")
    edges = [(rng.randrange(i), i) for i in range(1, n)]
    present = {frozenset(e) for e in edges}
    chords = n // 4
    if chords > n * (n - 1) // 2 - len(present):
        raise ValueError(f"{n} vertices have no room for {chords} chords beside a tree")
    while chords:
        u, v = rng.sample(range(n), 2)
        if frozenset((u, v)) not in present:
            present.add(frozenset((u, v)))
            edges.append((min(u, v), max(u, v)))
            chords -= 1
    return edges


def graph_substance(n: int) -> str:
    lines = [f"Vertex {', '.join(f'v{i}' for i in range(n))}", ""]
    lines += [f"Edge(v{u}, v{v})" for u, v in graph_edges(n)]
    return "\n".join([*lines, "", "AutoLabel All", ""])


def venn_substance(n: int) -> str:
    if n % 4:
        raise ValueError(f"the venn series groups sets by four; {n} is not a multiple of 4")
    lines = []
    for g in range(n // 4):
        parent, children = f"A{g}", [f"{c}{g}" for c in "BCD"]
        lines.append(f"Set {parent}, {', '.join(children)}")
        lines += [f"IsSubset({c}, {parent})" for c in children]
        lines += [f"NotIntersecting({a}, {b})" for i, a in enumerate(children) for b in children[i + 1 :]]
    return "\n".join([*lines, "", "AutoLabel All", ""])


def tree_substance(n: int) -> str:
    lines = [f"Set {', '.join(f'S{i}' for i in range(n))}", ""]
    lines += [f"IsSubset(S{i}, S{(i - 1) // 2})" for i in range(1, n)]
    lines += [f"NotIntersecting(S{i}, S{i + 1})" for i in range(1, n - 1, 2)]
    return "\n".join([*lines, "", "AutoLabel All", ""])


@dataclass(frozen=True)
class Series:
    domain: str  # registry paths of the Domain and Style; "" for the Style written in style_all_pairs
    style: str
    substance: Callable[[int], str]
    density_of: int | None = BASE_N  # the size whose area per object larger ones keep; None: the
    # Style's canvas as it is


SERIES_DEFS = {
    "graph": Series("graph-domain/simple-graph.domain", "graph-domain/simple-graph.style", graph_substance),
    "venn": Series("set-theory-domain/setTheory.domain", "set-theory-domain/venn.style", venn_substance),
    "tree": Series("set-theory-domain/setTheory.domain", "set-theory-domain/tree.style", tree_substance),
    "circles": Series("", "", circles_substance, density_of=None),
    "circles-room": Series("", "", circles_substance, density_of=1000),
}
SERIES = tuple(SERIES_DEFS)


def trio(series: str, n: int, variation: int = 0, registry: Path | str = DEFAULT_REGISTRY) -> TrioSpec:
    """The trio of `series` on n objects with layout seed number `variation`."""
    spec = SERIES_DEFS[series]
    registry = Path(registry).resolve()
    if spec.domain:
        domain = (registry / spec.domain).read_text(encoding="utf-8")
        style = (registry / spec.style).read_text(encoding="utf-8")
        base = (registry / spec.style).parent
    else:
        domain, style, base = CIRCLES_DOMAIN, CIRCLES_STYLE, Path(__file__).resolve().parent
    return TrioSpec(
        key=f"scaling/{series}-{n}",
        name=f"{series} on {n}",
        domain=domain,
        substance=spec.substance(n),
        style=style if spec.density_of is None else scaled_canvas(style, n, spec.density_of),
        variation=f"scaling-{series}-{n}-{variation}",
        exclude_warnings=(),
        base_dir=base,
    )
