"""The numpy helpers of the bulk join against plain Python sets and tuples."""

from __future__ import annotations

import numpy as np
import pytest

from energies.lang.match_join import _NONE, _canonical_sets, _row_ids


@pytest.mark.parametrize("width", [1, 2, 3, 8, 9, 12])
def test_canonical_sets_are_equal_exactly_when_the_python_sets_are(width):
    """Widths up to 8 use the min/max network, wider rows `np.sort`; few distinct codes make
    repeats common. A row has a _NONE in front exactly when it repeats a code."""
    rng = np.random.default_rng(width)
    rows = rng.integers(0, 4, size=(400, width))
    canon = np.stack(_canonical_sets(list(rows.T)), axis=1)
    sets = [frozenset(r.tolist()) for r in rows]
    for i in range(len(rows)):
        assert (canon[i, 0] == _NONE) == (len(sets[i]) < width)
        assert sorted(c for c in canon[i].tolist() if c != _NONE) == sorted(sets[i])
    same_canon = (canon[:, None, :] == canon[None, :, :]).all(axis=2)
    assert (same_canon == np.array([[a == b for b in sets] for a in sets])).all()


def test_row_ids_renumber_when_packing_would_overflow():
    """Columns spanning 2**40 cannot be packed three at a time into an int64."""
    rng = np.random.default_rng(0)
    base = rng.integers(0, 3, size=(300, 3))
    columns = [base[:, j] * 2**40 - 7 for j in range(3)]
    for dense in (False, True):
        ids = _row_ids(columns, len(base), dense=dense)
        rows = [tuple(r) for r in base.tolist()]
        assert all((ids[i] == ids[j]) == (rows[i] == rows[j]) for i in range(300) for j in range(0, 300, 7))
        if dense:
            assert ids.min() >= 0 and ids.max() < 2 * len(base) + 1
    assert (_row_ids([], 5) == 0).all()
