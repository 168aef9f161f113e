"""Errors and warnings of Style evaluation, located in the Style text.

Every user mistake found while evaluating a Style program becomes a `DiagramError` with source
"style", the line and column of the offending AST node, and Penrose's error tag as `kind`
(e.g. `MissingPathError`, `BinOpTypeError`). Warnings keep Penrose's warning kinds so a trio's
`excludeWarnings` can silence them.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from energies.lang.ast import NOPOS, Pos
from energies.lang.errors import DiagramError, DiagramWarning, make_excerpt

MAX_ERRORS = 50  # a mistake repeated in every match of a large diagram is reported this often at most


@dataclass
class Reporter:
    """Makes located errors and collects warnings for one Style program."""

    text: str
    warnings: list[DiagramWarning] = field(default_factory=list)
    _lines: list[str] | None = None
    _seen: set[DiagramWarning] = field(default_factory=set)

    def error(self, pos: Pos | None, message: str, kind: str = "Error") -> DiagramError:
        pos = pos or NOPOS
        if self._lines is None:
            self._lines = self.text.splitlines()
        excerpt = ""
        if 0 < pos.line <= len(self._lines):  # the one source line, not the whole text, per error
            excerpt = make_excerpt(self._lines[pos.line - 1], 1, pos.column)
        return DiagramError("style", pos.line, pos.column, message, excerpt, kind)

    def warn(self, pos: Pos | None, kind: str, message: str) -> None:
        """Record a warning once: a line of a block warns the same for every match."""
        pos = pos or NOPOS
        warning = DiagramWarning(kind, message, "style", pos.line, pos.column)
        if warning not in self._seen:
            self._seen.add(warning)
            self.warnings.append(warning)


class SkipFailed(Exception):
    """Raised when a value depends on a field whose own error was already reported."""


class BulkFailed(Exception):
    """A block cannot be evaluated in bulk (`bulk`): its statements need per-match values."""
