"""The one LRU helper: recency order, entry and weight bounds, hit counts (hand-traced sequences)."""

from __future__ import annotations

from adcore import LRU


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


def test_lru_over_its_byte_budget_evicts_oldest_first_by_weight():
    # weights 4, 3, 5 against a budget of 10; hand-traced: a+b = 7 fit, + c = 12 evicts a (-> 8),
    # a read of b makes c the oldest, + d (6) = 14 evicts c (-> 9: b, d)
    cache: LRU[str, str] = LRU(100, max_weight=10, weight=len)
    cache.put("a", "xxxx")
    cache.put("b", "xxx")
    assert (len(cache), cache.weight) == (2, 7)
    cache.put("c", "xxxxx")
    assert cache.get("a") is None and cache.weight == 8
    assert cache.get("b") == "xxx"
    cache.put("d", "xxxxxx")
    assert cache.get("c") is None and cache.get("b") == "xxx" and cache.get("d") == "xxxxxx"
    assert cache.weight == 9
    cache.limit(6)  # recency after the reads above is b, then d: b (the oldest) goes, d (6) fits alone
    assert cache.get("b") is None and cache.get("d") == "xxxxxx" and cache.weight == 6
    assert cache.pop("d") == "xxxxxx" and (len(cache), cache.weight) == (0, 0)
    cache.put("e", "x")
    cache.clear()
    assert (len(cache), cache.weight, cache.get("e")) == (0, 0, None)
