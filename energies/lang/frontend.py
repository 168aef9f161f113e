"""The whole front end in one call: Domain, Substance and Style texts -> checked and matched.

    run_front_end(domain: str, substance: str, style: str) -> FrontEnd

Raises `DiagramError` (or `DiagramErrors`) naming the program, line and column.
"""

from __future__ import annotations

from dataclasses import dataclass

from energies.lang.domain_env import DomainEnv, check_domain
from energies.lang.match import BlockMatches, match_style
from energies.lang.parse import parse_domain, parse_style, parse_substance
from energies.lang.style_ast import StyleProg
from energies.lang.substance_env import SubstanceEnv, check_substance


@dataclass(frozen=True)
class FrontEnd:
    domain: DomainEnv
    substance: SubstanceEnv
    style: StyleProg
    blocks: list[BlockMatches]  # one per Style header block, in program order


def run_front_end(domain: str, substance: str, style: str) -> FrontEnd:
    domain_env = check_domain(parse_domain(domain), domain)
    substance_env = check_substance(parse_substance(substance), domain_env, substance)
    style_prog = parse_style(style)
    return FrontEnd(
        domain_env, substance_env, style_prog, match_style(style_prog, domain_env, substance_env, style)
    )
