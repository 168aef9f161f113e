"""`DiagramWidget`: a laid-out builder diagram as a Jupyter widget the reader can drag (anywidget).

    w = db.widget()            # or DiagramWidget(db); displays itself in JupyterLab / Notebook
    w.layout["A.icon"]["center"]        # the current layout, shape properties as numbers
    w.value(a.r)                        # any input or lazy value of the program, now
    w.observe(lambda change: ..., "layout")   # react to every settled drag
    w.drag("A.icon", 30, -10)           # a drag from Python: what the browser's drag sends

The frontend (static/widget.js) draws the SVG, lets the pointer drag the shapes the kernel lists in
`draggable`, and sends `{"type": "drag", shape, dx, dy, begin, seq}` in canvas units (y up) from
where the drag began; it sends the next move only when the kernel answers `{"type": "settled", seq}`,
so a slow re-optimization drops intermediate moves instead of queueing them. The kernel pins the
shape, re-optimizes the rest (service.widget.drag) and sets `svg`, `layout`, `energy` and `status`.
"""

from __future__ import annotations

import pathlib
from typing import Any

import anywidget
import numpy as np
import traitlets

from energies.shapes import Canvas, Color
from service.render.concrete import concrete_shapes
from service.render.svg import render_svg

from .drag import DragError, DragSession, drag_targets

STATIC = pathlib.Path(__file__).parent / "static"


def plain(v: Any) -> Any:
    """A rendered property as JSON-friendly numbers, strings and lists."""
    if isinstance(v, Color):
        return [v.r, v.g, v.b, v.a]
    if isinstance(v, tuple | list):
        return [plain(x) for x in v]
    if isinstance(v, float | int | str | bool) or v is None:
        return v
    return str(v)


class DiagramWidget(anywidget.AnyWidget):
    _esm = STATIC / "widget.js"
    _css = STATIC / "widget.css"

    svg = traitlets.Unicode("").tag(sync=True)
    draggable = traitlets.List(traitlets.Unicode()).tag(sync=True)
    status = traitlets.Unicode("").tag(sync=True)
    layout = traitlets.Dict()  # shape name -> property -> value (numbers), kernel side only
    energy = traitlets.Float(0.0)

    def __init__(
        self,
        builder: Any,
        *,
        rendering: Any = None,
        lasso_strength: float | None = None,
        drag_time_limit: float = 10.0,
        **build_options: Any,
    ):
        """`builder`: a service.builder.DiagramBuilder; `rendering`: its build() if already made
        (else built here with `build_options`); `lasso_strength`: the continuity term's weight (by
        default the builder's, Bloom's `lassoStrength`)."""
        rendering = rendering if rendering is not None else builder.build(**build_options)
        strength = builder.lasso_strength if lasso_strength is None else lasso_strength
        targets = drag_targets(rendering.diagram, builder.drag_options())
        self._builder = builder
        self._session = DragSession(
            rendering.diagram,
            rendering.optimization.x,
            targets,
            lasso_strength=strength,
            time_limit=drag_time_limit,
        )
        super().__init__(
            svg=rendering.svg, draggable=sorted(targets), status=self._status(rendering.optimization)
        )
        self._refresh(rendering.optimization.energy)
        self.on_msg(self._on_message)

    @property
    def x(self) -> np.ndarray:
        """The current values of the program's inputs."""
        return self._session.x.copy()

    def value(self, v: Any) -> Any:
        """`v` (an input, a lazy value, a Vec, a shape) in the current layout, as numbers."""
        return self._builder.evaluate(v, self._session.x)

    def drag(self, shape: Any, dx: float, dy: float, *, begin: bool = True) -> None:
        """Drag `shape` (a Shape or its name) by (dx, dy) canvas units (y up) from where the drag
        began, and re-optimize the rest: what the browser sends while the pointer moves."""
        name = shape if isinstance(shape, str) else shape.name
        result = self._session.drag(name, float(dx), float(dy), begin=begin)
        self._refresh(result.energy, result)

    def _refresh(self, energy: float, result: Any = None) -> None:
        diagram, x = self._session.diagram, self._session.x
        shapes = concrete_shapes(diagram.shapes, x)
        if result is not None:
            self.svg = render_svg(Canvas(*diagram.canvas), shapes, variation=diagram.variation)
            self.status = self._status(result)
        layout: dict[str, dict[str, Any]] = {}
        todo = list(shapes)
        while todo:
            s = todo.pop(0)
            layout[s.name] = {k: plain(v) for k, v in s.props.items() if k != "shapes"}
            todo.extend(m for m in s.props.get("shapes", ()) if hasattr(m, "props"))
        self.energy = float(energy)
        self.layout = layout

    @staticmethod
    def _status(result: Any) -> str:
        violated = f", {result.n_violated} constraints violated" if result.n_violated else ""
        return f"energy {result.energy:.4g}{violated}"

    def _on_message(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict) or content.get("type") != "drag":
            return
        seq = content.get("seq", 0)
        try:
            self.drag(
                str(content.get("shape")),
                float(content["dx"]),
                float(content["dy"]),
                begin=bool(content.get("begin")),
            )
        except (DragError, KeyError, TypeError, ValueError) as e:
            self.status = f"drag failed: {e}"
        self.send({"type": "settled", "seq": seq})
