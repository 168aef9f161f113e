"""Front half of the Penrose languages: parsing, checking and selector matching.

Modules (one concept each):
    errors          DiagramError / DiagramErrors (source, line, column, message, excerpt),
                    DiagramWarning with Penrose's warning kinds, visible_warnings(excludeWarnings)
    ast             Domain and Substance AST (frozen dataclasses with `pos`)
    style_ast       Style AST (documented there; consumed by the Style evaluator)
    parse           parse_domain / parse_substance / parse_style (lark LALR, *.lark grammars)
    domain_env      check_domain -> DomainEnv (types, subtyping, signatures)
    substance_env   check_substance -> SubstanceEnv (objects, compiled statements, labels)
    index_sets      expansion of `... for i in [a, b] where ...`
    selector_check  Style headers checked against the Domain
    match           match_style -> [BlockMatches] (Match / CollectionMatch, match_id/total)
    frontend        run_front_end(domain, substance, style) -> FrontEnd (all of the above)
"""

from energies.lang.errors import DiagramError, DiagramErrors, DiagramWarning, visible_warnings
from energies.lang.frontend import FrontEnd, run_front_end

__all__ = [
    "DiagramError",
    "DiagramErrors",
    "DiagramWarning",
    "FrontEnd",
    "run_front_end",
    "visible_warnings",
]
