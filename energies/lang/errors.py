"""Errors and warnings of the Domain / Substance / Style front end.

Every user mistake (syntax, unknown name, arity, type) surfaces as a `DiagramError`
naming the program (`source`), 1-based `line` and `column`, and carrying an `excerpt`:
the offending source line with a caret under the column.  Checkers that find several
problems raise `DiagramErrors`, which wraps the list and renders each one.

Warnings keep Penrose's kind names (`ImplicitOverrideWarning`, `NoopDeleteWarning`, ...)
so a trio's `excludeWarnings` list can silence them by kind.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from difflib import get_close_matches
from typing import Literal

Source = Literal["domain", "substance", "style"]

# Penrose's StyleWarning kinds (types/errors.ts); the names are the user-facing contract.
WARNING_KINDS: frozenset[str] = frozenset(
    {
        "ImplicitOverrideWarning",
        "NoopDeleteWarning",
        "LayerCycleWarning",
        "ShapeBelongsToMultipleGroups",
        "GroupCycleWarning",
        "BBoxApproximationWarning",
    }
)


# difflib's similarity from which an unknown name reads as a misspelling of a known one: `contain` for
# `contains`, `Circel` for `Circle`, `ensur` for `ensure`, but not `foo` for `for`-anything.
NEAR_MISS = 0.7


def closest(name: str, known: Iterable[str], cutoff: float = NEAR_MISS) -> str | None:
    """The known name `name` most likely misspells (letter case aside), or None."""
    by_folded: dict[str, str] = {}
    for k in known:
        by_folded.setdefault(k.casefold(), k)
    match = get_close_matches(name.casefold(), by_folded, n=1, cutoff=cutoff)
    return by_folded[match[0]] if match else None


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """' (did you mean X?)' to append to an error about an unknown `name`, or ''."""
    guess = closest(name, known)
    return f" (did you mean {guess}?)" if guess is not None and guess != name else ""


def make_excerpt(text: str, line: int, column: int) -> str:
    """The source line `line` (1-based) with a caret under `column` (1-based)."""
    lines = text.splitlines()
    if not lines or line < 1:
        return ""
    src = lines[min(line, len(lines)) - 1].expandtabs(1)
    caret_col = max(1, min(column, len(src) + 1))
    return f"{src}\n{' ' * (caret_col - 1)}^"


class DiagramError(Exception):
    """A user mistake located in one of the three programs."""

    def __init__(
        self,
        source: Source,
        line: int,
        column: int,
        message: str,
        excerpt: str = "",
        kind: str = "Error",
    ) -> None:
        super().__init__(message)
        self.source = source
        self.line = line
        self.column = column
        self.message = message
        self.excerpt = excerpt
        self.kind = kind

    @classmethod
    def at(
        cls, source: Source, text: str, line: int, column: int, message: str, kind: str = "Error"
    ) -> DiagramError:
        return cls(source, line, column, message, make_excerpt(text, line, column), kind)

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}:{self.column}" if self.line > 0 else self.source
        head = f"{where}: {self.message}"
        return f"{head}\n{self.excerpt}" if self.excerpt else head


class DiagramErrors(DiagramError):
    """Several errors found in one checking pass; behaves like the first one."""

    def __init__(self, errors: Sequence[DiagramError]) -> None:
        if not errors:
            raise ValueError("DiagramErrors needs at least one error")
        first = errors[0]
        super().__init__(first.source, first.line, first.column, first.message, first.excerpt, first.kind)
        self.errors: tuple[DiagramError, ...] = tuple(errors)

    def __str__(self) -> str:
        return "\n".join(str(e) for e in self.errors)


def one_per_place(errors: Sequence[DiagramError]) -> list[DiagramError]:
    """One error per mistake: a Style line fails alike for every match of its block, so errors of
    the same kind at the same place become the first one, saying how many matches share it."""
    groups: dict[tuple[str, int, int, str], list[DiagramError]] = {}
    for e in errors:
        groups.setdefault((e.source, e.line, e.column, e.kind), []).append(e)
    merged = []
    for first, *rest in groups.values():
        if rest:
            s = "es" if len(rest) > 1 else ""
            message = f"{first.message} (and the same in {len(rest)} more match{s} of this block)"
            first = DiagramError(first.source, first.line, first.column, message, first.excerpt, first.kind)
        merged.append(first)
    return merged


_READING_ORDER = {"domain": 0, "substance": 1, "style": 2}


def raise_all(errors: Sequence[DiagramError]) -> None:
    """Raise nothing, the single error, or a `DiagramErrors` bundle, one error per mistake, in
    reading order: checkers find errors in their own order (Style in dependency order), but a reader
    fixes a program from the top, and a mistake higher up is the likelier cause of one below."""
    errors = sorted(one_per_place(errors), key=lambda e: (_READING_ORDER.get(e.source, 3), e.line, e.column))
    if len(errors) == 1:
        raise errors[0]
    if errors:
        raise DiagramErrors(errors)


@dataclass(frozen=True)
class DiagramWarning:
    """A non-fatal finding; `kind` is one of Penrose's warning tags."""

    kind: str
    message: str
    source: Source = "style"
    line: int = 0
    column: int = 0

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}:{self.column}: " if self.line else f"{self.source}: "
        return f"{where}{self.kind}: {self.message}"


def visible_warnings(
    warnings: Iterable[DiagramWarning], exclude: Iterable[str] | None
) -> list[DiagramWarning]:
    """Warnings whose kind is not listed in a trio's `excludeWarnings`."""
    excluded = set(exclude or ())
    return [w for w in warnings if w.kind not in excluded]
