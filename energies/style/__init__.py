"""The Style evaluator: matched Style blocks -> a `Diagram` (shapes, goals, unknowns).

Modules, by phase:
    env             the translation: path -> defining expression (override/delete rules, scopes,
                    path resolution, Penrose's dependency-graph order)
    evaluate        expressions, demand-driven and memoized; unknowns (`?`); paths and indices
    arith           values and Penrose's operators (vectors, matrices, `.*`, `./`, `'`)
    library_bridge  computed functions, constraint/objective names from `energies.library`
    shapes          shape construction: defaults, unknown slots, property checks, label sizes
    goals           ensure / encourage / layer statements, implicit onCanvas
    layering        drawing order (Penrose's layering and groups)
    run             evaluate_style(front, style_text, variation, exclude_warnings) -> Diagram
"""

from energies.style.library_bridge import Library
from energies.style.run import evaluate_style, shape_at

__all__ = ["Library", "evaluate_style", "shape_at"]
