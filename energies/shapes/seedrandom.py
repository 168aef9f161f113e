"""Penrose's random numbers: the `seedrandom` package's default generator, keyed by the variation.

    SeedRandom(seed: str).random() -> float in [0, 1)

Penrose 4.0.0-alpha.5 seeds `seedrandom(variation)` once per compile and draws every sampled
unknown from it, so drawing the same numbers in the same order gives Penrose's initial state.
The generator (seedrandom 3.0.5, written here from its published description) is RC4 keyed by the
seed: the seed's UTF-16 code units are folded into a key of at most 256 bytes, the RC4 state is
scheduled from the key and its first 256 output bytes are dropped; each number takes 6 output bytes
as a 48-bit numerator, appends further bytes until 52 significant bits are reached, and drops low
bits beyond 53, so the result is an exact fraction with a power-of-two denominator.
"""

from __future__ import annotations

WIDTH = 256  # RC4 works on bytes
MASK = WIDTH - 1
CHUNKS = 6  # bytes taken first for each number
SIGNIFICANCE = 2**52  # a number carries at least 52 significant bits
OVERFLOW = 2**53  # and at most 53
DROPPED = WIDTH  # output bytes discarded after keying (RC4-drop[256])
# Keystream bytes made at a time (one tight loop instead of a call per byte): few at first, since
# many generators (one per start of a layout) draw only a few hundred bytes; doubling after that.
FIRST_BLOCK = 512
MAX_BLOCK = 8192


def seed_key(seed: str) -> list[int]:
    """The RC4 key of `seed`: its UTF-16 code units folded into at most 256 bytes."""
    units = seed.encode("utf-16-le")
    key: list[int] = []
    smear = 0
    for j in range(len(units) // 2):
        slot = j & MASK
        if slot == len(key):
            key.append(0)  # an unset slot reads as 0
        smear ^= key[slot] * 19
        key[slot] = (smear + (units[2 * j] | units[2 * j + 1] << 8)) & MASK
    return key


class SeedRandom:
    """seedrandom's ARC4 generator: `random()` is the next float in [0, 1)."""

    def __init__(self, seed: str) -> None:
        key = seed_key(seed) or [0]  # an empty seed keys RC4 with a single zero byte
        s = list(range(WIDTH))
        j = 0
        for i in range(WIDTH):
            j = (j + key[i % len(key)] + s[i]) & MASK
            s[i], s[j] = s[j], s[i]
        self._s, self._i, self._j = s, 0, 0
        self._stream = b""
        self._pos = 0
        self._block = FIRST_BLOCK
        self._next_bytes(DROPPED)

    def _refill(self) -> None:
        s, i, j = self._s, self._i, self._j
        size = self._block
        self._block = min(2 * size, MAX_BLOCK)
        out = bytearray(size)
        for k in range(size):
            i = (i + 1) & MASK
            t = s[i]
            j = (j + t) & MASK
            u = s[j]
            s[i], s[j] = u, t
            out[k] = s[(u + t) & MASK]
        self._i, self._j = i, j
        self._stream = self._stream[self._pos :] + bytes(out)
        self._pos = 0

    def _next_bytes(self, count: int) -> int:
        """The next `count` keystream bytes as one big-endian integer."""
        p = self._pos
        if p + count > len(self._stream):
            self._refill()
            p = 0
        self._pos = p + count
        return int.from_bytes(self._stream[p : p + count], "big")

    def random(self) -> float:
        # The numerator's first CHUNKS bytes are always < 2^48 < SIGNIFICANCE, so the first byte
        # appended always joins them: take CHUNKS + 1 bytes at once (x = 0 before the first append).
        n, d = self._next_bytes(CHUNKS + 1), WIDTH ** (CHUNKS + 1)
        while n < SIGNIFICANCE:
            n, d = n * WIDTH + self._next_bytes(1), d * WIDTH
        while n >= OVERFLOW:  # drop low bits (seedrandom halves n and d, flooring the last byte)
            n, d = n // 2, d // 2
        return n / d
