"""What the Style evaluator produces and the energy compiler consumes: one diagram, before layout.

Values inside (shape properties, goal arguments) follow docs/energies-design.md: numbers, strings,
booleans, lists, colors, path commands, and `energies.expr.Node` wherever a value depends on the
unknowns vector `x` (whose initial values are `Unknowns.x0`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from energies.expr import Hole, Path, instantiate
from energies.grouping import first_appearance
from energies.shapes.seedrandom import SeedRandom


@dataclass
class ShapeInstance:
    """A shape of the diagram: `name` is its Style path (e.g. "`A`.icon"), `props` Penrose's properties."""

    name: str
    kind: str
    props: dict[str, Any]


@dataclass(eq=False)
class HoleShape(ShapeInstance, Hole):
    """A shape inside a template (`energies.expr`): it stands for the shape at `hole` of each row,
    and its `props` are holes too, so library code computing on it builds a value over holes."""

    hole: tuple[int, Path] = (0, ())


@dataclass(frozen=True, slots=True)
class Where:
    """Where something came from in the Style program, for messages."""

    line: int = 0
    column: int = 0
    block: str = ""  # the selector text of the block, shortened
    match: str = ""  # the substitution, e.g. "x=A, y=B"

    def __str__(self) -> str:
        loc = f"style:{self.line}:{self.column}" if self.line else "style"
        match = self.match
        extra = ", ".join(p for p in (self.block and f"block {self.block}", match and f"match {match}") if p)
        return f"{loc} ({extra})" if extra else loc


@dataclass(slots=True)
class GoalInstance:
    """One `ensure` (constraint) or `encourage` (objective) applied to evaluated arguments."""

    kind: Literal["constraint", "objective"]
    name: str  # Penrose's function name, a key of energies.library.CONSTRAINTS / OBJECTIVES
    args: list[Any]
    stages: tuple[str, ...] = ()  # Penrose's stage annotation: `in [..]` (exclude False) or `except [..]`
    exclude: bool = True  # with stages=() and exclude=True: active in every stage
    where: Where = field(default_factory=Where)
    implicit: bool = False  # added by the system (e.g. onCanvas for ensureOnCanvas shapes)

    def active_in(self, stage: str) -> bool:
        return (stage in self.stages) != self.exclude

    def describe(self) -> str:
        return f"{_verb(self.kind)} {self.name} at {self.where}"


def _verb(kind: str) -> str:
    return "ensure" if kind == "constraint" else "encourage"


@dataclass(frozen=True, slots=True)
class Column:
    """One argument of a goal table: row k's argument is `values[index[k]]`."""

    values: Sequence[Any]  # the distinct arguments (often one list shared by several columns)
    index: np.ndarray  # one integer per row

    @staticmethod
    def shared(value: Any, n_rows: int) -> Column:
        """The same argument in every row (a padding, the canvas width)."""
        return Column([value], np.zeros(n_rows, np.intp))

    @staticmethod
    def of(values: Sequence[Any]) -> Column:
        """`values` row by row, each distinct object once (a shape met in many rows is one value;
        the objects are alive, so their ids identify them), in the order of their first row: not
        of their ids, memory addresses that differ from run to run."""
        ids = np.fromiter(map(id, values), np.uint64, len(values))
        if len(ids) and (ids == ids[0]).all():  # one object in every row (a padding): no sort
            return Column.shared(values[0], len(ids))
        first, index = first_appearance(ids)
        return Column([values[i] for i in first.tolist()], index)


@dataclass(slots=True)
class GoalTable:
    """Goals applying one library function to rows of arguments, stored as columns.

    Row k is `name(columns[0][k], columns[1][k], ...)`; the rows share their stages and origin.
    A program that asks for all pairs of a thousand shapes to be disjoint states 500,000 goals:
    as `GoalInstance`s they cost a Python object each (and 0.6 s to group into tables before
    compiling); as one table they are two index arrays. Order and numbering are the same as if
    the rows were written out one by one at the table's place in `Diagram.goals`.

    A `templated` table's last column holds its arguments as one template (`energies.expr`) over
    holes in the other columns, e.g. `[vdist(h0, h1) - 5]` with column 0 holding each row's
    `x.center` and column 1 its `y.center`: row k's arguments are the template with its holes
    filled by row k's column values.
    """

    kind: Literal["constraint", "objective"]
    name: str
    columns: list[Column]
    stages: tuple[str, ...] = ()
    exclude: bool = True
    where: Where = field(default_factory=Where)  # of the statement
    implicit: bool = False
    match_text: Callable[[int], str] | None = None  # each row's match (`x=A, y=B`), for messages
    templated: bool = False  # the last column is a template over the others (see above)

    def __post_init__(self) -> None:
        if not self.columns:
            raise ValueError(f"goal table {self.name}: a table needs at least one argument column")
        n = len(self.columns[0].index)
        for k, c in enumerate(self.columns):
            if c.index.ndim != 1 or len(c.index) != n or c.index.dtype.kind not in "iu":
                raise ValueError(f"goal table {self.name}, column {k}: want {n} integer indices")
            if n and not (int(c.index.min()) >= 0 and int(c.index.max()) < len(c.values)):
                raise ValueError(f"goal table {self.name}, column {k}: index outside {len(c.values)} values")

    def __len__(self) -> int:
        return len(self.columns[0].index)

    def column_values(self, row: int) -> list[Any]:
        return [c.values[int(c.index[row])] for c in self.columns]

    def args(self, row: int) -> list[Any]:
        values = self.column_values(row)
        return list(instantiate(values[-1], values[:-1])) if self.templated else values

    def row(self, row: int) -> GoalInstance:
        return GoalInstance(
            self.kind, self.name, self.args(row), self.stages, self.exclude, self.where_at(row), self.implicit
        )

    def where_at(self, row: int) -> Where:
        if self.match_text is None:
            return self.where
        w = self.where
        return Where(w.line, w.column, w.block, self.match_text(row))

    def active_in(self, stage: str) -> bool:
        return (stage in self.stages) != self.exclude

    def describe_all(self) -> list[str]:
        """Every row's description, as `describe` gives it, in bulk (a report of 500,000 goals)."""
        if self.match_text is None:
            return [self.describe(k) for k in range(len(self))]
        texts = getattr(self.match_text, "texts", None)
        matches = texts() if texts is not None else [self.match_text(k) for k in range(len(self))]
        w, head = self.where, f"{_verb(self.kind)} {self.name} at "
        # Where's text around a non-empty match, made once: where_at(k) would make it per row
        before, after = str(Where(w.line, w.column, w.block, "\0")).split("\0")
        return [
            f"{head}{before}{m}{after}" if m else f"{head}{Where(w.line, w.column, w.block)}" for m in matches
        ]

    def describe(self, row: int) -> str:
        shown = ", ".join(_brief(a) for a in self.args(row))
        if self.match_text is not None:  # a Style statement's row: its match says which goal it is
            return f"{_verb(self.kind)} {self.name} at {self.where_at(row)}"
        return f"{_verb(self.kind)} {self.name}({shown}) at {self.where}, row {row}"


def _brief(arg: Any) -> str:
    if isinstance(arg, ShapeInstance):
        return arg.name
    if isinstance(arg, (int, float)) and not isinstance(arg, bool):
        return f"{arg:g}"
    return type(arg).__name__


Goal = GoalInstance | GoalTable


def each_goal(goals: Sequence[Goal]) -> Iterator[GoalInstance]:
    """Every goal as a GoalInstance, tables written out row by row (for inspection and tests)."""
    for g in goals:
        if isinstance(g, GoalTable):
            yield from (g.row(k) for k in range(len(g)))
        else:
            yield g


def count_goals(goals: Sequence[Goal], kind: str) -> int:
    """How many goals of a class ("constraint" or "objective"), each table row counting as one."""
    return sum(len(g) if isinstance(g, GoalTable) else 1 for g in goals if g.kind == kind)


@dataclass
class Unknowns:
    """The optimization inputs: initial values, names, the stages in which each one varies, and the
    uniform range each was sampled from (None for a value the Style fixed, or a color), from which a
    multi-start portfolio draws other initial states."""

    x0: list[float] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    stages: list[tuple[tuple[str, ...], bool]] = field(default_factory=list)  # (stages, exclude) as for goals
    ranges: list[tuple[float, float] | None] = field(default_factory=list)

    def add(
        self,
        value: float,
        name: str,
        stages: tuple[str, ...] = (),
        exclude: bool = True,
        sampled_from: tuple[float, float] | None = None,
    ) -> int:
        self.x0.append(float(value))
        self.names.append(name)
        self.stages.append((stages, exclude))
        self.ranges.append(sampled_from)
        return len(self.x0) - 1

    def varying_mask(self, stage: str) -> np.ndarray:
        return np.array([(stage in s) != ex for s, ex in self.stages], dtype=bool)

    def resample(self, rng: SeedRandom) -> np.ndarray:
        """Another initial state: every sampled unknown drawn again from its range, the rest as x0."""
        x = np.array(self.x0, dtype=np.float64)
        for i, r in enumerate(self.ranges):
            u = rng.random()  # one draw per unknown, so each unknown's value is independent of others'
            if r is not None:
                x[i] = u * max(r[1] - r[0], 0.0) + r[0]
        return x


@dataclass
class Diagram:
    canvas: tuple[float, float]  # width, height
    shapes: list[ShapeInstance]  # in drawing order (layering applied), back to front
    goals: list[Goal]  # single goals and tables, in the order Style states them
    unknowns: Unknowns
    stages: list[str] = field(default_factory=lambda: [""])  # `layout = [...]`, or one unnamed stage
    warnings: list[str] = field(default_factory=list)
    variation: str = ""
    exclude_warnings: tuple[str, ...] = ()  # the trio's excludeWarnings, for warnings found later
    # pairs of Substance objects (their Penrose names, as in shape names `A`.icon) that a statement
    # relates: a predicate's object arguments, a binding's object and arguments (starts that follow
    # the Substance's structure, energies.optimize.structure)
    relations: list[tuple[str, str]] = field(default_factory=list)
    cache: dict[str, Any] = field(default_factory=dict, repr=False)  # derived data (e.g. goal kinds)
