"""Robustness across variations: on how many of a trio's variations each system's layout is clean.

Penrose's optimizer study (penrose/penrose pull request #1900, `packages/optimization-experiments`)
ran each registry trio 10 times and called a sample a *success* when the sum of squared constraint
violations, Σ max(c, 0)², is below ``CLEAN_SUM`` (0.1), and a trio *clean* when every sample is.
The harness applies the rule to each variation of a `registry.bench --variations N` run (keys
``{key}@{i}``, the trio's own variation under its plain key), to our rows and to Penrose's when it
ran the same variations (`--run-penrose`).

Rows carry the exact sum as ``constraintSum`` (over the last stage's constraints, ours and the Node
runner's alike). A row without it (Penrose's reference results) is judged by the bound
``nViolated · maxConstrViolation²``, which ignores constraints within the 1e-3 tolerance and can
call a clean layout unclean, never the reverse: the table marks such counts. A row that did not run
``ok`` is not clean. Besides the study's rule each trio shows our own verdict, *satisfied* (no
constraint above the tolerance), and how many of its unclean variations our run proved infeasible
(a violated constraint that reads nothing varying: ``nInfeasible``).

The study's published counts (over 188 trios of its registry, which also edited 13 Styles to make
them feasible) stand beside the totals: ``STUDY``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Row = dict[str, Any]
CLEAN_SUM = 0.1
VARIATION_MARK = "@"  # `{key}@{i}`: the trio `key` under its i-th derived variation
# Penrose's study, 10 samples per trio: trios, clean under multi-start L-BFGS (4 starts), clean under
# parallel tempering with AutoMALA, clean under no method.
STUDY = {"trios": 188, "multi-start L-BFGS": 161, "parallel tempering": 167, "never": 26}


def base_key(key: str) -> str:
    return key.split(VARIATION_MARK, 1)[0]


def suffix_order(suffix: str) -> int:
    """``""`` (the trio's own variation) first, then ``@1``, ``@2``, ... by number."""
    return int(suffix[len(VARIATION_MARK) :]) if suffix else 0


def constraint_sum(row: Row) -> tuple[float | None, bool]:
    """The row's Σ max(c, 0)² and whether it is exact (else the bound nViolated · max², or None)."""
    if row.get("constraintSum") is not None:
        return float(row["constraintSum"]), True
    n, worst = row.get("nViolated"), row.get("maxConstrViolation")
    if n is None:
        return None, False
    return (float(n) * max(float(worst or 0.0), 0.0) ** 2 if n else 0.0), False


def clean(row: Row) -> bool:
    """Penrose's study's success: the layout ran ok and its Σ max(c, 0)² is below CLEAN_SUM."""
    total, _ = constraint_sum(row)
    return row.get("status") == "ok" and total is not None and total < CLEAN_SUM


@dataclass(frozen=True)
class TrioRobustness:
    key: str
    runs: int
    clean: int
    satisfied: int  # no constraint above the optimizer's 1e-3 tolerance
    unclean: tuple[str, ...]  # variation suffixes ("" for the trio's own) that are not clean
    infeasible: int  # of those, how many our run proved infeasible (nInfeasible > 0)
    penrose_runs: int = 0  # Penrose's rows of this trio's variations run here (0: none)
    penrose_clean: int = 0
    penrose_exact: bool = True  # every Penrose row carried the exact sum
    clean_example: str | None = None  # a clean variation's suffix, to draw beside the unclean ones


def robustness(ours: Sequence[Row], penrose: Sequence[Row]) -> list[TrioRobustness]:
    """Per trio run over several variations (a key with ``@``), its clean counts, by key."""
    groups: dict[str, list[Row]] = {}
    for row in ours:
        groups.setdefault(base_key(row["key"]), []).append(row)
    theirs: dict[str, list[Row]] = {}
    for row in penrose:
        theirs.setdefault(base_key(row["key"]), []).append(row)
    out = []
    for key, rows in sorted(groups.items()):
        if not any(VARIATION_MARK in r["key"] for r in rows):
            continue
        rows = sorted(rows, key=lambda r: suffix_order(r["key"][len(key) :]))
        unclean = [r for r in rows if not clean(r)]
        first_clean = next((r for r in rows if clean(r)), None)
        # Penrose's rows count only when it ran these variations here (the reference has one row).
        mine = {r["key"] for r in rows}
        paired = [r for r in theirs.get(key, []) if r["key"] in mine]
        ran_here = any(VARIATION_MARK in r["key"] for r in paired)
        out.append(
            TrioRobustness(
                key=key,
                runs=len(rows),
                clean=len(rows) - len(unclean),
                satisfied=sum(r.get("status") == "ok" and r.get("nViolated") == 0 for r in rows),
                unclean=tuple(r["key"][len(key) :] for r in unclean),
                infeasible=sum(bool(r.get("nInfeasible")) for r in unclean),
                penrose_runs=len(paired) if ran_here else 0,
                penrose_clean=sum(clean(r) for r in paired) if ran_here else 0,
                penrose_exact=all(constraint_sum(r)[1] for r in paired),
                clean_example=first_clean["key"][len(key) :] if first_clean is not None else None,
            )
        )
    return out


def robustness_rows(items: Sequence[TrioRobustness]) -> tuple[list[str], list[list[str]]]:
    """The table: one row per trio, then the totals (trios clean on every variation)."""
    header = [
        "trio", "ours clean", "ours satisfied", "Penrose clean", "unclean variations (ours)",
        "of which proved infeasible",
    ]  # fmt: skip

    def penrose(item: TrioRobustness) -> str:
        if not item.penrose_runs:
            return "–"
        return f"{item.penrose_clean}/{item.penrose_runs}" + ("" if item.penrose_exact else " (bound)")

    rows = [
        [i.key, f"{i.clean}/{i.runs}", f"{i.satisfied}/{i.runs}", penrose(i),
         " ".join(s or "own" for s in i.unclean) or "–", str(i.infeasible) if i.unclean else "–"]
        for i in items
    ]  # fmt: skip
    ran = [i for i in items if i.penrose_runs]
    rows.append([
        "trios clean on every variation",
        f"{sum(i.clean == i.runs for i in items)} of {len(items)}",
        f"{sum(i.satisfied == i.runs for i in items)} of {len(items)}",
        f"{sum(i.penrose_clean == i.penrose_runs for i in ran)} of {len(ran)}" if ran else "–",
        f"{sum(len(i.unclean) for i in items)} variations",
        str(sum(i.infeasible for i in items)),
    ])  # fmt: skip
    return header, rows


def total_line(items: Sequence[TrioRobustness]) -> str:
    """Our clean count beside the study's published ones."""
    runs = {i.runs for i in items}
    per = f"all {runs.pop()} variations" if len(runs) == 1 else "all their variations"
    return (
        f"Clean (Σ max(c, 0)² < {CLEAN_SUM:g}) on {per}: {sum(i.clean == i.runs for i in items)} of"
        f" {len(items)} trios. Penrose's study (PR #1900, 10 samples, {STUDY['trios']} trios, 13 Styles"
        f" edited): multi-start L-BFGS {STUDY['multi-start L-BFGS']}, parallel tempering"
        f" {STUDY['parallel tempering']}, {STUDY['never']} under no method."
    )
