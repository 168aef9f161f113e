"""Diagrams stated in Python, in the vocabulary of Penrose's Bloom (docs/builder.md).

    from service import DiagramBuilder, constraints, objectives
    from service.builder import functions as fn

    db = DiagramBuilder(800, 700, variation="seed")
    a = db.circle(r=db.input())
    b = db.circle(r=30)
    db.ensure(constraints.disjoint(a, b, 10))
    db.encourage(objectives.near(a, b))
    db.build()                      # a service.pipeline.Rendering; db.widget() to drag it in Jupyter

Modules: `builder` (DiagramBuilder), `shapes` (Shape, keywords to properties), `goals` (Term, the
library's checked constructors), `constraints` / `objectives` / `functions` (Penrose's library by
name), `values` (Vec, Python values to Style values), `errors` (BuilderError at the user's line),
`examples` (registry diagrams rebuilt with the builder).
"""

from __future__ import annotations

from . import constraints, functions, objectives
from .builder import DiagramBuilder
from .errors import BuilderAttributeError, BuilderError
from .goals import Term
from .shapes import Shape
from .values import Vec

__all__ = [
    "BuilderAttributeError",
    "BuilderError",
    "DiagramBuilder",
    "Shape",
    "Term",
    "Vec",
    "constraints",
    "functions",
    "objectives",
]
