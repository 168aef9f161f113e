"""The one LRU helper: recency order, entry and weight bounds, hit counts (hand-traced sequences)."""

from __future__ import annotations

from energies.lru import LRU


def test_lru_evicts_the_least_recently_used_and_counts_hits():
    cache: LRU[str, int] = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1  # a is now the most recent
    cache.put("c", 3)  # evicts b
    assert cache.get("b") is None and cache.get("a") == 1 and cache.get("c") == 3
    assert (cache.hits, cache.misses, len(cache)) == (3, 1, 2)
    cache.put("a", 10)  # replacing keeps one entry
    assert cache.get("a") == 10 and len(cache) == 2


def test_lru_bounded_by_weight_skips_values_heavier_than_the_bound():
    cache: LRU[str, str] = LRU(100, max_weight=10, weight=len)
    for key in "pqr":
        cache.put(key, "xxxx")  # 4 each: the third pushes the first out
    assert cache.get("p") is None and cache.weight == 8
    cache.put("huge", "x" * 11)
    assert cache.get("huge") is None and len(cache) == 2
    disabled: LRU[str, int] = LRU(0)
    disabled.put("k", 1)
    assert len(disabled) == 0
