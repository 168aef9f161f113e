"""The block-local scopes of all matches, and the order Penrose's translation meets them in.

Penrose keys local scopes by `[blockId, substId]` in one Immutable.js map (`penrose_order`): up to
8 scopes iterate in creation order, more iterate by the hash of that list. The scopes of a block
are created together, match 0 first, so the table is one run of matches per block; the hash order
of hundreds of thousands of scopes is computed with numpy (`trie_sort_keys`), bit for bit the
`penrose_order.int_list_hash` / `trie_position` of each `[block, match]`.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from energies.grouping import stable_argsort
from energies.style.context import BlockPlan
from energies.style.penrose_order import MASK32, SMALL_MAP_LIMIT

_M = np.uint64(MASK32)


def _u(x: int) -> np.uint64:
    return np.uint64(x)


def _imul(a: np.ndarray, b: int) -> np.ndarray:
    return (a * _u(b)) & _M  # both below 2**32: the uint64 product is exact


def _rotl(h: np.ndarray, n: int) -> np.ndarray:
    return ((h << _u(n)) | (h >> _u(32 - n))) & _M


def _smi(h: np.ndarray) -> np.ndarray:
    return ((h >> _u(1)) & _u(0x40000000)) | (h & _u(0xBFFFFFFF))


def pair_hashes(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """`int_list_hash([first, second])` of non-negative integers below 2**30, elementwise."""
    h = np.full(first.shape, 1, dtype=np.uint64)
    for part in (first, second):
        h = (_u(31) * h + _smi(part.astype(np.uint64) & _M)) & _M
    h = _imul(h, 0xCC9E2D51)
    h = _imul(_rotl(h, 15), 0x1B873593)
    h = _imul(_rotl(h, 13), 5)
    h = ((h + _u(0xE6546B64)) & _M) ^ _u(2)
    h = _imul(h ^ (h >> _u(16)), 0x85EBCA6B)
    h = _imul(h ^ (h >> _u(13)), 0xC2B2AE35)
    return _smi(h ^ (h >> _u(16)))


def trie_sort_keys(hashes: np.ndarray) -> np.ndarray:
    """Integers ordered as `penrose_order.trie_position` tuples: 5-bit fragments, low end first."""
    key = np.zeros(hashes.shape, dtype=np.uint64)
    for k in range(7):
        key = (key << _u(5)) | ((hashes >> _u(5 * k)) & _u(31))
    return key


WALK_CHUNK = 4096  # scopes a walk converts to Python values at a time


class ScopeWalk:
    """The local scopes in Penrose's map order, as (run, plan, match index); a walk may drop the
    rest of a block's scopes as it goes (`drop`), so a block of a million matches that needs
    nothing more costs nothing more."""

    def __init__(self, scopes: LocalScopes) -> None:
        self.plans = [plan for plan, _ in scopes.runs]
        self.runs, self.matches = scopes.order_arrays()
        self.dropped = np.zeros(len(self.plans), bool)
        self._changed = False

    def drop(self, run: int) -> None:
        if not self.dropped[run]:
            self.dropped[run] = True
            self._changed = True

    def matches_of(self, run: int) -> np.ndarray:
        """The match indices of one block's scopes, in walk order."""
        return self.matches[self.runs == run]

    def __iter__(self) -> Iterator[tuple[int, BlockPlan, int]]:
        # Scopes are taken from the arrays WALK_CHUNK at a time: a block of millions of matches is
        # mostly dropped at its first scope, and converting all of it to Python ints would cost more
        # than the walk.
        todo = np.arange(len(self.runs))
        while len(todo):
            chunk, todo = todo[:WALK_CHUNK], todo[WALK_CHUNK:]
            runs, matches = self.runs[chunk].tolist(), self.matches[chunk].tolist()
            for i in range(len(runs)):
                yield runs[i], self.plans[runs[i]], matches[i]
                if self._changed:  # keep what is left of the blocks not dropped
                    rest = np.concatenate([chunk[i + 1 :], todo])
                    todo = rest[~self.dropped[self.runs[rest]]]
                    self._changed = False
                    break


class LocalScopes:
    """Per block, how many of its matches have a local scope (a block stops early after too many
    errors); the scopes' fields are the block's layout (`context.BlockPlan`)."""

    def __init__(self) -> None:
        self.runs: list[tuple[BlockPlan, int]] = []
        self._order: tuple[np.ndarray, np.ndarray] | None = None  # (run, match) per scope, in order

    def add_run(self, plan: BlockPlan, count: int) -> None:
        if count:
            self.runs.append((plan, count))
            self._order = None

    def __len__(self) -> int:
        return sum(count for _, count in self.runs)

    def walk(self) -> ScopeWalk:
        """Every local scope, in Penrose's map order (see `ScopeWalk`)."""
        return ScopeWalk(self)

    def order_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(run, match index) of every local scope, in Penrose's map order."""
        if self._order is None:
            self._order = self._compute_order()
        return self._order

    def _compute_order(self) -> tuple[np.ndarray, np.ndarray]:
        if not self.runs:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        runs = np.concatenate([np.full(count, i, dtype=np.int64) for i, (_, count) in enumerate(self.runs)])
        matches = np.concatenate([np.arange(count, dtype=np.int64) for _, count in self.runs])
        if len(runs) > SMALL_MAP_LIMIT:  # has held more than 8: hash order, ties in creation order
            blocks = np.array([plan.block_index for plan, _ in self.runs], dtype=np.int64)[runs]
            order = stable_argsort(trie_sort_keys(pair_hashes(blocks, matches)))
            runs, matches = runs[order], matches[order]
        return runs, matches
