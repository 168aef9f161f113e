"""Registry diagrams rebuilt with the builder, one module per family, each a Python program that
states the same diagram as its Penrose trio (tests/service/builder/test_parity.py proves the energy
is the same function), used in docs/builder.md and the notebooks of docs/notebooks/.

Each module has `TRIO` (the trio's path in Penrose's registry) and `build(variation) -> DiagramBuilder`
(the trio's own variation by default). Shapes are named as the Style names them, without backticks
(`A.icon` for "`A`.icon").
"""

EXAMPLES = ("venn", "graph", "vectors", "bezier", "molecule")
