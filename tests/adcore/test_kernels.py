"""The L-BFGS two-loop kernel (adcore.wasm.kernels) against independent oracles: the explicit BFGS
inverse-Hessian recursion with dense matrices, and, bit for bit, a pure-Python loop summing in
index order as Penrose's Lbfgs.ts does; its memory limit, its per-thread reuse, and a forked child."""

from __future__ import annotations

import os
import pickle
import threading
from collections.abc import Iterator

import numpy as np
import pytest
from scipy.linalg.blas import dger
from threadpoolctl import threadpool_limits

from adcore import LbfgsTwoLoop, WasmOutOfMemory
from adcore.wasm.kernels import memory_bytes

EPSD = 1e-11


def _path(n: int, steps: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Points and gradients of a well-conditioned convex quadratic (eigenvalues in [1, 11]) and a
    smooth nonlinear term, so that every pair has sᵀy > 0 and the pairs differ."""
    rng = np.random.default_rng(seed)
    d = 1.0 + 5.0 * rng.random(n)
    u = rng.normal(size=(n, 2)) / np.sqrt(n)

    def grad(x: np.ndarray) -> np.ndarray:
        return d * x + u @ (u.T @ x) + 0.1 * np.tanh(x)

    x = rng.normal(size=n)
    out = [(x, grad(x))]
    for _ in range(steps):
        x = x + rng.normal(size=n) * 0.5
        out.append((x, grad(x)))
    return out


@pytest.fixture(autouse=True)
def _one_blas_thread() -> Iterator[None]:
    """The dense oracle's BLAS calls on one thread: on a loaded machine OpenBLAS's threads wait for
    each other far longer than the arithmetic takes."""
    with threadpool_limits(1):
        yield


def _dense_bfgs(pairs: list[tuple[np.ndarray, np.ndarray]], h0: np.ndarray | None = None) -> np.ndarray:
    """H from H0 = γ I (γ of the newest pair), or diag(h0), by H <- (I - ρ s yᵀ) H (I - ρ y sᵀ) +
    ρ s sᵀ, oldest pair first; `pairs` newest first. Multiplied out, that is H - ρ s (Hy)ᵀ - ρ (Hy) sᵀ +
    (ρ² yᵀHy + ρ) s sᵀ: three rank-one updates in place (BLAS dger), so n = 3,000 stays quick."""
    s0, y0 = pairs[0]
    h = np.asfortranarray(np.diag(h0) if h0 is not None else (s0 @ y0) / (y0 @ y0 + EPSD) * np.eye(s0.size))
    for s, y in reversed(pairs):
        rho = 1.0 / (y @ s + EPSD)
        hy = h @ y  # H is symmetric: (Hy)ᵀ = yᵀH
        for alpha, u, v in ((-rho, s, hy), (-rho, hy, s), (rho * rho * (y @ hy) + rho, s, s)):
            h = dger(alpha, u, v, a=h, overwrite_a=True)
    return h


@pytest.mark.parametrize(("n", "m"), [(1, 17), (2, 17), (2, 1), (203, 17), (203, 3), (2000, 17)])
def test_direction_is_the_bfgs_inverse_hessian_times_g(n: int, m: int) -> None:
    steps = m + 6  # the ring fills, then wraps around
    path = _path(n, steps, seed=n + m)
    kernel = LbfgsTwoLoop(m, n, EPSD)
    kernel.start(*path[0])
    pairs: list[tuple[np.ndarray, np.ndarray]] = []
    checked = range(1, steps + 1) if n < 1000 else (m, steps)  # full, then wrapped
    for k in range(1, steps + 1):
        (x, g), (xp, gp) = path[k], path[k - 1]
        pairs = [(x - xp, g - gp), *pairs][:m]
        decrement = kernel.step(x, g)
        if k in checked:
            expected = _dense_bfgs(pairs) @ g
            scale = np.abs(expected).max()
            np.testing.assert_allclose(kernel.r, expected, rtol=0, atol=1e-11 * scale)
            assert decrement == pytest.approx(g @ expected, rel=1e-11)
            assert decrement > 0  # H is positive definite for pairs with sᵀy > 0


@pytest.mark.parametrize(("n", "m"), [(1, 17), (3, 2), (203, 17), (2000, 5)])
def test_a_diagonal_h0_gives_the_bfgs_inverse_hessian_from_it(n: int, m: int) -> None:
    steps = m + 4
    path = _path(n, steps, seed=7 * n + m)
    rng = np.random.default_rng(n)
    kernel = LbfgsTwoLoop(m, n, EPSD)
    kernel.start(*path[0])
    pairs: list[tuple[np.ndarray, np.ndarray]] = []
    for k in range(1, steps + 1):
        (x, g), (xp, gp) = path[k], path[k - 1]
        pairs = [(x - xp, g - gp), *pairs][:m]
        h0 = 10.0 ** rng.uniform(-3, 3, n)  # scales six orders of magnitude apart
        decrement = kernel.step(x, g, h0)
        expected = _dense_bfgs(pairs, h0) @ g
        np.testing.assert_allclose(kernel.r, expected, rtol=0, atol=1e-10 * np.abs(expected).max())
        assert decrement == pytest.approx(g @ expected, rel=1e-10)
    # the same pairs without h0: Penrose's γ I again (the diagonal left in memory is not read)
    plain = LbfgsTwoLoop(m, n, EPSD)
    plain.start(*path[0])
    for x, g in path[1:]:
        plain.step(x, g)
    kernel.start(*path[0])
    for x, g in path[1:]:
        kernel.step(x, g)
    assert kernel.r.tolist() == plain.r.tolist()


def _sequential_reference(
    path: list[tuple[np.ndarray, np.ndarray]], m: int
) -> list[tuple[list[float], float]]:
    """Penrose's L-BFGS direction in plain Python floats, every sum a loop in index order."""

    def dot(u: list[float], v: list[float]) -> float:
        z = 0.0
        for a, b in zip(u, v):
            z += a * b
        return z

    xp, gp = path[0][0].tolist(), path[0][1].tolist()
    pairs: list[tuple[list[float], list[float]]] = []
    out = []
    for x_arr, g_arr in path[1:]:
        x, g = x_arr.tolist(), g_arr.tolist()
        s = [a - b for a, b in zip(x, xp)]
        y = [a - b for a, b in zip(g, gp)]
        pairs = [(s, y), *pairs][:m]
        xp, gp = x, g
        rho = [1 / (dot(y, s) + EPSD) for s, y in pairs]
        q = list(g)
        alpha = []
        for (s, y), rho_j in zip(pairs, rho):
            a = rho_j * dot(s, q)
            alpha.append(a)
            q = [qi - a * yi for qi, yi in zip(q, y)]
        s0, y0 = pairs[0]
        gamma = dot(s0, y0) / (dot(y0, y0) + EPSD)
        r = [gamma * qi for qi in q]
        for j in range(len(pairs) - 1, -1, -1):
            s, y = pairs[j]
            beta = rho[j] * dot(y, r)
            r = [ri + si * (alpha[j] - beta) for ri, si in zip(r, s)]
        out.append((r, dot(g, r)))
    return out


@pytest.mark.parametrize(("n", "m"), [(1, 3), (2, 3), (7, 3), (31, 5), (64, 17)])
def test_sums_in_penroses_order_bit_for_bit(n: int, m: int) -> None:
    path = _path(n, 2 * m + 3, seed=100 + n)
    kernel = LbfgsTwoLoop(m, n, EPSD)
    kernel.start(*path[0])
    for (x, g), (r, decrement) in zip(path[1:], _sequential_reference(path, m)):
        assert kernel.step(x, g) == decrement
        assert kernel.r.tolist() == r


def test_memory_grows_with_n_and_stops_at_the_limit() -> None:
    kernel = LbfgsTwoLoop(17, 10, EPSD, memory_limit=4 << 20)
    small = kernel.capacity
    path = _path(20_000, 3, seed=5)  # 40 vectors of 20,000 doubles and 34 more: 6.4 MB > 4 MB
    with pytest.raises(WasmOutOfMemory, match="need 6400272 bytes"):
        kernel.resize(20_000)
    assert kernel.capacity == small  # refused before anything grew
    kernel.resize(10_000)  # 3.2 MB: grows, and the views follow the moved memory
    assert kernel.capacity >= memory_bytes(10_000, 17) > small
    short = [(x[:10_000], g[:10_000]) for x, g in path]
    kernel.start(*short[0])
    for (x, g), (r, decrement) in zip(short[1:], _sequential_reference(short, 17)):
        assert kernel.step(x, g) == decrement
        np.testing.assert_array_equal(kernel.r, r)


def test_a_size_past_32_bit_memory_is_refused_clearly() -> None:
    with pytest.raises(WasmOutOfMemory, match=r"17 pairs of 100000000 unknowns need \d+ bytes"):
        LbfgsTwoLoop(17, 100_000_000, EPSD, memory_limit=None)
    with pytest.raises(WasmOutOfMemory, match="limit 1073741824 bytes"):
        LbfgsTwoLoop(17, 5_000_000, EPSD)  # the energies' own limit, 1 GiB


def test_borrowed_kernels_are_kept_per_thread_and_never_shared() -> None:
    with LbfgsTwoLoop.borrowed(17, 5, EPSD) as first, LbfgsTwoLoop.borrowed(17, 5, EPSD) as nested:
        assert nested is not first
    with LbfgsTwoLoop.borrowed(17, 8, EPSD) as again:  # the one handed back last, emptied, resized
        assert again is first and again.n == 8 and again.count == 0
    seen: list[LbfgsTwoLoop] = []

    def other_thread() -> None:
        with LbfgsTwoLoop.borrowed(17, 5, EPSD) as k:
            seen.append(k)

    t = threading.Thread(target=other_thread)
    t.start()
    t.join()
    assert seen[0] not in (first, nested)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_runs_the_kernel_it_inherited() -> None:
    path = _path(203, 20, seed=9)
    expected = _sequential_reference(path, 17)
    with LbfgsTwoLoop.borrowed(17, 203, EPSD) as kernel:
        kernel.start(*path[0])
        kernel.step(*path[1])
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: the thread's kept kernel, a copy of the parent's
        try:
            with LbfgsTwoLoop.borrowed(17, 203, EPSD) as child_kernel:
                child_kernel.start(*path[0])
                got = [(child_kernel.step(x, g), child_kernel.r.tolist()) for x, g in path[1:]]
            os.write(write, pickle.dumps((child_kernel is kernel, got)))
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        same, got = pickle.loads(f.read())
    os.waitpid(pid, 0)
    assert same
    assert got == [(d, r) for r, d in expected]
    # the parent's kernel is untouched by the child's steps
    assert kernel.count == 1
