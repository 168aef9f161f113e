"""The join of a selector's candidate lists, done in bulk with numpy.

    join_candidates(lists: list[list[Candidate]], repeatable: bool, limit: int) -> Joined
    (raises `TooManyMatches` when a partial join has more than `limit` rows)

The meaning is the literal one of Penrose's `getSubsts`, which the per-candidate code this
replaced spelled out with dicts:

    joined = lists[0]
    for right in lists[1:]:       # nested-loop order, consistent pairs only
        joined = [({**a, **b}, sa | sb) for a, sa in joined for b, sb in right
                  if all(a[k] == b[k] for k in a.keys() & b.keys())]
    keep the first of each (statements used, *set* of values); unless `repeatable`, drop the
    matches binding two variables to one value

with the same refusals: a join without shared variables whose product exceeds `limit`,
or any join producing more than `limit` rows (before deduplication).

Here each list becomes a table: one column of values per variable and one of statement
indices. Values are replaced by integer codes (equal values, equal codes: a dict assigns them,
so Python's `==`/hash decide, as before); the joins produce row-index arrays (a Cartesian
product, or a hash join on the shared variables' codes, always in nested-loop order); the
deduplication and the distinct-values test run on sorted code rows. The result, `Joined`, keeps
the surviving rows as columns (which candidate of each list a row uses); a row becomes a dict only
when asked (`subst`), and a variable's values for all rows come as one column (`column`), so
an all-pairs block of a thousand objects needs no 500,000 dicts. Candidates of one list always
bind the same variables (a relation or declaration fixes them), but a symmetric predicate matched
both ways lists them in two orders, and the order of a dict's keys shows in messages: such rows
merge their candidates' dicts as above.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import repeat

import numpy as np

from energies.grouping import first_appearance
from energies.lang.substance_env import SubValue

Subst = dict[str, SubValue]
Candidate = tuple[Subst, frozenset[int]]  # a partial match and the statements it used
_NONE = -1  # "no statement" / "repeated value" in code rows
_PACK_LIMIT = 2**62  # row ids pack columns into one int64 below this
_NETWORK_WIDTH = 8  # rows at most this wide are sorted with elementwise min/max


class TooManyMatches(Exception):
    pass


@dataclass(frozen=True)
class _Table:
    """One candidate list in columns."""

    keys: tuple[str, ...]  # the variables every candidate binds, in the first one's order
    codes: dict[str, np.ndarray]  # variable -> value code of each candidate
    values: dict[str, np.ndarray]  # variable -> value of each candidate (object array)
    stmts: np.ndarray | None  # statement index used by each candidate (_NONE if none); None: all none
    substs: list[Subst]  # the candidates' dicts, for lists whose key order varies
    same_order: bool  # every candidate lists `keys` in this order

    def __len__(self) -> int:
        return len(self.substs)


def _object_array(items: list[SubValue]) -> np.ndarray:
    out = np.empty(len(items), dtype=object)
    out[:] = items
    return out


def _table(cands: list[Candidate], coder: dict[SubValue, int]) -> _Table:
    substs = [s for s, _ in cands]
    keys = tuple(substs[0])
    if any(s.keys() != set(keys) for s in substs):
        raise AssertionError(f"selector candidates bind different variables: {keys}")
    same_order = all(tuple(s) == keys for s in substs)
    codes, values = {}, {}
    for k in keys:
        column = [s[k] for s in substs]
        values[k] = _object_array(column)
        codes[k] = np.fromiter((coder.setdefault(v, len(coder)) for v in column), np.int64, len(column))
    if any(len(used) > 1 for _, used in cands):
        raise AssertionError("a selector candidate uses at most one Substance statement")
    stmts = None
    if any(used for _, used in cands):
        stmts = np.fromiter((next(iter(used), _NONE) for _, used in cands), np.int64, len(cands))
    return _Table(keys, codes, values, stmts, substs, same_order)


def _row_ids(columns: list[np.ndarray], n_rows: int, dense: bool = False) -> np.ndarray:
    """One id per row of the integer columns (each `n_rows` long): equal rows, equal ids.
    Columns are packed into one integer while it fits; `dense` asks for ids below ~2 * n_rows."""
    ids, bound = np.zeros(n_rows, dtype=np.int64), 1
    for col in columns:
        low = int(col.min(initial=0))
        span = int(col.max(initial=0)) - low + 1
        if bound * span >= _PACK_LIMIT:
            ids, bound = _renumbered(ids)
        ids, bound = ids * span + (col - low), bound * span
    if dense and bound > 2 * n_rows + 1:
        ids, bound = _renumbered(ids)
    return ids


def _renumbered(ids: np.ndarray) -> tuple[np.ndarray, int]:
    ids = np.unique(ids, return_inverse=True)[1].reshape(-1)
    return ids, int(ids.max(initial=0)) + 1


class _Joined:
    """Rows of the join so far: for each table joined, which of its candidates each row uses."""

    def __init__(self, tables: list[_Table]) -> None:
        self.tables = tables
        self.rows = [np.arange(len(tables[0]), dtype=np.int64)]
        self.source = dict.fromkeys(tables[0].keys, 0)  # variable -> last table binding it

    def __len__(self) -> int:
        return len(self.rows[0])

    def codes(self, key: str) -> np.ndarray:
        t = self.source[key]
        return self.tables[t].codes[key][self.rows[t]]

    def join_next(self, limit: int) -> None:
        """Join the next table: each row of the join so far, with each consistent candidate."""
        right = self.tables[len(self.rows)]
        n_left, n_right = len(self), len(right)
        shared = sorted(self.source.keys() & set(right.keys))
        if not shared:
            if n_left * n_right > limit:
                raise TooManyMatches
            left_rows = np.repeat(np.arange(n_left), n_right)
            right_rows = np.tile(np.arange(n_right), n_left)
        else:
            both = [np.concatenate([self.codes(k), right.codes[k]]) for k in shared]
            ids = _row_ids(both, n_left + n_right, dense=True)
            left_ids, right_ids = ids[:n_left], ids[n_left:]
            per_id = np.bincount(right_ids, minlength=int(ids.max()) + 1)
            per_left = per_id[left_ids]  # how many candidates each row meets
            total = int(per_left.sum())
            if total > limit:
                raise TooManyMatches
            by_id = np.argsort(right_ids, kind="stable")  # candidates grouped, in list order
            first_of_id = np.cumsum(per_id) - per_id
            left_rows = np.repeat(np.arange(n_left), per_left)
            offsets = np.arange(total) - np.repeat(np.cumsum(per_left) - per_left, per_left)
            right_rows = by_id[np.repeat(first_of_id[left_ids], per_left) + offsets]
        self.rows = [r[left_rows] for r in self.rows] + [right_rows]
        self.source.update(dict.fromkeys(right.keys, len(self.rows) - 1))


def _sorted_columns(columns: list[np.ndarray]) -> list[np.ndarray]:
    """The rows of the columns sorted (odd-even transposition across the few columns)."""
    if len(columns) > _NETWORK_WIDTH:
        return list(np.sort(np.stack(columns, axis=1), axis=1).T)
    cols = list(columns)
    for step in range(len(cols)):
        for i in range(step % 2, len(cols) - 1, 2):
            cols[i], cols[i + 1] = np.minimum(cols[i], cols[i + 1]), np.maximum(cols[i], cols[i + 1])
    return cols


def _canonical_sets(columns: list[np.ndarray]) -> list[np.ndarray]:
    """Each row's set of codes as a sorted row, repeats and absences turned into leading _NONE.
    Marking a repeat breaks a sorted row's order, so only rows with a repeat are sorted again
    (most of a large join's rows bind distinct objects)."""
    cols = _sorted_columns(columns)
    repeats = [b == a for a, b in zip(cols, cols[1:], strict=False)]
    if not repeats:
        return cols
    again = np.flatnonzero(np.logical_or.reduce(repeats))
    marked = cols[:1] + [np.where(r, _NONE, b) for r, b in zip(repeats, cols[1:], strict=True)]
    if len(again):
        for col, part in zip(marked, _sorted_columns([col[again] for col in marked]), strict=True):
            col[again] = part
    return marked


def _kept_rows(joined: _Joined, repeatable: bool) -> np.ndarray:
    """Rows surviving deduplication and, unless repeatable, the distinct-values test, in order."""
    values = _canonical_sets([joined.codes(k) for k in joined.source])
    used = [t.stmts[rows] for t, rows in zip(joined.tables, joined.rows, strict=True) if t.stmts is not None]
    first = np.zeros(len(joined), dtype=bool)
    first[np.unique(_row_ids(_canonical_sets(used) + values, len(joined)), return_index=True)[1]] = True
    if not repeatable and values:  # a value bound twice left a _NONE in the value set
        first &= values[0] != _NONE
    return np.flatnonzero(first)


class Joined:
    """The matches of a selector: for each row, which candidate of each list it uses.

    - `keys`: the variables, in the order `{**a, **b}` of the candidates' dicts gives them;
    - `subst(i)`: row i as a dict (as the candidates' dicts merge);
    - `column(key)`: every row's value of a variable, as (distinct values, index of each row).
    """

    def __init__(self, tables: list[_Table], picks: list[np.ndarray], source: dict[str, int]) -> None:
        self.tables = tables
        self.picks = picks  # per table: the candidate each row uses
        self.source = source  # variable -> the last table binding it (its value wins, as {**a, **b})
        self.keys = tuple(dict.fromkeys(k for t in tables for k in t.keys))
        self.same_order = all(t.same_order for t in tables)

    def __len__(self) -> int:
        return len(self.picks[0]) if self.picks else 0

    def subst(self, i: int) -> Subst:
        if self.same_order:
            return {k: self.tables[t].values[k][self.picks[t][i]] for k, t in self._sources()}
        subst: Subst = {}
        for t, p in zip(self.tables, self.picks, strict=True):
            subst.update(t.substs[int(p[i])])
        return subst

    def substs(self) -> list[Subst]:
        """Every row's dict, built in bulk."""
        if self.same_order and self.keys:
            columns = [self.tables[t].values[k][self.picks[t]].tolist() for k, t in self._sources()]
            return list(map(dict, zip(*(zip(repeat(k), col) for k, col in zip(self.keys, columns)))))
        return [self.subst(i) for i in range(len(self))]

    def column(self, key: str) -> tuple[list[SubValue], np.ndarray]:
        """Each row's value of `key`: the distinct values (in order of first row) and an index per row."""
        t = self.source[key]
        first, index = first_appearance(self.tables[t].codes[key][self.picks[t]])
        return self.tables[t].values[key][self.picks[t][first]].tolist(), index

    def _sources(self) -> list[tuple[str, int]]:
        return [(k, self.source[k]) for k in self.keys]


def _unordered_pairs(tables: list[_Table], repeatable: bool, limit: int) -> Joined | None:
    """`forall T a; T b` directly: two declarations of the same distinct candidates keep each
    unordered pair once, first as (i, j) with i < j in nested-loop order, so the rows are the
    upper triangle in row-major order, with no n x n join to deduplicate (None: not this case)."""
    if repeatable or len(tables) != 2:
        return None
    a, b = tables
    if len(a.keys) != 1 or len(b.keys) != 1 or a.keys == b.keys or a.stmts is not None or b.stmts is not None:
        return None
    codes = a.codes[a.keys[0]]
    if not np.array_equal(codes, b.codes[b.keys[0]]) or len(np.unique(codes)) != len(codes):
        return None
    n = len(codes)
    if n * (n - 1) // 2 > limit:
        raise TooManyMatches
    i, j = np.triu_indices(n, 1)
    return Joined(tables, [i, j], {a.keys[0]: 0, b.keys[0]: 1})


def join_candidates(lists: list[list[Candidate]], repeatable: bool, limit: int) -> Joined:
    """The matches of a selector from its non-empty candidate lists (see the module docstring)."""
    coder: dict[SubValue, int] = {}
    tables = [_table(cands, coder) for cands in lists]
    pairs = _unordered_pairs(tables, repeatable, limit)
    if pairs is not None:
        return pairs
    joined = _Joined(tables)
    while len(joined.rows) < len(joined.tables):
        joined.join_next(limit)
        if not len(joined):
            return Joined(joined.tables, [r[:0] for r in joined.rows], joined.source)
    kept = _kept_rows(joined, repeatable)
    return Joined(joined.tables, [rows[kept] for rows in joined.rows], joined.source)
