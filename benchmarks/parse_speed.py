"""Cold parse times of the Domain, Substance and Style parsers over the Penrose registry.

Every distinct Domain, Substance and Style text of the registry is parsed with the undecorated
parser (`parse_style.__wrapped__`, ..., so the per-text cache never answers); the parsers
themselves (LALR tables) are built once before timing, as in a running service. Each repeat
times every language once; the table gives the best (min) of `--repeat` runs in process time,
because the machine is shared and noisy, and the median for a sense of the spread.

    python benchmarks/parse_speed.py [--registry DIR] [--repeat 7] [--baseline REV] [--profile LANG]

`--baseline REV` also times the parsers of git revision REV (its `parse_util.py` and `*.lark`
grammars, driving today's builders) in the same run, interleaved with the current ones, so
both see the same machine load; the last column is then baseline / current. `--profile LANG`
instead parses LANG's programs once under cProfile and prints the top entries.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import importlib.util
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from energies.lang import parse
from energies.lang.parse_util import make_parser
from energies.lang.style_parse import StyleBuilder
from service.trios import load_registry

REPO = Path(__file__).resolve().parents[1]
LANGS = ("domain", "substance", "style")
BUILDERS: dict[str, type] = {
    "domain": parse._DomainBuilder,
    "substance": parse._SubstanceBuilder,
    "style": StyleBuilder,
}

Parser = Callable[[str], Any]


def registry_programs(folder: Path) -> dict[str, list[str]]:
    trios = load_registry(folder)
    return {lang: sorted({getattr(t, lang) for t in trios}) for lang in LANGS}


def current_parsers() -> dict[str, Parser]:
    return {lang: getattr(parse, f"parse_{lang}").__wrapped__ for lang in LANGS}


def _git_show(rev: str, path: str) -> str:
    return subprocess.run(
        ["git", "-C", str(REPO), "show", f"{rev}:{path}"], check=True, capture_output=True, text=True
    ).stdout


def baseline_parsers(rev: str, workdir: Path) -> dict[str, Parser]:
    """`run_parser` of revision `rev`, loaded from a copy of its parse_util.py beside its grammars."""
    (workdir / "parse_util.py").write_text(_git_show(rev, "energies/lang/parse_util.py"))
    for lang in LANGS:
        (workdir / f"{lang}.lark").write_text(_git_show(rev, f"energies/lang/{lang}.lark"))
    spec = importlib.util.spec_from_file_location("baseline_parse_util", workdir / "parse_util.py")
    assert spec is not None and spec.loader is not None
    module: ModuleType = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return {lang: (lambda text, lang=lang: module.run_parser(lang, text, BUILDERS[lang])) for lang in LANGS}


def token_count(lang: str, texts: list[str]) -> int:
    """Tokens as lark's standalone lexer splits them (close to, not exactly, what the parser sees)."""
    lexer = make_parser(lang, BUILDERS[lang])
    try:
        return sum(sum(1 for _ in lexer.lex(t)) for t in texts)
    except Exception:  # a text the context-free lexer cannot split: leave the column empty
        return 0


def time_once(parser: Parser, texts: list[str]) -> float:
    gc.collect()
    start = time.process_time()
    for text in texts:
        parser(text)
    return time.process_time() - start


def profile(lang: str, texts: list[str]) -> None:
    parser = current_parsers()[lang]
    parser(texts[0])  # build the LALR parser outside the profile
    prof = cProfile.Profile()
    prof.runcall(lambda: [parser(t) for t in texts])
    pstats.Stats(prof).sort_stats("cumulative").print_stats(30)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--registry", type=Path, default=REPO / ".." / "shared" / "penrose-registry")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--baseline", metavar="REV", help="also time the parsers of this git revision")
    ap.add_argument("--profile", choices=LANGS, help="profile one language instead of timing")
    args = ap.parse_args()

    programs = registry_programs(args.registry)
    if args.profile:
        profile(args.profile, programs[args.profile])
        return

    versions = {"current": current_parsers()}
    with tempfile.TemporaryDirectory() as tmp:
        if args.baseline:
            versions = {"baseline": baseline_parsers(args.baseline, Path(tmp)), **versions}
        for parsers in versions.values():  # build every LALR parser before timing
            for lang in LANGS:
                parsers[lang](programs[lang][0])

        runs: dict[tuple[str, str], list[float]] = {(v, lang): [] for v in versions for lang in LANGS}
        order = list(versions)
        for _ in range(args.repeat):
            for lang in LANGS:
                for version in order:
                    runs[version, lang].append(time_once(versions[version][lang], programs[lang]))
            order.reverse()  # neither version always runs first

    print(f"cold parses of the registry programs, process time, best (median) of {args.repeat} runs")
    header = f"{'language':<10} {'programs':>8} {'tokens':>7}"
    for version in versions:
        header += f" | {version + ' total ms':>22} {'ms/program':>10} {'us/token':>8}"
    if args.baseline:
        header += " | speedup"
    print(header)
    for lang in LANGS:
        texts = programs[lang]
        tokens = token_count(lang, texts)
        row = f"{lang:<10} {len(texts):>8} {tokens:>7}"
        for version in versions:
            best, median = min(runs[version, lang]), statistics.median(runs[version, lang])
            per_token = f"{1e6 * best / tokens:8.1f}" if tokens else f"{'':>8}"
            row += f" | {1e3 * best:9.1f} ({1e3 * median:9.1f}) {1e3 * best / len(texts):10.2f} {per_token}"
        if args.baseline:
            row += f" | {min(runs['baseline', lang]) / min(runs['current', lang]):6.2f}x"
        print(row)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
