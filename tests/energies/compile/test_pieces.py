"""An energy summed in two pieces on two threads (energies.compile.pieces): against the one-piece
sum of the same problem, φ alone against φ with its gradient bit for bit, hand-derived cuts, and
the helper thread's errors, threads and forks."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import numpy as np
import pytest

from energies.compile import pieces, problem
from energies.compile.pieces import Pieces, cut, set_threads
from energies.compile.problem import CompiledProblem
from tests.energies.compile.test_problem import LIB, circles_diagram, numpy_energy, test_library  # noqa: F401


def test_cut_gives_consecutive_parts_the_first_the_smallest() -> None:
    assert [p.tolist() for p in cut(np.arange(5), 2)] == [[0, 1], [2, 3, 4]]
    assert [p.tolist() for p in cut(np.arange(4), 2)] == [[0, 1], [2, 3]]
    assert [p.tolist() for p in cut(np.arange(1), 2)] == [[], [0]]
    assert [p.tolist() for p in cut(np.arange(0), 2)] == [[], []]


@pytest.fixture
def split_small(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Energies of any size are summed in pieces, on two threads."""
    monkeypatch.setattr(problem, "SPLIT_MIN_ROWS", 1)
    set_threads(2)
    yield
    set_threads(None)


def _problems(n: int, seed: int) -> tuple[Any, CompiledProblem, CompiledProblem]:
    d = circles_diagram(n, seed=seed)
    set_threads(1)
    whole = CompiledProblem(d, cache=None, culling=False)
    set_threads(2)
    split = CompiledProblem(d, cache=None, culling=False)
    return d, whole, split


@pytest.mark.usefixtures("split_small")
def test_two_pieces_give_the_one_piece_energy_and_gradient() -> None:
    d, whole, split = _problems(40, seed=5)
    assert len(whole.pieces.parts) == 1 and len(split.pieces.parts) == 2
    rng = np.random.default_rng(6)
    for _ in range(5):
        x = np.array(d.unknowns.x0) + rng.normal(scale=10.0, size=len(d.unknowns.x0))
        for weight in (1.0, 1e3):
            e1, g1 = whole.energy_and_grad(x, 0, weight)
            e2, g2 = split.energy_and_grad(x, 0, weight)
            assert e2 == pytest.approx(e1, rel=1e-12)
            assert e1 == pytest.approx(numpy_energy(d, x, weight), rel=1e-10)
            np.testing.assert_allclose(g2, g1, rtol=1e-12, atol=1e-12 * np.abs(g1).max())


@pytest.mark.usefixtures("split_small")
def test_phi_alone_is_phi_with_its_gradient_bit_for_bit_in_pieces() -> None:
    d = circles_diagram(70, seed=8)  # 2,415 pairs: energies this large answer φ alone
    split = CompiledProblem(d, cache=None, culling=False)
    assert split.energy_alone is not None and len(split.pieces.parts) == 2
    x = np.array(d.unknowns.x0)
    alone = split.energy_alone(x, 0, 1e3, np.inf)
    energy, _ = split.energy_and_grad(x, 0, 1e3)
    assert np.float64(alone).tobytes() == np.float64(energy).tobytes()


class _Part:
    """A stand-in for an instance: `call` reads what it needs from it."""

    def __init__(self, value: float, error: Exception | None = None, delay: float = 0.0) -> None:
        self.value, self.error, self.delay = value, error, delay
        self.thread: int | None = None
        self.finished = False

    def __call__(self) -> float:
        self.thread = threading.get_ident()
        time.sleep(self.delay)
        self.finished = True
        if self.error is not None:
            raise self.error
        return self.value


def _run(parts: list[_Part]) -> float:
    first, second = parts
    return Pieces(first, second).run(lambda part, j: part())  # type: ignore[arg-type,misc]


def test_the_second_piece_runs_on_another_thread_and_adds_after_the_first() -> None:
    parts = [_Part(0.1), _Part(0.2)]
    assert _run(parts) == 0.1 + 0.2
    assert parts[0].thread == threading.get_ident() != parts[1].thread


def test_an_error_in_either_piece_is_raised_once_both_have_ended() -> None:
    slow = _Part(1.0, delay=0.2)
    with pytest.raises(ValueError, match="piece 0"):
        _run([_Part(0.0, ValueError("piece 0")), slow])
    assert slow.finished  # the helper's piece ended before the error reached the caller
    with pytest.raises(ValueError, match="piece 1"):
        _run([_Part(0.0), _Part(0.0, ValueError("piece 1"))])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_child_starts_its_own_helper() -> None:
    assert _run([_Part(1.0), _Part(2.0)]) == 3.0  # the parent's helper exists
    pid = os.fork()
    if pid == 0:  # the child: the parent's helper thread is not here
        try:
            os._exit(0 if _run([_Part(1.0), _Part(2.0)]) == 3.0 else 1)
        except BaseException:  # noqa: BLE001 - any failure is the child's exit code
            os._exit(2)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0


def test_threads_follow_the_setting_and_refuse_nonsense() -> None:
    try:
        set_threads(1)
        assert pieces.threads() == 1
        set_threads(8)
        assert pieces.threads() == 2  # never more than the pieces
        with pytest.raises(ValueError, match="at least 1"):
            set_threads(0)
    finally:
        set_threads(None)
