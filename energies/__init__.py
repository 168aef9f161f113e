"""Diagram specs to energies: the Penrose languages, shapes, geometry, the function library, the optimizer."""
