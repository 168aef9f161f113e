"""energies.grouping.stable_argsort and unique_index_inverse against numpy's stable argsort and
np.unique (the plain versions they replace): the same arrays for every integer dtype, range and
pattern of ties; row_codes against np.unique's rows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from energies.grouping import DENSE_FACTOR, row_codes, stable_argsort, unique_index_inverse

DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("top", [0, 1, 255, 65535, 65536, 2**20 + 3, 2**35, 2**63 - 1, 2**64 - 1])
def test_the_same_permutation_as_numpys_stable_sort(dtype, top):
    info = np.iinfo(dtype)
    top = min(top, int(info.max))
    rng = np.random.default_rng(top % 1000)
    for n in (1, 2, 7, 5000):
        # few distinct keys (many ties) and many, each reaching the range's top
        for distinct in (3, n):
            pool = rng.integers(0, top, distinct, dtype=dtype, endpoint=True)
            keys = rng.choice(pool, n)
            keys[0] = top
            assert np.array_equal(stable_argsort(keys), np.argsort(keys, kind="stable"))


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(st.sampled_from(DTYPES), st.integers(0, 300)))
def test_any_keys_sort_as_numpy_sorts_them(keys):
    assert np.array_equal(stable_argsort(keys), np.argsort(keys, kind="stable"))


def test_negative_and_two_dimensional_keys_take_numpys_sort():
    keys = np.array([5, -1, 3, -1, 70000], np.int64)
    assert np.array_equal(stable_argsort(keys), np.argsort(keys, kind="stable"))
    grid = np.array([[3, 1], [2, 2]], np.int64)
    assert np.array_equal(stable_argsort(grid), np.argsort(grid, kind="stable"))


def numpys_unique(keys: np.ndarray) -> tuple[np.ndarray, ...]:
    values, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return values, first, inverse.reshape(-1)


@settings(max_examples=200, deadline=None)
@given(hnp.arrays(st.sampled_from([*DTYPES, np.float64]), st.integers(0, 300)))
def test_unique_gives_numpys_values_first_positions_and_inverse(keys):
    ours, theirs = unique_index_inverse(keys), numpys_unique(keys)
    for a, b in zip(ours, theirs, strict=True):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint64])
def test_unique_of_many_wide_keys_with_ties(dtype):
    rng = np.random.default_rng(7)
    keys = rng.choice(rng.integers(0, 2**31, 500, dtype=dtype), 20_000)
    for a, b in zip(unique_index_inverse(keys), numpys_unique(keys), strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("top", [1, 499, 20_000 * DENSE_FACTOR - 1, 20_000 * DENSE_FACTOR])
def test_unique_of_many_codes_below_and_above_the_dense_bound(top):
    # Codes of few values go through a table indexed by key, wider ones through the sort.
    rng = np.random.default_rng(top)
    keys = rng.choice(np.r_[rng.integers(0, top, 300), top], 20_000).astype(np.int64)
    for a, b in zip(unique_index_inverse(keys), numpys_unique(keys), strict=True):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype


@settings(max_examples=200, deadline=None)
@given(
    hnp.arrays(np.int64, st.tuples(st.integers(0, 60), st.integers(0, 4)), elements=st.integers(0, 3)),
    st.booleans(),
)
def test_row_codes_are_equal_exactly_where_rows_are(rows, same):
    if same and len(rows):
        rows[:] = rows[0]  # every row the same
    codes = row_codes(rows)
    assert codes.shape == (len(rows),)
    if len(rows) and rows.shape[1]:
        inverse = np.unique(rows, axis=0, return_inverse=True)[1].reshape(-1)
        assert np.array_equal(codes[:, None] == codes[None, :], inverse[:, None] == inverse[None, :])
        # mixed radix, the last column varying fastest: codes ascend as the rows do
        order = np.lexsort(rows.T[::-1])
        assert np.all(np.diff(codes[order]) >= 0)
