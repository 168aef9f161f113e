"""A scale per unknown for L-BFGS's initial inverse Hessian H0, for rounds over many unknowns.

Penrose's L-BFGS starts its two-loop recursion from H0 = γ I, one scale γ = sᵀy / yᵀy for every
unknown. In a large diagram that one scale is set by the stiffest unknowns: a label pressed against
another under a penalty weight of 1e3 has curvature thousands of times a free label's, so every
free label creeps at the stiff ones' step and a round takes thousands of iterations. A scale per
unknown lets each move at its own pace.

The update is M1QN3's diagonal one (J. C. Gilbert and C. Lemaréchal, "Some numerical experiments
with variable-storage quasi-Newton algorithms", Math. Programming 45, 1989): after each pair (s, y)
with sᵀy > 0, B = D⁻¹ is first scaled by yᵀDy / yᵀs (Oren and Spedicato's factor, which makes the
scaled D fit this pair's curvature on average), then given the diagonal of its BFGS update:

    B⁺ᵢ = bᵢ - (bᵢ sᵢ)² / Σ bⱼ sⱼ² + yᵢ² / yᵀs,    bᵢ = (yᵀDy / yᵀs) / Dᵢ,    D⁺ᵢ = 1 / B⁺ᵢ.

On a separable quadratic (y = A s, A diagonal) D = A⁻¹ is a fixed point (where each 1 / aᵢ lies
within the bounds below). Until the first pair with sᵀy > 0, H0 is Penrose's γ I; at that pair D is
set to γ I and updated with it. Each Dᵢ is kept within a factor ``SPREAD`` of γ of the newest pair,
either way: a coordinate whose pairs carry little curvature (sᵢ yᵢ near 0) would otherwise get a
scale that sends it far in one step. Every sum is numpy's pairwise one, the
same on every machine; the two-loop recursion stays Penrose's, in Wasm (adcore's ``LbfgsTwoLoop``
with ``h0``).

When it is used (`scaled`): by Penrose's L-BFGS driver (`penrose_lbfgs`, the default; not
L-BFGS-B's), in a round whose varying unknowns number ``FROM_UNKNOWNS`` or more. Below, Penrose's
own γ I, so that every diagram of Penrose's registry (at most 502 unknowns) keeps Penrose's
trajectory to the last bit. Measured effect, and the variants not kept: docs/optimizer-evidence.md.
"""

from __future__ import annotations

import numpy as np

FROM_UNKNOWNS = 512  # rounds over at least this many unknowns scale each one
SPREAD = 1e3  # Dᵢ within [γ / SPREAD, γ · SPREAD], γ of the newest pair


def scaled(n: int) -> bool:
    """Whether a round over n unknowns uses a scale per unknown."""
    return n >= FROM_UNKNOWNS


class DiagonalScaling:
    """D, the diagonal of H0, updated from each new pair (module docstring)."""

    def __init__(self) -> None:
        self.d: np.ndarray | None = None  # None until a pair with sᵀy > 0

    def update(self, s: np.ndarray, y: np.ndarray) -> np.ndarray | None:
        """Take the newest pair into D; returns D, or None while H0 is still Penrose's γ I."""
        ys = float(np.add.reduce(s * y))
        if not ys > 0.0:  # no curvature to learn from (and NaN): D as it was
            return self.d
        yy = y * y
        gamma = ys / float(np.add.reduce(yy))
        d = np.full(s.shape, gamma) if self.d is None else self.d
        b = (float(np.add.reduce(yy * d)) / ys) / d
        bs = b * s
        updated = b - bs * bs / float(np.add.reduce(bs * s)) + yy / ys
        with np.errstate(divide="ignore"):  # B⁺ᵢ > 0 in exact arithmetic; 0 after rounding is clipped
            self.d = np.clip(1.0 / np.maximum(updated, 0.0), gamma / SPREAD, gamma * SPREAD)
        return self.d
