"""Reports of a batch run beside Penrose's results: ``report.md`` and a self-contained ``report.html``.

Both open with a one-line verdict, then give counts by status, quartiles of each time, per-trio time
ratios (ours / Penrose's, over trios both ran ``ok``) and their quartiles, layout quality next to
Penrose's, and a gallery of our SVG beside Penrose's: first every trio judged worse, then all.

Layout quality is judged by the final energy (objectives plus constraint penalty, the quantity both
optimizers minimize): ours is *worse* when it exceeds Penrose's by more than ``max(1, 0.1·|Penrose's|)``,
*better* when it is below by as much, else the *same* (:func:`verdict`); our energy is taken at
Penrose's final constraint weight (:func:`compared_energies`). A run over several
variations (keys ``{key}@{i}``, see ``registry.bench --variations``) also reports, per trio, how
often each system reached a *good* layout: one not worse than Penrose's median layout over the
variations by the same rule (the reference row when Penrose did not run them here), and on which
variations only one of the two did, and on how many each system's layout is *clean* by Penrose's
optimizer study's rule (:mod:`registry.robustness`), with every unclean variation of ours drawn
beside a clean one of the same trio.

The HTML inlines two charts drawn here as SVG: a log-log scatter of our total time against
Penrose's, and a histogram of the ratios on a log scale (``report.md`` links the same charts as
``scatter.svg`` and ``ratios.svg``).
"""

from __future__ import annotations

import html
import json
import math
import os
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from energies.optimize.optimizer import INIT_CONSTRAINT_WEIGHT, WEIGHT_GROWTH_FACTOR
from registry.robustness import (
    VARIATION_MARK,
    TrioRobustness,
    base_key,
    constraint_sum,
    robustness,
    robustness_rows,
    suffix_order,
    total_line,
)
from service.trios import svg_name

Row = dict[str, Any]
TIMES = ("compileMs", "optimizeMs", "compileMs+optimizeMs", "renderMs", "totalMs")
VIOLATION_TOLERANCE = 1e-3  # Penrose's results count a constraint violated above this
Verdict = str  # "worse", "same" or "better"


def load_rows(path: Path) -> list[Row]:
    rows = []
    with Path(path).open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as err:
                    raise ValueError(f"{path}:{number}:{err.colno}: invalid JSON: {err.msg}") from None
    return rows


def _quartiles_of(rows: Sequence[Row], field: str) -> tuple[float, float, float] | None:
    """Quartiles of a field over the rows that ran, where it is present."""
    values = [field_value(r, field) for r in rows if r["status"] == "ok"]
    return quartiles([v for v in values if v is not None])


def quartiles(values: Sequence[float]) -> tuple[float, float, float] | None:
    """First quartile, median, third quartile (inclusive method); None for no values."""
    values = [v for v in values if v is not None and math.isfinite(v)]
    if not values:
        return None
    if len(values) == 1:
        return (values[0],) * 3
    q1, q2, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return q1, q2, q3


def field_value(row: Row, field: str) -> float | None:
    """A row's field; ``a+b`` is the sum of two fields (None if either is missing)."""
    parts = [row.get(name) for name in field.split("+")]
    return None if any(p is None for p in parts) else float(sum(p for p in parts if p is not None))


@dataclass(frozen=True)
class Pair:
    key: str
    ours: Row | None
    penrose: Row | None

    def both_ok(self) -> bool:
        return bool(
            self.ours and self.penrose and self.ours["status"] == "ok" and self.penrose["status"] == "ok"
        )

    def ratio(self, field: str) -> float | None:
        """Our time over Penrose's, when both ran ok and both times are positive."""
        if not self.both_ok():
            return None
        a, b = field_value(self.ours, field), field_value(self.penrose, field)  # type: ignore[arg-type]
        if a is None or b is None or a <= 0 or b <= 0:
            return None
        return a / b


def energy_margin(reference: float) -> float:
    """How far an energy may stray from Penrose's and still count as the same quality."""
    return max(1.0, 0.1 * abs(reference))


def final_weight(row: Row) -> float | None:
    """The constraint weight λ of a row's last exterior-point round (1e3, then 10x per round)."""
    rounds = row.get("EProunds")
    return None if rounds is None else INIT_CONSTRAINT_WEIGHT * WEIGHT_GROWTH_FACTOR**rounds


def compared_energies(ours: Row, penrose: Row) -> tuple[float, float, float] | None:
    """Our energy and Penrose's at the same constraint weight, and the margin between them that the
    verdict uses. Each run reports φ at its own final weight λ, and λ is 10x higher for every extra
    exterior-point round its test happened to run, which says nothing about the layout: our energy is
    taken at Penrose's λ instead (the penalty part scales with λ at a fixed point). Rows without the
    parts, or without rounds, are compared as they are."""
    a, b = ours.get("energy"), penrose.get("energy")
    if a is None or b is None:
        return None
    objectives, penalty = ours.get("objectiveEnergy"), ours.get("constraintEnergy")
    la, lb = final_weight(ours), final_weight(penrose)
    if objectives is not None and penalty is not None and la and lb:
        a = objectives + penalty * (lb / la)
    return a, b, energy_margin(b)


def verdict(ours: Row | None, penrose: Row | None) -> Verdict | None:
    """Our layout against Penrose's by final energy (see `compared_energies`); None unless both ran
    ok with an energy."""
    if not ours or not penrose or ours.get("status") != "ok" or penrose.get("status") != "ok":
        return None
    energies = compared_energies(ours, penrose)
    if energies is None:
        return None
    a, b, margin = energies
    if a > b + margin:
        return "worse"
    return "better" if a < b - margin else "same"


@dataclass(frozen=True)
class VariationRate:
    key: str
    runs: int
    bar: float  # the energy a good layout reaches: Penrose's median over the variations
    ours_good: int
    penrose_good: int | None  # None when Penrose did not run the variations here
    penrose_runs: int
    # Variations (key suffixes, "" for the trio's own) good for one system only; empty unless Penrose
    # ran them here: where to look for what made the two runs part.
    ours_only: tuple[str, ...] = ()
    penrose_only: tuple[str, ...] = ()


def _has_energy(row: Row) -> bool:
    return row.get("status") == "ok" and row.get("energy") is not None


def variation_rates(ours: Sequence[Row], penrose: Sequence[Row]) -> list[VariationRate]:
    """Per trio run over several variations: how many of each system's layouts are good."""
    groups: dict[str, tuple[list[Row], list[Row]]] = {}
    for side, rows in enumerate((ours, penrose)):
        for row in rows:
            groups.setdefault(base_key(row["key"]), ([], []))[side].append(row)
    rates = []
    for key, (mine, theirs) in sorted(groups.items()):
        ran_here = any(VARIATION_MARK in r["key"] for r in theirs)
        finished = sorted((r for r in theirs if _has_energy(r)), key=lambda r: r["energy"])
        if not mine or not finished or len(mine) < 2:
            continue
        median = finished[(len(finished) - 1) // 2]  # the lower middle: a row, so its weight is known
        bar = median["energy"]

        # Each variation's verdict (key suffix -> good), once per system.
        mine_good, theirs_good = (
            {r["key"][len(key) :]: verdict(r, median) != "worse" for r in rows if _has_energy(r)}
            for rows in (mine, theirs)
        )
        penrose_good = sum(theirs_good.values()) if ran_here else None
        ours_only: tuple[str, ...] = ()
        penrose_only: tuple[str, ...] = ()
        if ran_here:
            both = sorted(mine_good.keys() & theirs_good.keys(), key=suffix_order)
            ours_only = tuple(v for v in both if mine_good[v] and not theirs_good[v])
            penrose_only = tuple(v for v in both if theirs_good[v] and not mine_good[v])
        ours_good = sum(mine_good.values())
        rates.append(
            VariationRate(key, len(mine), bar, ours_good, penrose_good, len(theirs), ours_only, penrose_only)
        )
    return rates


def pair_rows(ours: Sequence[Row], penrose: Sequence[Row]) -> list[Pair]:
    """Our rows matched to Penrose's by key, sorted by key (only keys we ran)."""
    by_key = {row["key"]: row for row in penrose}
    return [Pair(row["key"], row, by_key.get(row["key"])) for row in sorted(ours, key=lambda r: r["key"])]


# ---------------------------------------------------------------------------------------------
# Charts, drawn as plain SVG.

_W, _H, _M = 420, 320, 48  # size and margin
_NO_DATA = (
    "<svg xmlns='http://www.w3.org/2000/svg' width='420' height='40'><text x='8' y='24'>no data</text></svg>"
)
# Said wherever a comparison with Penrose is empty because no row of Penrose's pairs with ours.
NO_REFERENCE = (
    "No Penrose reference for these trios: none of them is in the Penrose results given, so nothing is"
    " compared with Penrose. Give Penrose's results with --penrose-results FILE (a results.jsonl of"
    " Penrose's runner), or run Penrose here with --run-penrose."
)
_NO_REFERENCE_SVG = (
    "<svg xmlns='http://www.w3.org/2000/svg' width='420' height='40'><text x='8' y='24'>"
    "no Penrose reference: see --penrose-results</text></svg>"
)


def _log_ticks(lo: float, hi: float) -> list[float]:
    return [10.0**e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)]


def scatter_svg(points: Sequence[tuple[float, float, str]], *, xlabel: str, ylabel: str) -> str:
    """Log-log scatter of (x, y, title) with the y = x diagonal."""
    points = [(x, y, t) for x, y, t in points if x > 0 and y > 0]
    if not points:
        return _NO_DATA
    ticks = _log_ticks(min(min(x, y) for x, y, _ in points), max(max(x, y) for x, y, _ in points))
    lo, hi = math.log10(ticks[0]), math.log10(ticks[-1])
    span = max(hi - lo, 1e-9)

    def px(v: float) -> float:
        return _M + (math.log10(v) - lo) / span * (_W - 2 * _M)

    def py(v: float) -> float:
        return _H - _M - (math.log10(v) - lo) / span * (_H - 2 * _M)

    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{_W}' height='{_H}' font-size='11'>"]
    parts.append(f"<line x1='{px(ticks[0])}' y1='{py(ticks[0])}' x2='{px(ticks[-1])}' y2='{py(ticks[-1])}' "
                 "stroke='#aaa' stroke-dasharray='4 3'/>")  # fmt: skip
    for t in ticks:
        parts.append(f"<text x='{px(t)}' y='{_H - _M + 16}' text-anchor='middle'>{t:g}</text>")
        parts.append(f"<text x='{_M - 6}' y='{py(t) + 4}' text-anchor='end'>{t:g}</text>")
    parts.append(
        f"<rect x='{_M}' y='{_M}' width='{_W - 2 * _M}' height='{_H - 2 * _M}' fill='none' stroke='#333'/>"
    )
    for x, y, title in points:
        parts.append(f"<circle cx='{px(x):.1f}' cy='{py(y):.1f}' r='3' fill='#1f77b4' fill-opacity='0.6'>"
                     f"<title>{html.escape(title)}: {x:.4g} / {y:.4g}</title></circle>")  # fmt: skip
    parts.append(f"<text x='{_W / 2}' y='{_H - 10}' text-anchor='middle'>{html.escape(xlabel)}</text>")
    parts.append(f"<text x='14' y='{_H / 2}' text-anchor='middle' transform='rotate(-90 14 {_H / 2})'>"
                 f"{html.escape(ylabel)}</text></svg>")  # fmt: skip
    return "".join(parts)


def histogram_svg(ratios: Sequence[float], *, label: str, bins_per_decade: int = 4) -> str:
    """Histogram of positive ratios in log10 bins, with the ratio 1 marked."""
    logs = [math.log10(r) for r in ratios if r > 0]
    if not logs:
        return _NO_DATA
    first = math.floor(min(min(logs), 0) * bins_per_decade)
    last = math.floor(max(max(logs), 0) * bins_per_decade)
    counts = Counter(math.floor(v * bins_per_decade) for v in logs)
    n_bins = last - first + 1
    tallest = max(counts.values())
    bar_w = (_W - 2 * _M) / n_bins
    parts = [f"<svg xmlns='http://www.w3.org/2000/svg' width='{_W}' height='{_H}' font-size='11'>"]
    parity = ""  # the line at ratio 1 goes over the bars, the other decades behind them
    for e in range(math.ceil(first / bins_per_decade), math.floor(last / bins_per_decade) + 2):
        x = _M + (e * bins_per_decade - first) * bar_w
        if x <= _W - _M + 0.5:
            line = f"<line x1='{x:.1f}' y1='{_M}' x2='{x:.1f}' y2='{_H - _M + 4}'"
            if e == 0:
                parity = f"{line} stroke='#d62728' stroke-width='1.5'/>"
            else:
                parts.append(f"{line} stroke='#bbb' stroke-width='0.5'/>")
            parts.append(f"<text x='{x:.1f}' y='{_H - _M + 16}' text-anchor='middle'>{10.0**e:g}</text>")
    for i in range(n_bins):
        height = counts.get(first + i, 0) / tallest * (_H - 2 * _M)
        x = _M + i * bar_w
        lo = 10 ** ((first + i) / bins_per_decade)
        box = f"x='{x:.1f}' y='{_H - _M - height:.1f}' width='{bar_w - 1:.1f}' height='{height:.1f}'"
        parts.append(f"<rect {box} fill='#ff7f0e'><title>{lo:.3g}-{lo * 10 ** (1 / bins_per_decade):.3g}: "
                     f"{counts.get(first + i, 0)}</title></rect>")  # fmt: skip
    parts.append(parity)
    parts.append(f"<text x='{_M - 6}' y='{_M + 4}' text-anchor='end'>{tallest} trios</text>")
    parts.append(f"<text x='{_W / 2}' y='{_H - 10}' text-anchor='middle'>{html.escape(label)}</text></svg>")
    return "".join(parts)


# ---------------------------------------------------------------------------------------------
# Tables.


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1e4 else f"{value:.3e}"
    return str(value)


def _quartile_text(q: tuple[float, float, float] | None) -> str:
    return " / ".join(f"{v:.3g}" for v in q) if q else "–"


@dataclass(frozen=True)
class Summary:
    header: list[str]
    rows: list[list[str]]


def verdict_counts(pairs: Sequence[Pair]) -> Counter[Verdict]:
    return Counter(v for p in pairs if (v := verdict(p.ours, p.penrose)) is not None)


def satisfied_count(rows: Sequence[Row]) -> tuple[int, int]:
    """Of the rows that ran ok with a violation count, how many satisfy every constraint; how many."""
    ok = [r for r in rows if r["status"] == "ok" and r.get("nViolated") is not None]
    return sum(r["nViolated"] == 0 for r in ok), len(ok)


def satisfiable_keys(pairs: Sequence[Pair]) -> set[str]:
    """Trios our run found no infeasible constraint in (energies.infeasible): every violated
    constraint reads some unknown that varies where it applies."""
    return {p.key for p in pairs if p.ours and p.ours["status"] == "ok" and not p.ours.get("nInfeasible")}


def summary_tables(pairs: Sequence[Pair]) -> list[tuple[str, Summary]]:
    ours = [p.ours for p in pairs if p.ours]
    theirs = [p.penrose for p in pairs if p.penrose]
    statuses = sorted({r["status"] for r in ours} | {r["status"] for r in theirs})
    ours_count, theirs_count = Counter(r["status"] for r in ours), Counter(r["status"] for r in theirs)
    counts = Summary(
        ["status", "ours", "Penrose"], [[s, str(ours_count[s]), str(theirs_count[s])] for s in statuses]
    )
    times = Summary(
        [
            "time (ms), ok trios",
            "ours Q1 / median / Q3",
            "Penrose Q1 / median / Q3",
            "ratio Q1 / median / Q3",
            "n",
        ],
        [],
    )
    for field in TIMES:
        ratios = [r for p in pairs if (r := p.ratio(field)) is not None]
        times.rows.append([
            field,
            _quartile_text(_quartiles_of(ours, field)),
            _quartile_text(_quartiles_of(theirs, field)),
            _quartile_text(quartiles(ratios)),
            str(len(ratios)),
        ])  # fmt: skip

    def satisfied(rows: Sequence[Row]) -> str:
        return "{} of {}".format(*satisfied_count(rows))

    satisfiable = satisfiable_keys(pairs)
    verdicts = verdict_counts(pairs)
    quality = Summary(
        ["layout quality (ok trios)", "ours", "Penrose"],
        [
            [f"no constraint above {VIOLATION_TOLERANCE:g}", satisfied(ours), satisfied(theirs)],
            [
                "the same, among trios with no infeasible constraint (none that nothing varying can change)",
                satisfied([r for r in ours if r["key"] in satisfiable]),
                satisfied([r for r in theirs if r["key"] in satisfiable]),
            ],
            *([f"final energy {VERDICT_TEXT[v]}", str(verdicts[v]), ""] for v in ("worse", "same", "better")),
        ],
    )  # fmt: skip
    return [("Status counts", counts), ("Times", times), ("Layout quality", quality)]


VERDICT_TEXT = {"worse": "worse than Penrose's", "same": "as Penrose's", "better": "better than Penrose's"}


def headline(pairs: Sequence[Pair]) -> str:
    """The one line a reader needs: how many layouts are worse, the same, better; constraints; time.
    Without a single Penrose row beside ours it says so, and how to give one, before our own counts."""
    verdicts = verdict_counts(pairs)
    ok = [p.ours for p in pairs if p.ours and p.ours["status"] == "ok"]
    if not any(p.ours and p.penrose for p in pairs):
        mine, n_mine = satisfied_count(ok)
        return f"{NO_REFERENCE} Our layouts satisfy every constraint on {mine} of the {n_mine} trios that ran"
    (mine, n_mine), (penrose, n_penrose) = (
        satisfied_count(rows) for rows in (ok, [p.penrose for p in pairs if p.penrose])
    )
    satisfiable = satisfiable_keys(pairs)
    (sat, n_sat), (penrose_sat, _) = (
        satisfied_count([r for r in rows if r["key"] in satisfiable])
        for rows in (ok, [p.penrose for p in pairs if p.penrose])
    )
    ratio = quartiles([r for p in pairs if (r := p.ratio("compileMs+optimizeMs")) is not None])
    median = f"{ratio[1]:.3g}" if ratio else "–"
    cut = sum(r.get("optStatus") not in (None, "EPConverged") or bool(r.get("cutShort")) for r in ok)
    return (
        f"Of {sum(verdicts.values())} trios both ran, our final energy is worse than Penrose's on "
        f"{verdicts['worse']}, the same on {verdicts['same']} and better on {verdicts['better']}; "
        f"constraints satisfied on {mine} of {n_mine} (Penrose {penrose} of {n_penrose}), on {sat} of"
        f" the {n_sat} with no infeasible constraint (Penrose {penrose_sat}); "
        f"compile+optimize time, ours / Penrose's, median {median}; {cut} of our layouts cut short by a"
        " guard or budget."
    )


COMPARED = (
    "energy", "totalMs", "optimizeMs", "compileMs", "maxConstrViolation", "nViolated", "constraintSum",
    "nGradEvals", "EProunds",
)  # fmt: skip
PER_TRIO_HEADER = [
    "key",
    "status",
    "Penrose status",
    "verdict",
    "objective energy",
    "constraint energy",
    "starts (chosen)",
    "totalMs ratio",
    "infeasible constraints",
    *(name for field in COMPARED for name in (field, f"Penrose {field}")),
    "error",
]


def _infeasible_text(row: Row) -> str:
    """How many constraints can never be satisfied, and the first one's message (place, function)."""
    n, messages = row.get("nInfeasible"), row.get("infeasible") or []
    if not n:
        return "–" if n is None else "0"
    first = messages[0].replace("InfeasibleConstraintWarning: ", "") if messages else ""
    return f"{n}: {first[:160]}"


def per_trio_rows(pairs: Sequence[Pair]) -> list[list[str]]:
    table = []
    for p in pairs:
        ours, theirs = p.ours or {}, p.penrose or {}
        error = (ours.get("error") or "").strip().splitlines()
        starts = f"{ours['starts']} ({ours.get('chosenStart')})" if ours.get("starts") else "–"
        row = [p.key, _status(ours), _fmt(theirs.get("status")), verdict(p.ours, p.penrose) or "–"]
        row += [_fmt(ours.get("objectiveEnergy")), _fmt(ours.get("constraintEnergy")), starts]
        row.append(_fmt(p.ratio("totalMs")))
        row.append(_infeasible_text(ours))
        row += [_fmt(side.get(field)) for field in COMPARED for side in (ours, theirs)]
        row.append(error[0][:120] if error else "")
        table.append(row)
    return table


# ---------------------------------------------------------------------------------------------
# The two documents.


def variation_table(rates: Sequence[VariationRate]) -> Summary:
    def share(good: int | None, runs: int) -> str:
        return "–" if good is None else f"{good}/{runs}"

    def which(suffixes: tuple[str, ...]) -> str:
        return " ".join(s or "own" for s in suffixes) or "–"

    rows = [
        [r.key, _fmt(r.bar), share(r.ours_good, r.runs), share(r.penrose_good, r.penrose_runs),
         which(r.ours_only), which(r.penrose_only)]
        for r in rates
    ]  # fmt: skip
    if len(rates) > 1:  # the rates over every variation of every trio, as the targets state them
        ran = [r for r in rates if r.penrose_good is not None]
        ours = share(sum(r.ours_good for r in rates), sum(r.runs for r in rates))
        theirs = share(
            sum(r.penrose_good or 0 for r in ran) if ran else None, sum(r.penrose_runs for r in ran)
        )
        rows.append(["all", "", ours, theirs, "", ""])
    return Summary(
        ["trio", "good-layout energy (Penrose's median)", "ours good", "Penrose good", "good only for us",
         "good only for Penrose"],
        rows,
    )  # fmt: skip


def _status(row: Row) -> str:
    """The run's status, with the optimizer's when a guard or budget cut the layout short."""
    status = _fmt(row.get("status"))
    cut = [c for c in (row.get("optStatus"), row.get("cutShort")) if c and c != "EPConverged"]
    return f"{status} ({'; '.join(cut)})" if cut else status


def _caption(p: Pair) -> str:
    """Status, and the two energies when both ran."""
    status = _status(p.ours) if p.ours else "–"
    if verdict(p.ours, p.penrose) is None:
        return status
    return f"{status}; energy {_fmt(p.ours['energy'])} against Penrose's {_fmt(p.penrose['energy'])}"  # type: ignore[index]


def _unclean_gallery(items: Sequence[TrioRobustness], rows: dict[str, Row]) -> list[tuple[str, str | None]]:
    """Every unclean variation's key, with a clean variation's key of the same trio (None if none)."""
    return [
        (i.key + bad, None if i.clean_example is None else i.key + i.clean_example)
        for i in items
        for bad in i.unclean
        if i.key + bad in rows
    ]


def _clean_caption(row: Row) -> str:
    """Status, Σ max(c, 0)², violated and infeasible counts."""
    total, _ = constraint_sum(row)
    parts = [_status(row), f"Σ max(c, 0)² {_fmt(total)}", f"{_fmt(row.get('nViolated'))} violated"]
    if row.get("nInfeasible"):
        parts.append(f"{row['nInfeasible']} infeasible")
    return "; ".join(parts)


def _md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _html_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _link(path: Path, out_dir: Path) -> str:
    return Path(os.path.relpath(path.resolve(), out_dir.resolve())).as_posix()


def write_reports(
    rows: Sequence[Row], penrose_rows: Sequence[Row], out_dir: Path, *, penrose_svg_dir: Path | None = None
) -> None:
    """Write ``report.md``, ``report.html``, ``scatter.svg`` and ``ratios.svg`` into ``out_dir``."""
    out_dir = Path(out_dir)
    pairs = pair_rows(rows, penrose_rows)
    points = [
        (p.penrose["totalMs"], p.ours["totalMs"], p.key)
        for p in pairs
        if p.ratio("totalMs") is not None and p.penrose is not None and p.ours is not None
    ]
    ratios = [r for p in pairs if (r := p.ratio("totalMs")) is not None]
    scatter = scatter_svg(points, xlabel="Penrose totalMs", ylabel="our totalMs")
    histogram = histogram_svg(ratios, label="totalMs ratio, ours / Penrose (log scale)")
    if not any(p.ours and p.penrose for p in pairs):
        scatter = histogram = _NO_REFERENCE_SVG
    (out_dir / "scatter.svg").write_text(scatter, encoding="utf-8")
    (out_dir / "ratios.svg").write_text(histogram, encoding="utf-8")
    tables = summary_tables(pairs)
    notes: dict[str, str] = {}
    robust = robustness(rows, penrose_rows)
    if robust:
        title = "Clean across variations (Penrose's optimizer study's rule)"
        tables.append((title, Summary(*robustness_rows(robust))))
        notes[title] = total_line(robust)
    rates = variation_rates(rows, penrose_rows)
    if rates:
        tables.append(("Good layouts across variations", variation_table(rates)))
    trio_rows = per_trio_rows(pairs)
    worse = [p for p in pairs if verdict(p.ours, p.penrose) == "worse"]
    line = headline(pairs)
    by_key = {row["key"]: row for row in rows}
    unclean = _unclean_gallery(robust, by_key)

    def images(key: str) -> tuple[str | None, str | None]:
        ours = out_dir / "svg" / svg_name(key)
        theirs = penrose_svg_dir / svg_name(key) if penrose_svg_dir else None
        return (
            _link(ours, out_dir) if ours.is_file() else None,
            _link(theirs, out_dir) if theirs is not None and theirs.is_file() else None,
        )

    def ours_only(key: str) -> str | None:
        return images(key)[0]

    md = [f"# Registry benchmark: {len(rows)} trios", "", f"**{line}**", ""]
    for title, summary in tables:
        md += [f"## {title}", ""] + ([notes[title], ""] if title in notes else [])
        md += [_md_table(summary.header, summary.rows), ""]
    md += ["## Our totalMs against Penrose's", "", "![scatter](scatter.svg) ![ratios](ratios.svg)", ""]
    md += ["## Per trio", "", _md_table(PER_TRIO_HEADER, trio_rows), ""]
    if unclean:
        md += [f"## Unclean variations ({len(unclean)}), each beside a clean one of its trio", ""]
        for bad, good in unclean:
            cells = [
                f"![{side}]({src})" if (src := ours_only(k)) else "(no SVG)"
                for side, k in (("unclean", bad), ("clean", good))
                if k is not None
            ]
            md.append(f"**{bad}** ({_clean_caption(by_key[bad])}) | {good or 'no clean variation'}\n")
            md.append(" ".join(cells) + "\n")
    for title, shown in ((f"Worse than Penrose ({len(worse)})", worse), ("Gallery (ours | Penrose)", pairs)):
        md += [f"## {title}", ""]
        for p in shown:
            ours, theirs = images(p.key)
            cells = [
                f"![ours]({ours})" if ours else "(no SVG)",
                f"![Penrose]({theirs})" if theirs else "(no SVG)",
            ]
            md.append(f"**{p.key}** ({_caption(p)})\n\n{cells[0]} {cells[1]}\n")
    (out_dir / "report.md").write_text("\n".join(md), encoding="utf-8")

    style = ("body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;font-size:12px}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}td:first-child{text-align:left}"
             ".g{display:flex;gap:1em;align-items:flex-start;margin-bottom:1.5em}"
             ".g img{max-width:420px;max-height:420px;border:1px solid #ddd}")  # fmt: skip
    doc = [f"<!doctype html><html><head><meta charset='utf-8'><title>Registry benchmark</title>"
           f"<style>{style}</style></head><body><h1>Registry benchmark: {len(rows)} trios</h1>"
           f"<p class='headline'><b>{html.escape(line)}</b></p>"]  # fmt: skip
    for title, summary in tables:
        note = f"<p>{html.escape(notes[title])}</p>" if title in notes else ""
        doc.append(f"<h2>{html.escape(title)}</h2>{note}{_html_table(summary.header, summary.rows)}")
    doc.append(f"<h2>Our totalMs against Penrose's</h2><div class='g'>{scatter}{histogram}</div>")
    doc.append(f"<h2>Per trio</h2>{_html_table(PER_TRIO_HEADER, trio_rows)}")
    if unclean:
        doc.append(f"<h2>Unclean variations ({len(unclean)}), each beside a clean one of its trio</h2>")
        for bad, good in unclean:
            figures = "".join(
                f"<figure><img src='{html.escape(src)}' alt='{html.escape(k)}'>"
                f"<figcaption>{html.escape(k)}</figcaption></figure>"
                if (src := ours_only(k))
                else f"<figure>(no SVG)<figcaption>{html.escape(k)}</figcaption></figure>"
                for k in (bad, good)
                if k is not None
            )
            caption = html.escape(f"{bad} ({_clean_caption(by_key[bad])})")
            doc.append(f"<h3 id='unclean-{html.escape(bad)}'>{caption}</h3><div class='g'>{figures}</div>")
    for title, shown, anchor in (
        (f"Worse than Penrose ({len(worse)})", worse, "worse-"),
        ("Gallery (ours | Penrose)", pairs, ""),
    ):
        doc.append(f"<h2>{html.escape(title)}</h2>")
        for p in shown:
            ours, theirs = images(p.key)
            figures = "".join(
                f"<figure><img src='{html.escape(src)}' alt='{who}'><figcaption>{who}</figcaption></figure>"
                if src
                else f"<figure>(no SVG)<figcaption>{who}</figcaption></figure>"
                for who, src in (("ours", ours), ("Penrose", theirs))
            )
            key, caption = html.escape(p.key), html.escape(_caption(p))
            doc.append(f"<h3 id='{anchor}{key}'>{key} ({caption})</h3><div class='g'>{figures}</div>")
    doc.append("</body></html>")
    (out_dir / "report.html").write_text("".join(doc), encoding="utf-8")
