"""Penrose's generator against the `seedrandom` package itself: the expected numbers were printed by
seedrandom 3.0.5 (the version @penrose/core 4.0.0-alpha.5 installs) in Node, `seedrandom(seed)()`."""

import pytest

from energies.shapes.seedrandom import SeedRandom, seed_key

# (seed, draws 1, 2 and 1000) from Node
NODE_DRAWS = [
    ("", 0.23144008215179881, 0.27404636548159655, 0.5946400321469282),
    ("CedarEagle308", 0.36237300961162033, 0.6133487830056529, 0.1220119852694884),
    # characters beyond Latin-1 and outside the BMP (keyed by UTF-16 code units)
    ("ünïcode-ß✓𝄞", 0.9417391920553009, 0.7532406199373638, 0.7381677756826465),
    # a seed longer than the 256-byte key folds back onto it
    ("x" * 300 + "yz", 0.7832066137260364, 0.01982222395747031, 0.5937383000907456),
]


@pytest.mark.parametrize(("seed", "first", "second", "thousandth"), NODE_DRAWS)
def test_draws_equal_seedrandom_in_node(seed: str, first: float, second: float, thousandth: float) -> None:
    rng = SeedRandom(seed)
    draws = [rng.random() for _ in range(1000)]
    assert (draws[0], draws[1], draws[999]) == (first, second, thousandth)  # exactly, bit for bit
    assert all(0.0 <= d < 1.0 for d in draws)


def test_the_key_folds_code_units() -> None:
    # by hand: each code unit fills its own slot while the seed is shorter than 256 units
    assert seed_key("ab") == [97, 98]
    # slot 0 again after 256 units: smear ^= key[0] * 19, then (smear + code) & 255
    folded = seed_key("a" + "\x00" * 255 + "b")
    assert folded[0] == ((97 * 19) + 98) & 255
    assert len(folded) == 256


def test_a_long_run_stays_exact() -> None:
    # the 5,000th draw (Node), after several refills of the keystream buffer
    rng = SeedRandom("CedarEagle308")
    values = [rng.random() for _ in range(5000)]
    assert values[-1] == 0.5619543717013633
