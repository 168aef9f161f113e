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
from energies.style.penrose_order import SMALL_MAP_LIMIT

# Immutable's hash is 32-bit integer arithmetic: numpy's uint32 operations wrap modulo 2**32 as
# JavaScript's Math.imul and `| 0` do, so the hash is computed in uint32 without masks.
_U = np.uint32


def _smi(h: np.ndarray) -> np.ndarray:
    return ((h >> _U(1)) & _U(0x40000000)) | (h & _U(0xBFFFFFFF))


def _rotl(h: np.ndarray, n: int) -> np.ndarray:
    return (h << _U(n)) | (h >> _U(32 - n))


def pair_hashes(first: np.ndarray, second: np.ndarray) -> np.ndarray:
    """`int_list_hash([first, second])` of non-negative integers below 2**30, elementwise (uint32)."""
    h = np.full(first.shape, 1, dtype=np.uint32)
    for part in (first, second):
        h = _U(31) * h + _smi(part.astype(np.uint32))
    h = _rotl(h * _U(0xCC9E2D51), 15) * _U(0x1B873593)
    h = _rotl(h, 13) * _U(5)
    h = (h + _U(0xE6546B64)) ^ _U(2)
    h = (h ^ (h >> _U(16))) * _U(0x85EBCA6B)
    h = (h ^ (h >> _U(13))) * _U(0xC2B2AE35)
    return _smi(h ^ (h >> _U(16)))


# A trie key has 7 fragments of 5 bits; the scope's position fills the bits below it, so that one
# unstable sort of distinct integers orders by key with ties in creation order (a stable sort's
# order, several times faster than one).
TRIE_BITS = 35
POSITION_BITS = 64 - TRIE_BITS


def trie_sort_keys(hashes: np.ndarray) -> np.ndarray:
    """Integers ordered as `penrose_order.trie_position` tuples of uint32 hashes: 5-bit fragments,
    low end first (six of 5 bits in uint32, in place, then the top 2 bits below them)."""
    low, part = np.zeros(hashes.shape, np.uint32), np.empty(hashes.shape, np.uint32)
    for k in range(6):
        np.bitwise_and(np.right_shift(hashes, _U(5 * k), out=part), _U(31), out=part)
        low <<= _U(5)
        low |= part
    key = low.astype(np.uint64)
    key <<= np.uint64(5)
    key |= (hashes >> _U(30)).astype(np.uint64)
    return key


def hash_order(keys: np.ndarray) -> np.ndarray:
    """`stable_argsort(keys)` of trie keys."""
    if len(keys) >= 1 << POSITION_BITS:
        return stable_argsort(keys)
    packed = (keys << np.uint64(POSITION_BITS)) | np.arange(len(keys), dtype=np.uint64)
    packed.sort()
    return (packed & np.uint64((1 << POSITION_BITS) - 1)).astype(np.int64)


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
            order = hash_order(trie_sort_keys(pair_hashes(blocks, matches)))
            runs, matches = runs[order], matches[order]
        return runs, matches
