"""Path data as the library computes it: a list of `energies.shapes.PathCmd` (Penrose's `PathDataV`).

The convention of commands and their contents is `PathCmd`'s. Scalars may be Python floats or traced
adcore values, so path builders are polymorphic like the rest of the library; the number and kinds of
commands never depend on values. `concrete_path` turns a path of plain numbers into the renderer's
(floats, checked).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from energies.limits import MAX_LIST_LENGTH, check_size
from energies.shapes import ARC_VALUE_COUNT, PathCmd

PathData = list[PathCmd]


def _pt(p: Sequence[Any]) -> list:
    if len(p) != 2:
        raise ValueError(f"a path point must have 2 coordinates, got {len(p)}")
    return [p[0], p[1]]


class PathBuilder:
    """Appends commands to a path, one method per SVG command (chainable); points are checked to
    have two coordinates."""

    def __init__(self) -> None:
        self.cmds: PathData = []

    def _add(self, cmd: str, *contents: list[Any]) -> PathBuilder:
        self.cmds.append(PathCmd(cmd, list(contents)))
        return self

    def move_to(self, p: Sequence[Any]) -> PathBuilder:
        return self._add("M", _pt(p))

    def line_to(self, p: Sequence[Any]) -> PathBuilder:
        return self._add("L", _pt(p))

    def quadratic_to(self, control: Sequence[Any], p: Sequence[Any]) -> PathBuilder:
        return self._add("Q", _pt(control), _pt(p))

    def cubic_to(self, control1: Sequence[Any], control2: Sequence[Any], p: Sequence[Any]) -> PathBuilder:
        return self._add("C", _pt(control1), _pt(control2), _pt(p))

    def quadratic_join(self, p: Sequence[Any]) -> PathBuilder:
        return self._add("T", _pt(p))

    def cubic_join(self, control2: Sequence[Any], p: Sequence[Any]) -> PathBuilder:
        return self._add("S", _pt(control2), _pt(p))

    def arc_to(
        self, radius: Sequence[Any], p: Sequence[Any], rotation: Any, large_arc: Any, sweep: Any
    ) -> PathBuilder:
        rx, ry = _pt(radius)
        return self._add("A", [rx, ry, rotation, large_arc, sweep], _pt(p))

    def close(self) -> PathBuilder:
        return self._add("Z")

    def path(self) -> PathData:
        return self.cmds


def concat_paths(
    paths: Sequence[Sequence[PathCmd]],
    connect: Callable[[PathCmd], PathCmd | None] | None = None,
    connect_last: bool = False,
) -> PathData:
    """Paths one after another. With `connect`, the first command of every path but the first is
    replaced by `connect(cmd)` (dropped when it returns None); with `connect_last` too, the path ends
    with `connect` of its very first command (closing the chain)."""
    # concatenating a path with itself, again and again, doubles it each time
    check_size("the joined path's commands", sum(map(len, paths)), MAX_LIST_LENGTH)
    out: PathData = []
    for i, path in enumerate(paths):
        cmds = list(path)
        if not cmds:
            continue
        if connect is not None and i > 0:
            start = connect(cmds[0])
            cmds = [start, *cmds[1:]] if start is not None else cmds[1:]
        out.extend(cmds)
    if connect is not None and connect_last and out:
        end = connect(out[0])
        if end is not None:
            out.append(end)
    return out


def line_from(cmd: PathCmd) -> PathCmd:
    """The same target point reached by a straight line (used to connect paths)."""
    return PathCmd("L", cmd.contents)


def path_points(path: Sequence[PathCmd]) -> list[list]:
    """Every point argument of a path, in order (arc parameters excluded)."""
    pts: list[list] = []
    for c in path:
        entries = c.contents[1:] if c.cmd.upper() == "A" else c.contents
        pts.extend(list(e) for e in entries)
    return pts


def concrete_path(path: Sequence[PathCmd]) -> tuple[PathCmd, ...]:
    """A path of plain numbers as the renderer takes it: every entry floats, points of 2, arcs' of 5."""
    out = []
    for c in path:
        contents = []
        for k, entry in enumerate(c.contents):
            size = ARC_VALUE_COUNT if c.holds_values(k) else 2
            if len(entry) != size:
                what = "arc parameters" if c.holds_values(k) else "a path point"
                raise ValueError(f"{what} must be {size} numbers, got {len(entry)}")
            contents.append([float(v) for v in entry])
        out.append(PathCmd(c.cmd, contents))
    return tuple(out)


__all__ = ["PathBuilder", "PathCmd", "PathData", "concat_paths", "concrete_path", "line_from", "path_points"]
