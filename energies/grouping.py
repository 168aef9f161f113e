"""Grouping rows by integer codes, in bulk: the numpy passes that sort goals and matches into kinds."""

from __future__ import annotations

from math import prod

import numpy as np

# numpy's stable sort is a radix sort for integers of at most 16 bits (linear, and several times
# faster than the timsort it uses for wider ones): wider keys are sorted by 16-bit digits.
DIGIT_BITS = 16
# Keys below this many times their count (codes numbering values, as matches' and goals' are) are
# grouped through a table indexed by key: linear, without a sort.
DENSE_FACTOR = 4


def _radix_keys(keys: np.ndarray) -> bool:
    """Whether `keys` go through the radix passes: a non-empty 1-D array of non-negative integers."""
    return keys.ndim == 1 and keys.dtype.kind in "iu" and len(keys) > 0 and keys.min() >= 0


def stable_argsort(keys: np.ndarray) -> np.ndarray:
    """`np.argsort(keys, kind="stable")`, the same permutation, for 1-D integer keys: non-negative
    keys wider than 16 bits by least-significant-digit radix passes over 16-bit digits (each pass a
    stable sort of the order so far by the next digit, so ties keep their first order), others by
    numpy's."""
    keys = np.asarray(keys)
    if keys.dtype.itemsize * 8 <= DIGIT_BITS or not _radix_keys(keys):
        return np.argsort(keys, kind="stable")
    top = int(keys.max())

    def digit(k: np.ndarray) -> np.ndarray:
        return (k & 0xFFFF).astype(np.uint16)

    order = np.argsort(digit(keys), kind="stable")
    shift = DIGIT_BITS
    while top >> shift:
        order = order[np.argsort(digit(keys[order] >> np.array(shift, keys.dtype)), kind="stable")]
        shift += DIGIT_BITS
    return order


def unique_index_inverse(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`np.unique(keys, return_index=True, return_inverse=True)` (the inverse flat), the same
    arrays, for 1-D keys: non-negative integers through `stable_argsort` (a stable order makes each
    distinct key's first position its first appearance, as numpy's), others by numpy's."""
    keys = np.asarray(keys)
    if not _radix_keys(keys):
        values, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        return values, first, inverse.reshape(-1)
    top = int(keys.max())
    if top < DENSE_FACTOR * len(keys):  # codes of a few distinct values: one table entry per value
        first_at = np.full(top + 1, len(keys), np.intp)
        np.minimum.at(first_at, keys, np.arange(len(keys)))
        values = np.flatnonzero(first_at < len(keys))
        number = np.empty(top + 1, np.intp)
        number[values] = np.arange(len(values))
        return values.astype(keys.dtype), first_at[values], number[keys]
    order = stable_argsort(keys)
    ordered = keys[order]
    new = np.empty(len(keys), bool)
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    inverse = np.empty(len(keys), np.intp)
    inverse[order] = np.cumsum(new) - 1
    return ordered[new], order[new], inverse


def runs(codes: np.ndarray) -> list[np.ndarray]:
    """Indices of equal codes, one ascending array per distinct code."""
    if len(codes) == 0 or (codes == codes[0]).all():  # one run: no sort (500,000 pairs of one kind)
        return [np.arange(len(codes))]
    order = stable_argsort(codes)
    ordered = codes[order]
    cuts = np.flatnonzero(ordered[1:] != ordered[:-1]) + 1
    return np.split(order, cuts)


def row_codes(rows: np.ndarray) -> np.ndarray:
    """One int64 per row, equal exactly when the rows are equal (rows of non-negative ints)."""
    if rows.shape[1] == 0 or not len(rows):
        return np.zeros(len(rows), np.int64)
    # column by column: a reduction along a row-major table's first axis is several times slower
    lows, highs = [int(c.min()) for c in rows.T], [int(c.max()) for c in rows.T]
    if lows == highs:  # every row the same (one kind of 500,000 pairs): no codes to combine
        return np.zeros(len(rows), np.int64)
    radix = [top + 1 for top in highs]
    if prod(radix) >= 2**63:  # mixed radix would overflow: number the distinct rows instead
        return np.unique(rows, axis=0, return_inverse=True)[1].reshape(-1)
    codes = np.zeros(len(rows), np.int64)
    for column, r in zip(rows.T, radix):  # mixed radix, the last column varying fastest
        codes *= r
        codes += column
    return codes


def first_appearance(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct keys numbered in order of first appearance: (position of each one's first
    appearance, the number of each key), so that numbering depends on the keys' order only."""
    _, first, inverse = unique_index_inverse(keys)
    order = stable_argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return first[order], rank[inverse]


def grouping(keys: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Positions grouped by key (each below n): (order, starts) for `groups`."""
    order = stable_argsort(keys)
    return order, np.concatenate([[0], np.cumsum(np.bincount(keys, minlength=n))])


def groups(order: np.ndarray, starts: np.ndarray, which: np.ndarray) -> np.ndarray:
    """The entries of the given groups of a grouping (`order[starts[g]:starts[g + 1]]` is group
    g), concatenated, without a Python loop over the groups."""
    first, last = starts[which], starts[which + 1]
    lengths = last - first
    total = int(lengths.sum())
    if not total:
        return np.zeros(0, np.int64)
    shift = np.repeat(first - (np.cumsum(lengths) - lengths), lengths)
    return order[np.arange(total) + shift]
