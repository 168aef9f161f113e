"""A Diagram's optimization problem, compiled to WebAssembly (the optimizer's PenaltyProblem).

Compiled functions are cached by structure (the kinds' signatures and table sizes), so a repeated
request only writes new tables into memory and optimizes. Each CompiledProblem owns its Wasm
instances: use one per thread.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy import sparse

import adcore
from adcore import LRU, Compiled, cyclic_gc_paused

from ..diagram import Diagram
from ..infeasible import fixed_constraints
from ..limits import check_deadline
from ..optimize.optimizer import GoalValues, StageSpec
from ..optimize.structure import stage_carry
from .culling import FLOOR_REACH, Culler, Sorted, cullable
from .energy import (
    GRADIENT,
    LEADING,
    VALUE_ONLY,
    energy_function,
    goal_gradients_function,
    kind_function,
    table_arrays,
    table_offsets,
    value_and_grad,
)
from .goal_list import GoalList, split_goals
from .kinds import GoalKind, Memo
from .pieces import SPLIT_MIN_ROWS, Pieces, cut, threads


@dataclass
class Functions:
    energy_and_grad: adcore.Fn
    goal_gradients: adcore.Fn | None = None
    kind_fns: list[adcore.Fn] | None = None
    # per cullable kind and `near`, its bounds function (culling.bounds_function; None: it has no
    # interval rule), traced when culling first sorts goals of that structure
    bounds_fns: dict[tuple[int, bool], adcore.Fn | None] = field(default_factory=dict)
    warnings: list[tuple[str, str]] = field(default_factory=list)  # (kind, text) raised while tracing
    value_only: bool = False  # whether energy_and_grad answers φ alone (VALUE_ONLY_MIN_GOALS)
    wasm_bytes: int = 0  # the length of energy_and_grad's module, once built


# Energies of at least this many goals also answer φ alone (`energy.value_and_grad`): their module
# is a fifth to a third larger, which costs more compile time than a small energy's cheaper trials
# save (the registry's trios, all below it, gain nothing overall; docs/scaling.md).
VALUE_ONLY_MIN_GOALS = 2_000
# φ alone over a prefix of the row lists first, where it bounds φ from below (`_energy_alone`): a
# sixteenth of the rows, once at least this many are listed.
PREFIX_SHARE = 16
PREFIX_MIN_ROWS = 1 << 14
# Energies of at least this many goals start on optimized code: a single call of theirs on baseline
# code costs more than Cranelift's whole compile of the energy (500,500 circle pairs: 87 ms a
# baseline call, 5.5 ms to compile the 3 KB module), so deferring it only slows their first calls.
EAGER_MIN_GOALS = 1 << 16

ENERGY_BYTES_PER_WASM_BYTE = 60
Listed = tuple[list[np.ndarray], tuple[float, float]]  # per kind its row list; (c_obj, c_pen) left out


def functions_weight(found: Functions) -> float:
    """Bytes a cached energy holds (its IR, traced kind functions and Wasm), from its Wasm's length.
    tracemalloc, bytes retained by the cache entry alone: from 35 per Wasm byte (curve-examples/blobs,
    1.5 MB of Wasm) to 93 (matrix-library/rotate2d, 1 KB) over 11 energies (the `sets` and `vectors`
    examples, 8 registry trios drawn at random, blobs); small energies hold more per byte, as their
    code generation has grown leaner than their IR. 60 keeps every one within 2x (0.58 to 1.55)."""
    return found.wasm_bytes * ENERGY_BYTES_PER_WASM_BYTE


# Compiled energies by structure, kept after their module is built (so their weight is known); the
# byte budget is the host's (the service's layout workers: PENROSE_ENERGY_CACHE_MB).
CACHE: LRU[Any, Functions] = LRU(64, weight=functions_weight)


class CompiledProblem:
    def __init__(
        self,
        diagram: Diagram,
        *,
        time_limit: float | None = 60.0,
        cache: LRU[Any, Functions] | None = CACHE,
        culling: bool = True,
        disk_cache: str | None = None,
    ):
        t0 = time.perf_counter()
        self.diagram = diagram
        self.n_inputs = len(diagram.unknowns.x0)
        self.objectives, self.constraints = split_goals(diagram.goals)
        self.objective_names = self.objectives.names
        self.constraint_names = self.constraints.names
        self.kinds: list[GoalKind] = goal_kinds(diagram, self.objectives, self.constraints)
        self.table_starts = table_offsets(self.kinds)
        key = (self.n_inputs, tuple(k.structure() for k in self.kinds))
        found = cache.get(key) if cache is not None else None
        self.cache_hit = found is not None
        if found is None:
            with warnings.catch_warnings(record=True) as caught:  # e.g. shape pairs approximated by boxes
                warnings.simplefilter("always")
                kind_fns = []
                for i, k in enumerate(self.kinds):
                    check_deadline("compiling the energy")
                    kind_fns.append(kind_function(k, i))
            energy = energy_function(self.kinds, kind_fns, self.n_inputs)
            value_only = sum(kind.n_rows for kind in self.kinds) >= VALUE_ONLY_MIN_GOALS
            found = Functions(
                value_and_grad(energy, self.kinds, value_only=value_only),
                value_only=value_only,
                kind_fns=kind_fns,
                warnings=list(
                    dict.fromkeys(
                        (w.category.__name__, f"{w.category.__name__}: {w.message}") for w in caught
                    )
                ),
            )
        self.functions = found
        diagram.warnings.extend(
            text
            for kind, text in found.warnings
            if kind not in diagram.exclude_warnings and text not in diagram.warnings
        )
        self.trace_seconds = time.perf_counter() - t0
        t1 = time.perf_counter()
        for kind in self.kinds:  # our own tables: checked once here instead of at every gather
            for column in kind.columns:
                slots = column.slots
                if slots.size and not (slots.min() >= 0 and slots.max() < self.n_inputs):
                    raise ValueError(
                        f"goal table of {kind.name} indexes outside the {self.n_inputs} unknowns"
                    )
        # "deferred": most layouts call their energy a few hundred times, too few to repay Cranelift's
        # compile (adcore.Compiled optimizes it once its baseline calls have cost a part of that),
        # unless their calls are long (EAGER_MIN_GOALS); with a shared disk cache the optimized
        # code is compiled once for every worker and replica
        rows = sum(kind.n_rows for kind in self.kinds)
        eager = disk_cache is not None or rows >= EAGER_MIN_GOALS

        def instance() -> Compiled:
            c = Compiled(
                found.energy_and_grad,
                time_limit=time_limit,
                bounds_checks=False,
                cache_dir=disk_cache,
                tier="auto" if eager else "deferred",
            )
            self._write_tables(c)
            return c

        self.vg = instance()
        if cache is not None and not self.cache_hit:  # weighed by its Wasm, which Compiled has built
            found.wasm_bytes = self.vg.wasm_bytes
            cache.put(key, found)
        self.time_limit = time_limit
        split = threads() > 1 and rows >= SPLIT_MIN_ROWS  # summed in two pieces (`pieces`)
        self.pieces = Pieces(self.vg, instance() if split else None)
        self.wasm_seconds = time.perf_counter() - t1
        carry = stage_carry(diagram)  # keeps a large structured diagram's objects together
        self.stages = [replace(self._stage(name), carry=carry) for name in diagram.stages]
        self._active_stage: int | None = None
        # the rows each kind lists: the current stage's (`_whole`), or those left in at the culler's
        # box (`_box`: the lists and (c_obj, c_pen), what the goals left out contribute)
        self._whole: list[np.ndarray] = []
        self._box: Listed | None = None
        self._sorted: dict[int, Sorted] | None = None  # the box's kinds, as the culler sorted them
        self._inner: Listed | None = None  # the inner box's lists (`culling.InnerBox`)
        self.lists: list[np.ndarray] = []  # what the energy's memory holds: one of the two
        self.counts = [0] * len(self.kinds)  # per kind, its rows listed
        self.piece_counts = [[0] * len(self.kinds)]  # per piece of the sums (`pieces`), its share of them
        self._listed = False  # whether `lists` are in the energy's memory
        self.culled = (0.0, 0.0)
        self._valued: tuple[int, np.ndarray, bool] | None = None  # (stage, x, culled) of φ alone's last call
        # the optimizer's `ValueOnly`: φ alone, where the energy was built to answer it
        self.energy_alone: Callable[[np.ndarray, int, float, float], float] | None = (
            self._energy_alone if found.value_only else None
        )
        self.culler = (
            Culler(self.kinds, found.kind_fns, found.bounds_fns, time_limit)
            if culling and found.kind_fns is not None and any(map(cullable, self.kinds))
            else None
        )
        self.evaluations = 0

    # -- tables --------------------------------------------------------------------------------------
    # The energy's parameters (`energy.LEADING`): x, weight, c_obj, c_pen, grad, then each kind's tables
    # (`energy.table_types`), the last two of which are its row list and the list's count.
    FIRST_TABLE = len(LEADING)

    def _write_tables(self, c: Compiled) -> None:
        for k, kind in enumerate(self.kinds):
            start = self.FIRST_TABLE + self.table_starts[k]
            for j, array in enumerate(table_arrays(kind)):
                c.input(start + j)[...] = array

    def _list_rows(self, c: Compiled, k: int, rows: np.ndarray) -> int:
        """Make kind k's row list `rows` (ascending); returns its count."""
        c.input(self.FIRST_TABLE + self.table_starts[k + 1] - 2)[: len(rows)] = rows
        return len(rows)

    def _list_all(self, c: Compiled) -> list[int]:
        """Every row of every kind listed (for the goal Jacobian); the counts. (The energy's own lists are
        written again before its next evaluation.)"""
        self._listed = False
        return [self._list_rows(c, k, np.arange(kind.n_rows)) for k, kind in enumerate(self.kinds)]

    def _write_lists(self) -> None:
        self.counts = [len(rows) for rows in self.lists]
        parts = self.pieces.parts
        self.piece_counts = [[0] * len(self.kinds) for _ in parts]
        for k, rows in enumerate(self.lists):
            for j, (part, piece) in enumerate(zip(parts, cut(rows, len(parts)))):
                self.piece_counts[j][k] = self._list_rows(part, k, piece)
        self._listed = True

    def _sum(self, x: np.ndarray, weight: float, mode: int, counts: list[list[int]]) -> float:
        """φ at x over each piece's first `counts[j]` listed rows of each kind, the culled constants
        added once (`pieces`); in GRADIENT mode the pieces' gradients are left for `pieces.gradient`."""

        def piece(part: Compiled, j: int) -> float:
            part.input(0)[...] = x
            return float(part.call_raw(weight, *(self.culled if j == 0 else (0.0, 0.0)), mode, *counts[j]))

        return self.pieces.run(piece)

    def _stage(self, name: str) -> StageSpec:
        varying = self.diagram.unknowns.varying_mask(name)
        return StageSpec(
            name=name,
            varying=varying,
            objectives=self.objectives.active(name),
            constraints=self.constraints.active(name),
            fixed=fixed_constraints(self.kinds, len(self.constraints), varying),
        )

    def _in_stage(self, s: int) -> list[np.ndarray]:
        """Per kind: which of its rows take part in stage s."""
        stage = self.stages[s]
        return [
            (stage.objectives if kind.goal == "objective" else stage.constraints)[kind.goals]
            for kind in self.kinds
        ]

    def _activate(self, s: int, x: np.ndarray, sort: bool = True) -> bool:
        """List the rows of stage s, less those culled at x when culling pays (`culling.Culler`).
        Returns whether goals are culled. A point outside the box is evaluated whole the first time
        and the box kept (a line search's long trial step is followed by shorter ones, back inside);
        the second point outside in a row moves the box there. Within the box, an inner box
        (`culling.InnerBox`) lists fewer rows. Without `sort` (φ alone at a trial point, which most
        likely fails its test) a point outside the box is evaluated whole and changes nothing: a
        failing bisection's trials would sort a box at every other trial, each sort costing several
        whole evaluations of φ alone."""
        culler = self.culler
        if self._active_stage != s:
            self._whole = [np.flatnonzero(mask) for mask in self._in_stage(s)]
            self._box = self._inner = None
            self._active_stage = s
            if culler is not None:
                culler.new_stage()
        cull = culler is not None and culler.wants()
        chosen = None
        if culler is None or not cull:
            self._box = self._inner = None  # culling is off: its boxes are gone with it
        elif culler.inside(x):
            assert self._box is not None and self._sorted is not None
            inner, changed = culler.inner_lists(x, self._sorted)
            if changed:
                self._inner = self._listed_box(inner)
            culler.strays, chosen = 0, self._inner or self._box
        elif not sort:
            cull = False
        elif self._box is not None and culler.strays == 0:
            culler.strays, cull = 1, False
        elif not culler.box_lasts(x, self.stages[s].varying):
            cull = False  # steps too long for any box: whole, the box (if any) kept
        else:
            self._sorted = culler.derive(x, s, self.stages[s].varying, self._in_stage(s))
            self._box, self._inner = self._listed_box(self._sorted), None
            culler.strays, chosen = 0, self._box
        lists, culled = chosen if cull and chosen is not None else (self._whole, (0.0, 0.0))
        if lists is not self.lists or not self._listed:
            self.lists, self.culled = lists, culled
            self._write_lists()
        return cull

    def new_run(self) -> None:
        """The optimizer starts another run (a portfolio's next start): stages and culling's policy
        begin afresh, as on a fresh problem."""
        self._active_stage, self._valued = None, None
        if self.culler is not None:
            self.culler.new_run()

    def _listed_box(self, sorted_: dict[int, Sorted] | None) -> Listed | None:
        """The row lists and (c_obj, c_pen) of a box's sorted kinds, the others' whole rows."""
        if sorted_ is None:
            return None
        lists, constants = list(self._whole), {"objective": 0.0, "constraint": 0.0}
        for k, part in sorted_.items():
            lists[k] = part.rows
            constants[self.kinds[k].goal] += part.constant
        return lists, (constants["objective"], constants["constraint"])

    @property
    def tier(self) -> str:
        """The code the energy runs on: "baseline" while its optimized code is compiled in the background."""
        return self.vg.tier

    # -- the PenaltyProblem protocol ---------------------------------------------------------------
    def energy_and_grad(self, x: np.ndarray, stage: int, weight: float) -> tuple[float, np.ndarray]:
        valued, self._valued = self._valued, None
        again = valued is not None and valued[0] == stage and bool(np.array_equal(valued[1], x))
        if again:  # φ alone was just asked here (`energy_alone`): the same rows, so the same φ
            assert valued is not None
            culled = valued[2]
            if not self._listed:
                self._write_lists()
        else:
            culled = self._activate(stage, x)
        start = time.perf_counter()
        energy = self._sum(x, weight, GRADIENT, self.piece_counts)
        grad = self.pieces.gradient()
        if not again:
            self.evaluations += 1
            if self.culler is not None:
                self.culler.moved(x)
        if self.culler is not None:
            self.culler.timed(time.perf_counter() - start, culled)
        return float(energy), grad

    def _energy_alone(self, x: np.ndarray, stage: int, weight: float, above: float = math.inf) -> float:
        """φ alone at x (`energy_alone`): the number `energy_and_grad` answers there, by the energy's
        loops without derivatives; the gradient at x, if asked next, reuses its rows. Where φ need
        only be shown to exceed `above` (the optimizer's `ValueOnly`: a line search's long trial
        step fails its test by far) a lower bound may do, at a fraction of the cost: a penalty
        term is >= 0 and an objective row is at least its kind's floor (`Culler.floors`), so φ
        over the first `PREFIX_SHARE`-th of each row list (the loops sum rows in list order, and
        add the culled constants whole: a partial sum of the same sequence), plus each objective
        kind's floor for each row left out, is below φ; where it already exceeds `above` it is the
        answer. Objective kinds without a floor are summed whole."""
        culled = self._activate(stage, x, sort=False)
        energy = math.nan
        if above < math.inf and sum(self.counts) >= PREFIX_MIN_ROWS:
            bound = self._prefix_bound(x, weight)
            if bound is not None and bound > above:
                energy = bound
        if not energy > above:  # (NaN too)
            energy = self._sum(x, weight, VALUE_ONLY, self.piece_counts)
        if self.culler is not None:
            self.culler.moved(x)
        self.evaluations += 1
        self._valued = (stage, x.copy(), culled)
        return float(energy)

    def _prefix_bound(self, x: np.ndarray, weight: float) -> float | None:
        """A lower bound of φ at x over the listed rows (`_energy_alone`), or None where fewer than
        half of them may be left out (kinds without a floor are most of the rows)."""
        floors = self.culler.floors() if self.culler is not None else {}
        if floors and float(np.max(np.abs(x), initial=0.0)) > FLOOR_REACH:
            floors = {}
        prefix, below = [list(counts) for counts in self.piece_counts], 0.0
        for k, kind in enumerate(self.kinds):
            floor = 0.0 if kind.goal == "constraint" else floors.get(k)
            if floor is not None:
                for piece in prefix:  # each piece's first rows: a partial sum of its sequence
                    count, piece[k] = piece[k], -(-piece[k] // PREFIX_SHARE)
                    below += floor * (count - piece[k])
        if 2 * sum(map(sum, prefix)) > sum(self.counts):  # most rows summed anyway: the bound would not pay
            return None
        return self._sum(x, weight, VALUE_ONLY, prefix) + below

    def _row_values(self, x: np.ndarray, lists: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Per kind, the values at x of the rows `lists[k]` (ascending), in that order: one
        evaluation of the energy, which writes them out. (The energy's own lists are written again
        before its next evaluation.)"""
        self._listed = False
        counts = [self._list_rows(self.vg, k, rows) for k, rows in enumerate(lists)]
        self.vg.input(0)[...] = x
        self.vg.call_raw(0.0, 0.0, 0.0, GRADIENT, *counts)
        return [self.vg.output(2 + k)[: len(rows)] for k, rows in enumerate(lists)]

    def raw_goal_values(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every goal's value at x: one evaluation of the energy."""
        values = self._row_values(x, [np.arange(kind.n_rows) for kind in self.kinds])
        objectives = np.zeros(len(self.objectives))
        constraints = np.zeros(len(self.constraints))
        for kind, kind_values in zip(self.kinds, values):
            target = objectives if kind.goal == "objective" else constraints
            target[kind.goals] = kind_values
        return objectives, constraints

    def constraint_values(self, x: np.ndarray, which: np.ndarray, stage: int | None = None) -> np.ndarray:
        """The constraints `which` (a bool mask) at x, in constraint order: one evaluation listing
        their rows alone (the optimizer's checks read a few constraints of a diagram whose objectives
        may be most of its goals). Given the `stage` they belong to, where x lies in the culler's
        box of that stage and the constraints it left out add a penalty of exactly 0 there, those
        read 0 and only the box's rows are evaluated: each left-out term max(c, 0)² is 0 on the
        box, so c <= 0, or c > 0 by less than the square root of the smallest double, which no
        check of violations can see (the optimizer's `SelectiveValues`)."""
        box = self._penalty_free_box(x, stage)
        none = np.zeros(0, np.int64)
        if box is None:
            values = np.full(len(self.constraints), np.nan)
            lists = [np.flatnonzero(which[k.goals]) if k.goal == "constraint" else none for k in self.kinds]
        else:  # the rows listed at the box, of `which`; the others read 0
            values = np.zeros(len(self.constraints))
            lists = [
                rows[which[kind.goals[rows]]] if kind.goal == "constraint" else none
                for kind, rows in zip(self.kinds, box)
            ]
        for kind, rows, kind_values in zip(self.kinds, lists, self._row_values(x, lists)):
            values[kind.goals[rows]] = kind_values
        return values[which]

    def _penalty_free_box(self, x: np.ndarray, stage: int | None) -> list[np.ndarray] | None:
        """The row lists of stage `stage`'s current box, if x lies in it and the constraints it
        leaves out add exactly 0 (`constraint_values`)."""
        culler, box = self.culler, self._box
        if stage is None or culler is None or box is None or self._active_stage != stage:
            return None
        lists, (_, c_pen) = box
        return lists if c_pen == 0.0 and culler.inside(x) else None

    def goal_values(self, x: np.ndarray) -> GoalValues:
        objectives, constraints = self.raw_goal_values(x)
        return GoalValues(objectives, constraints)

    def goal_jacobian(self, x: np.ndarray) -> tuple[sparse.csr_array, sparse.csr_array]:
        """Sparse Jacobians (goals x inputs: each goal reads a few inputs, and a dense one of a
        large diagram would not fit in memory); only used to find the source of a NaN."""
        if self.functions.goal_gradients is None:
            assert self.functions.kind_fns is not None
            self.functions.goal_gradients = goal_gradients_function(
                self.kinds, self.functions.kind_fns, self.n_inputs
            )
        # Run once, to find where a NaN came from: not worth optimized code.
        c = Compiled(self.functions.goal_gradients, time_limit=self.time_limit, tier="baseline")
        self._write_tables(c)
        counts = self._list_all(c)
        c.input(0)[...] = x
        c.call_raw(0.0, 0.0, 0.0, GRADIENT, *counts)
        sizes = {"objective": len(self.objectives), "constraint": len(self.constraints)}
        entries: dict[str, list[np.ndarray]] = {goal: [np.zeros((3, 0))] for goal in sizes}  # goal, input, ∂
        for k, kind in enumerate(self.kinds):
            slots = kind.rows_in  # (rows, the kind's inputs), in the order of its gradients
            goals = np.repeat(np.asarray(kind.goals), slots.shape[1])
            entries[kind.goal].append(np.stack([goals, slots.ravel(), np.asarray(c.output(k)).ravel()]))
        jac = {}
        for goal, size in sizes.items():
            g, i, d = np.concatenate(entries[goal], axis=1)
            at = (g.astype(np.int64), i.astype(np.int64))
            jac[goal] = sparse.csr_array((d, at), shape=(size, self.n_inputs))
        return jac["objective"], jac["constraint"]


def goal_kinds(diagram: Diagram, objectives: GoalList, constraints: GoalList) -> list[GoalKind]:
    """The diagram's goals grouped into kind tables, kept in its cache: a diagram reused by a
    repeated request keeps its tables."""
    kinds = diagram.cache.get("kinds")
    if kinds is None:
        memo: Memo = {}  # the diagram is alive: ids of its goals' arguments are stable
        kinds = diagram.cache["kinds"] = objectives.kinds(memo) + constraints.kinds(memo)
    return kinds


def compile_problem(diagram: Diagram, **options: Any) -> CompiledProblem:
    # Tracing, differentiation and code generation allocate millions of IR objects that stay alive;
    # the collections they trigger rescan them (and every cached function) again and again: about
    # half the compile time in a long-lived process (the registry in one process: trace + codegen
    # 40-54 s with collections, 24.5 s without).
    with cyclic_gc_paused():
        return CompiledProblem(diagram, **options)
