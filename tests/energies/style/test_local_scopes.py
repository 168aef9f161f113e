"""The numpy hash order of local scopes against `penrose_order`, the reference implementation of
Immutable's hash and trie order, one scope at a time."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from energies.grouping import stable_argsort
from energies.style.local_scopes import hash_order, pair_hashes, trie_sort_keys
from energies.style.penrose_order import int_list_hash, trie_position

BELOW_2_30 = st.integers(0, 2**30 - 1)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(BELOW_2_30, BELOW_2_30), min_size=1, max_size=40))
def test_pair_hashes_are_immutables_hash_of_each_pair(pairs):
    first, second = (np.array(column, np.int64) for column in zip(*pairs, strict=True))
    assert pair_hashes(first, second).tolist() == [int_list_hash([a, b]) for a, b in pairs]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 3), BELOW_2_30), min_size=1, max_size=60))
def test_trie_keys_order_scopes_as_trie_positions_do(pairs):
    first, second = (np.array(column, np.int64) for column in zip(*pairs, strict=True))
    keys = trie_sort_keys(pair_hashes(first, second))
    # Python's sort is stable: ties stay in creation order, as the map iterates colliding keys.
    expected = sorted(range(len(pairs)), key=lambda i: trie_position(int_list_hash(list(pairs[i]))))
    assert hash_order(keys).tolist() == expected


def test_hash_order_is_the_stable_sort_of_keys_with_many_ties():
    rng = np.random.default_rng(3)
    keys = rng.choice(rng.integers(0, 2**35, 300, dtype=np.uint64), 100_000)
    np.testing.assert_array_equal(hash_order(keys), stable_argsort(keys))
