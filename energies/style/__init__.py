"""The Style evaluator: matched Style blocks -> a `Diagram` (shapes, goals, unknowns).

Modules, by phase:
    paths           scopes, path references, path resolution compiled once per block
    context         block plans (a block compiled once, its local-scope layout) and match contexts
    env             the translation: path -> defining expression (override/delete rules)
    local_scopes    the local scopes of all matches, in Penrose's map order
    graph           Penrose's dependency graph, walked: shape order, evaluation order
    penrose_order   Immutable.js map iteration order (Penrose's default shape order)
    evaluate        expressions, demand-driven and memoized; unknowns (`?`); paths and indices
    arith           values and Penrose's operators (vectors, matrices, `.*`, `./`, `'`)
    library_bridge  computed functions, constraint/objective names from `energies.library`
    shapes          shape construction: defaults, unknown slots, property checks, label sizes
    goals           ensure / encourage / layer statements, implicit onCanvas
    layering        drawing order (Penrose's layering and groups)
    run             evaluate_style(front, style_text, variation, exclude_warnings) -> Diagram
    errors          located DiagramErrors and Penrose-kind warnings

Values in the Diagram: numbers are floats or `energies.expr.Node`s (when they depend on unknowns);
vectors, lists, matrices and point lists are Python lists; colors are rgba lists of 4 numbers, or
`energies.shapes.Color.none()`; path data is a list of `energies.library.paths.PathCmd`; a Group's
`shapes` is a list of `ShapeInstance`s and its `clipPath` a `ShapeInstance` or None. Shape props
hold every property of the shape type plus the Style's extra (passthrough) string/number props.
"""

from energies.style.library_bridge import Library
from energies.style.run import evaluate_style, shape_at

__all__ = ["Library", "evaluate_style", "shape_at"]
