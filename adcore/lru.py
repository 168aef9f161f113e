"""A bounded, thread-safe least-recently-used map, the one cache helper of adcore, energies and service.

    cache = LRU(64)                                    # at most 64 entries
    cache = LRU(100, max_weight=2**20, weight=size)    # and at most 1 MiB by `weight(value)`
    cache.get(key) -> value | None;  cache.put(key, value);  cache.pop(key);  cache.clear();  len(cache)
    cache.hits, cache.misses;  cache.weight (the stored values' total)
    cache.limit(max_weight): a new weight bound, evicting least recently used entries down to it

A value heavier than `max_weight` alone is not stored (it would evict everything else), and
replaces no older value of its key. It lives in adcore, the lowest layer, because adcore's module
cache uses it too (adcore imports nothing of energies).

Why not cachetools: its `LRUCache` bounds one total (`maxsize`, counted by `getsizeof`), so it cannot
bound entries and bytes at once, it raises on a value larger than the bound instead of skipping it,
it keeps no hit counts, and it is not thread-safe (the workers' compile threads share these caches).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    def __init__(
        self, max_entries: int, max_weight: float = math.inf, weight: Callable[[V], float] | None = None
    ):
        self.max_entries = max_entries
        self.max_weight = max_weight
        self.weigh = weight or (lambda value: 0.0)
        self.weight = 0.0  # the stored values' total
        self.hits = 0
        self.misses = 0
        self._items: OrderedDict[K, tuple[V, float]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def get(self, key: K) -> V | None:
        with self._lock:
            item = self._items.get(key)
            if item is None:
                self.misses += 1
                return None
            self._items.move_to_end(key)
            self.hits += 1
            return item[0]

    def put(self, key: K, value: V) -> None:
        w = self.weigh(value)
        if self.max_entries <= 0 or w > self.max_weight:
            return
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self.weight -= old[1]
            self._items[key] = (value, w)
            self.weight += w
            self._evict()

    def pop(self, key: K) -> V | None:
        with self._lock:
            item = self._items.pop(key, None)
            if item is None:
                return None
            self.weight -= item[1]
            return item[0]

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.weight = 0.0

    def limit(self, max_weight: float) -> None:
        with self._lock:
            self.max_weight = max_weight
            self._evict()

    def _evict(self) -> None:
        """Oldest first, until both bounds hold (the caller holds the lock)."""
        while len(self._items) > self.max_entries or self.weight > self.max_weight:
            _, (_, evicted) = self._items.popitem(last=False)
            self.weight -= evicted
