"""The adapter to lark's internals (energies/lang/parse_util.py): checked lark versions only, and on any
other version the public parser gives the same AST."""

from __future__ import annotations

import lark
import pytest

from energies.lang import parse_util
from energies.lang.parse import _SubstanceBuilder as SubstanceBuilder
from energies.lang.parse import parse_substance


def test_installed_lark_is_one_the_adapter_was_checked_against() -> None:
    """Fails on a lark upgrade: check the new parse table and lexer shapes, then add the version."""
    assert parse_util.lark_version() in parse_util.LARK_VERIFIED, (
        f"lark {lark.__version__} is not in energies.lang.parse_util.LARK_VERIFIED "
        f"{sorted(parse_util.LARK_VERIFIED)}: our LALR and lexer loops would fall back to Lark.parse"
    )


def test_an_unchecked_lark_falls_back_to_its_public_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "Set A, B\nIsSubset(A, B)\n"
    ours = parse_substance.__wrapped__(text)  # type: ignore[attr-defined]
    parser = parse_util.make_parser("substance", SubstanceBuilder)
    assert (
        parse_util._own_loop_fits.__wrapped__(parser) and parse_util._scanners.__wrapped__(parser) is not None
    )
    monkeypatch.setattr(parse_util, "lark_version", lambda: (9, 9))
    assert (
        not parse_util._own_loop_fits.__wrapped__(parser) and parse_util._scanners.__wrapped__(parser) is None
    )
    assert parser.parse(text) == ours  # what run_parser then calls: lark's public parser, the same AST
