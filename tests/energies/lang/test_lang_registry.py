"""All 173 registry trios parse, check and match; matches agree with Penrose's reference SVGs.

Oracle: Penrose titles every rendered shape.  A shape assigned to a selector variable's
field (`v.icon = Circle {...}`) is titled `` `X`.icon `` for each Substance object X the
variable was matched to; a block-local shape (`s = Circle {...}`) is titled
`<block index>:<match index>.s` for each match.  So, per block creating local shapes,
the reference SVG gives the exact number of matches, and per field, the exact set of
matched objects.  Shapes that some block deletes are left out of the comparison.
"""

from __future__ import annotations

import re
import time
from collections import defaultdict

from energies.lang import style_ast as S
from energies.lang.domain_env import check_domain
from energies.lang.match import match_style
from energies.lang.parse import parse_domain, parse_style, parse_substance
from energies.lang.substance_env import check_substance


def _compile(trio):
    denv = check_domain(parse_domain(trio.domain), trio.domain)
    senv = check_substance(parse_substance(trio.substance), denv, trio.substance)
    prog = parse_style(trio.style)
    return denv, senv, prog, match_style(prog, denv, senv, trio.style)


def test_all_trios_parse_within_budget(registry_trios):
    assert len(registry_trios) == 173
    parse_domain.cache_clear()
    parse_substance.cache_clear()
    parse_style.cache_clear()
    start = time.perf_counter()
    for trio in registry_trios:
        parse_domain(trio.domain)
        parse_substance(trio.substance)
        prog = parse_style(trio.style)
        assert prog.blocks, trio.key
    # generous bound for a shared 2-core machine; typically ~3 s
    assert time.perf_counter() - start < 20


def test_all_trios_check_and_match(registry_trios):
    for trio in registry_trios:
        denv, senv, prog, blocks = _compile(trio)
        declared = [s for s in senv.statements if type(s).__name__ == "ObjectDecl"]
        assert list(senv.objects) == [d.name for d in declared], trio.key
        assert len(blocks) == len(prog.blocks)
        for bm in blocks:
            total = len(bm.matches)
            assert [m.match_id for m in bm.matches] == list(range(1, total + 1))
            assert all(m.match_total == total for m in bm.matches)
            if isinstance(bm.block.header, S.Namespace):
                assert total == 1


def _deleted_names(blocks) -> set[str]:
    names = set()
    for bm in blocks:
        for stmt in bm.block.block.statements:
            if isinstance(stmt, S.Delete):
                p = stmt.path
                names.add(p.members[0].value if p.members else p.var.name)
    return names


def test_matches_agree_with_penrose_reference_svgs(registry_trios, reference_svg_dir):
    local_checked = field_checked = 0
    mismatches = []
    for trio in registry_trios:
        svg = reference_svg_dir / (trio.key.replace("/", "__") + ".svg")
        if not svg.exists():  # one trio fails to compile in Penrose itself
            continue
        titles = set(re.findall(r"<title>([^<]*)</title>", svg.read_text()))
        _, _, _, blocks = _compile(trio)
        deleted = _deleted_names(blocks)
        expected_objects: dict[str, set[str]] = defaultdict(set)
        for bm in blocks:
            if not isinstance(bm.block.header, S.Selector):
                continue
            for stmt in bm.block.block.statements:
                if not (isinstance(stmt, S.PathAssign) and isinstance(stmt.value, S.GPIDecl)):
                    continue
                p = stmt.path
                if p.indices or p.var.backticked:
                    continue
                if not p.members and p.var.name not in bm.var_types and p.var.name not in deleted:
                    pattern = re.compile(rf"{bm.item_index}:(\d+)\.{re.escape(p.var.name)}")
                    got = {int(m.group(1)) for t in titles if (m := pattern.fullmatch(t))}
                    local_checked += 1
                    if got != set(range(len(bm.matches))):
                        mismatches.append((trio.key, bm.item_index, p.var.name, len(got), len(bm.matches)))
                elif len(p.members) == 1 and p.members[0].value not in deleted:
                    for m in bm.matches:
                        value = m.subst.get(p.var.key)
                        if isinstance(value, str):
                            expected_objects[p.members[0].value].add(value)
        for field, expected in expected_objects.items():
            pattern = re.compile(rf"`(.*)`\.{re.escape(field)}")
            got = {m.group(1) for t in titles if (m := pattern.fullmatch(t))}
            field_checked += 1
            if got != expected:
                mismatches.append((trio.key, field, sorted(expected ^ got)[:5]))
    assert not mismatches
    # the comparison must actually cover a lot of blocks and fields
    assert local_checked > 200 and field_checked > 800
