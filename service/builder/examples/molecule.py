"""A water molecule: atoms-and-bonds' one-water-molecule (atoms-and-bonds.style), rebuilt in Python.

Each atom is its symbol on a white disc, grouped; each single bond is a line 100 px long between
two atoms; the two bonds of the oxygen meet at water's 104.5 degrees.
"""

from __future__ import annotations

from service.builder import DiagramBuilder, constraints
from service.builder import functions as fn

TRIO = "atoms-and-bonds/one-water-molecule.trio.json"
ATOMS = {"H1": "H", "H2": "H", "O1": "O"}
BONDS = [("H1", "O1"), ("H2", "O1")]  # single bonds
BOND_LENGTH, ANGLE = 100, 104.5  # px, degrees


def build(variation: str = "PorcellanaFlamingo3169") -> DiagramBuilder:
    db = DiagramBuilder(800, 700, variation)
    symbol, atom = {}, {}
    for a, element in ATOMS.items():
        center = (db.input(), db.input())
        symbol[a] = db.equation(name=f"{a}.symbol", center=center, string=element)
        disc = db.circle(name=f"{a}.background", r=10, center=center, fill_color=(1.0, 1.0, 1.0, 1.0))
        atom[a] = db.group(name=f"{a}.shape", shapes=[symbol[a], disc])
        db.layer(disc, symbol[a])

    bond = {}
    for a1, a2 in BONDS:
        line = db.line(
            name=f"SBond_{a1}_{a2}.symbol",
            start=symbol[a1].center,
            end=symbol[a2].center,
            stroke_color=(0, 0, 0, 1.0),
        )
        bond[a1, a2] = symbol[a2].center - symbol[a1].center
        db.ensure(constraints.equal(fn.norm(bond[a1, a2]), BOND_LENGTH))
        db.layer(line, atom[a1])
        db.layer(line, atom[a2])
    db.ensure(constraints.equal(fn.angleBetween(*bond.values()), fn.toRadians(ANGLE)))
    return db
