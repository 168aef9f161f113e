"""The iteration order of Penrose's translation maps, so shapes come out in Penrose's order.

Penrose keeps its translation in Immutable.js maps, and the order in which it meets shapes (hence
the order it samples them in and their default drawing order) is those maps' iteration order:

- a map that never held more than 8 entries iterates in insertion order, except that removing an
  entry moves the last entry into its place (Immutable's ArrayMapNode);
- once a map has held 9 entries it is a hash trie: entries iterate by their key's 32-bit hash,
  compared 5 bits at a time from the least significant end (BitmapIndexed / HashArrayMap nodes),
  until the map is emptied again. Keys with equal hashes keep their insertion order.

Hashes are Immutable's: strings by `h = 31 * h + charCode` (32-bit), lists of integers (Penrose's
`[blockId, substId]` keys of local scopes) by its ordered-collection hash with a Murmur3 finish,
both passed through `smi`, which copies bit 31 into bit 30.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")

MASK32 = 0xFFFFFFFF
SMALL_MAP_LIMIT = 8  # Immutable's MAX_ARRAY_MAP_SIZE


def smi(h: int) -> int:
    h &= MASK32
    return ((h >> 1) & 0x40000000) | (h & 0xBFFFFFFF)


def imul(a: int, b: int) -> int:
    return (a * b) & MASK32


def rotl(h: int, n: int) -> int:
    h &= MASK32
    return ((h << n) | (h >> (32 - n))) & MASK32


def string_hash(s: str) -> int:
    data = s.encode("utf-16-le")  # JavaScript strings are sequences of UTF-16 code units
    h = 0
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] | data[i + 1] << 8)) & MASK32
    return smi(h)


def int_list_hash(items: list[int]) -> int:
    """Immutable's hash of an `im.List` of small non-negative integers."""
    h = 1
    for n in items:
        h = (31 * h + smi(n)) & MASK32
    h = imul(h, 0xCC9E2D51)
    h = imul(rotl(h, 15), 0x1B873593)
    h = imul(rotl(h, 13), 5)
    h = ((h + 0xE6546B64) & MASK32) ^ len(items)
    h = imul(h ^ (h >> 16), 0x85EBCA6B)
    h = imul(h ^ (h >> 13), 0xC2B2AE35)
    return smi(h ^ (h >> 16))


def trie_position(h: int) -> tuple[int, ...]:
    """Where a hash sits in the trie's iteration: its 5-bit fragments from the low end."""
    return tuple((h >> shift) & 31 for shift in range(0, 32, 5))


class PenroseMap(Generic[K, V]):
    """A mapping that iterates in Immutable.js Map order (see the module docstring)."""

    def __init__(self, key_hash: Callable[[K], int] = string_hash) -> None:  # type: ignore[assignment]
        self._key_hash = key_hash
        self._values: dict[K, V] = {}
        self._small: list[K] | None = []  # insertion order while the map is small; None once hashed
        self._seq: dict[K, int] = {}
        self._counter = 0
        self._positions: dict[K, tuple[int, ...]] = {}  # trie positions, computed once per key

    def __len__(self) -> int:
        return len(self._values)

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __getitem__(self, key: K) -> V:
        return self._values[key]

    def get(self, key: K, default: V | None = None) -> V | None:
        return self._values.get(key, default)

    def __setitem__(self, key: K, value: V) -> None:
        if key not in self._values:
            self._counter += 1
            self._seq[key] = self._counter
            if self._small is not None:
                if len(self._small) >= SMALL_MAP_LIMIT:
                    self._small = None
                else:
                    self._small.append(key)
        self._values[key] = value

    def setdefault(self, key: K, value: V) -> V:
        if key not in self._values:
            self[key] = value
        return self._values[key]

    def pop(self, key: K, default: V | None = None) -> V | None:
        if key not in self._values:
            return default
        value = self._values.pop(key)
        del self._seq[key]
        if self._small is not None:
            i = self._small.index(key)
            last = self._small.pop()
            if i < len(self._small):
                self._small[i] = last
        if not self._values:
            self._small = []  # an emptied map starts small again
        return value

    def keys(self) -> list[K]:
        if self._small is not None:
            return list(self._small)
        return sorted(self._values, key=self._trie_key)

    def _trie_key(self, key: K) -> tuple[tuple[int, ...], int]:
        found = self._positions.get(key)
        if found is None:
            found = self._positions[key] = trie_position(self._key_hash(key))
        return found, self._seq[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self.keys())

    def items(self) -> list[tuple[K, V]]:
        return [(k, self._values[k]) for k in self.keys()]

    def values(self) -> list[V]:
        return [self._values[k] for k in self.keys()]
