"""One live editing session, run inside a live worker process (service.workers.live_pool).

    run_session(conn, job, idle_limit)   # until the layout ends (or, interactive, until told or idle)

The session lays the trio out exactly as a POST /diagrams would (`service.workers.layout_job`), with the
compiled problem wrapped (`LiveProblem`) so that every energy evaluation can
- send a frame (the SVG of the point just evaluated, with its stage and the stages' names, round,
  energy, largest violation),
  at most one per `frame_interval` (longer when drawing a frame is slow, so drawing never takes more
  than a third of the time);
- obey the client's commands, read from the pipe between evaluations: pause, step (one L-BFGS
  iteration), resume, cancel, end; a job with `startPaused` pauses by itself after its first frame.
After the layout an interactive session keeps the compiled problem and the point: a `drag` command
pins the dragged shape's position (its position when the drag began plus the drag's offset, through
its `draggingConstraint`, service.workers.drag_constraint) and re-optimizes the rest, streaming
frames; a newer drag preempts the running one. Every step of one drag starts from the layout when the
drag began, the dragged shape moved: a preempted step's last point may be a line search's trial far
from any layout, and where the shapes settle must depend on where the pointer is, not on how fast the
hand moved (each step preempting the last at a point set by timing).

The drag keeps the picture (as Bloom's `lassoStrength`): while re-optimizing, the energy has one
more term, ``DRAG_LASSO · Σ (x - x_drag)²`` over the unpinned unknowns, ``x_drag`` the layout when
the drag began. Constraints still win (their penalty weight starts at 1e3 and grows), so shapes the
dragged one pushes follow it, and objectives can still move what they pull; a shape nothing acts on
stays where it was instead of drifting to wherever a fresh run of the optimizer would put it. The
term is the drag's, not the diagram's: the energies reported (frames, `settled`) are the
diagram's own goals' at the point reached.

Messages to the parent are JSON `{"event": name, "data": {...}}`; the last one of a session is
`{"event": "end", ...}`. Commands in are JSON `{"action": ...}`.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field, replace
from multiprocessing.connection import Connection
from typing import Any

import numpy as np

from energies.caches import Caches
from energies.expr import Node
from energies.optimize.optimizer import OptimizeError, Progress, optimize
from energies.shapes import Canvas
from service.render.concrete import concrete_shapes
from service.render.svg import RenderError, render_svg

from .drag_constraint import DragConstraint, DragConstraintError, parse_drag_constraint
from .layout_job import Laid, finite_or_none, layout_outcome, wire

FRAME_INTERVAL = 0.05  # seconds between frames at least
# The continuity term's weight per unknown (module docstring), in energy per squared canvas unit. Small
# beside the Style's objectives (a label centred by `norm(...) == 0` still follows its shape to within
# 1%), enough to pick, among the layouts the Style likes equally, the one nearest the picture: dragging
# a set of tree-venn 8 steps moved an unrelated set 86 px without it, 0 px with it.
DRAG_LASSO = 0.01


class Interrupt(BaseException):  # noqa: N818 - a control transfer, not an error
    """Unwinds the optimizer (through the pipeline's `except Exception`) on cancel, end or a newer drag."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


@dataclass
class Draggable:
    name: str
    slots: list[int]  # x slots of the position: (cx, cy) or (x1, y1, x2, y2) for a line
    constraint: DragConstraint | None


def input_slot(value: Any) -> int | None:
    return value.static if isinstance(value, Node) and value.op == "input" else None


def draggables(diagram: Any) -> list[Draggable]:
    """Shapes whose position is all unknowns: a center, or a line's two ends. Others stay put."""
    found = []
    for shape in diagram.shapes:
        props = shape.props
        points = [props["center"]] if "center" in props else [props.get("start"), props.get("end")]
        slots = [input_slot(c) for p in points if isinstance(p, (list, tuple)) and len(p) == 2 for c in p]
        if len(slots) != 2 * len(points) or None in slots:
            continue
        text = props.get("draggingConstraint")
        constraint = parse_drag_constraint(text, shape.name) if isinstance(text, str) and text else None
        found.append(Draggable(shape.name, [s for s in slots if s is not None], constraint))
    return found


@dataclass(eq=False)
class Session:
    conn: Connection
    job: dict[str, Any]
    idle_limit: float
    caches: Caches | None = None  # the worker's (energies.caches)
    paused: bool = False
    step: bool = False
    progress: Progress | None = None
    last_frame: float = -math.inf
    interval: float = FRAME_INTERVAL
    started: float = field(default_factory=time.perf_counter)
    problem: Any = None
    diagram: Any = None
    pinned: np.ndarray | None = None
    drag: dict[str, Any] | None = None  # the newest drag command not yet started
    origins: dict[str, list[float]] = field(default_factory=dict)  # where each shape was when its drag began
    anchor: np.ndarray | None = None  # the layout when the current drag began (DRAG_LASSO)
    frames: int = 0
    last: dict[str, float] = field(default_factory=dict)  # the energy and largest violation of the last frame
    pending_step_frame: bool = False  # a step's iteration ended: draw its point at once
    hold: bool = False  # pause after the first frame (autostep off): the job's "startPaused"

    def __post_init__(self) -> None:
        self.hold = bool(self.job.get("startPaused"))

    # -- the pipe ----------------------------------------------------------------------------------

    def send(self, event: str, data: dict[str, Any]) -> None:
        self.conn.send_bytes(json.dumps({"event": event, "data": finite_or_none(data)}).encode())

    def command(self, message: dict[str, Any], dragging: bool) -> None:
        action = message.get("action")
        if action in ("cancel", "end", "reclaimed"):
            raise Interrupt(action)
        if action == "pause":
            self.paused, self.step = True, False
            self.send("paused", self.stats())
        elif action == "resume":
            self.paused, self.step = False, False
            self.send("resumed", {})
        elif action == "step":
            self.paused, self.step = False, True
        elif action == "drag":
            self.drag = message
            if dragging:
                raise Interrupt("drag")

    def checkpoint(self, dragging: bool) -> None:
        while self.conn.poll(0):
            self.command(json.loads(self.conn.recv_bytes()), dragging)
        while self.paused:
            if not self.conn.poll(self.idle_limit):
                raise Interrupt("idle")
            self.command(json.loads(self.conn.recv_bytes()), dragging)

    # -- frames -------------------------------------------------------------------------------------

    def stats(self) -> dict[str, Any]:
        p = self.progress
        return {
            # before the optimizer's first report the layout is at its first stage's start
            "stage": p.stage_name if p else (self.problem.stages[0].name if self.problem is not None else ""),
            "round": p.ep_round if p else 0,
            "start": p.start if p else 0,
            "iterations": p.iterations if p else 0,
            "elapsedMs": (time.perf_counter() - self.started) * 1e3,
            # the layout's stages (Style's `layout = [...]`; one unnamed stage without it)
            "stages": [s.name for s in self.problem.stages] if self.problem is not None else [],
            **self.last,
        }

    def frame(self, x: np.ndarray, energy: float) -> None:
        t0 = time.perf_counter()
        try:
            shapes = concrete_shapes(self.diagram.shapes, x)
            svg = render_svg(Canvas(*self.diagram.canvas), shapes, variation=self.diagram.variation)
        except (RenderError, ValueError, ArithmeticError):
            return  # an intermediate point the renderer cannot draw: wait for the next one
        constraints = self.problem.goal_values(x).constraints
        violation = float(constraints.max()) if constraints.size else 0.0
        self.frames += 1
        self.last = {"energy": energy, "maxViolation": violation}
        self.send("frame", {"svg": svg, **self.stats()})
        if self.hold:  # the initial state is on screen: wait there for step or resume
            self.hold, self.paused, self.step = False, True, False
            self.send("paused", self.stats())
        spent = time.perf_counter() - t0
        self.interval = max(FRAME_INTERVAL, 3 * spent)
        self.last_frame = time.perf_counter()

    def on_progress(self, p: Progress) -> None:
        self.progress = p
        if self.step:  # one iteration done: show it and stop again
            self.last_frame = -math.inf
            self.paused, self.step = True, False
            self.pending_step_frame = True

    def observe(self, problem: Any) -> LiveProblem:
        self.problem, self.diagram = problem, problem.diagram
        return LiveProblem(problem, self, dragging=False)

    # -- the session ---------------------------------------------------------------------------------

    def run(self) -> None:
        try:
            self.layout()
        except Interrupt as e:
            self.send("end", {"reason": e.reason, **self.stats()})
            return
        self.send("end", {"reason": "done"})

    def layout(self) -> None:
        job = self.job
        outcome, rendering = layout_outcome(
            job, self.caches, observe=self.observe, on_progress=self.on_progress
        )
        if not isinstance(outcome, Laid):
            self.send("error", wire(outcome))
            return
        self.diagram = rendering.diagram
        x = np.array(rendering.optimization.x, dtype=np.float64)
        try:
            movable = draggables(self.diagram)
        except DragConstraintError as e:
            movable = []
            outcome.report["warnings"].append(str(e))
        names = [d.name for d in movable]
        self.send("done", {"svg": outcome.svg, **outcome.report, "draggable": names})
        if not job.get("interactive"):
            return
        by_name = {d.name: d for d in movable}
        while True:
            if self.drag is None:
                if not self.conn.poll(self.idle_limit):
                    raise Interrupt("idle")
                self.command(json.loads(self.conn.recv_bytes()), dragging=False)
                continue
            message, self.drag = self.drag, None
            target = by_name.get(str(message.get("shape")))
            if target is None:
                self.send("warning", {"message": f"shape {message.get('shape')!r} cannot be dragged"})
                continue
            try:
                x = self.redrag(x, target, message)
            except DragConstraintError as e:
                self.send("warning", {"message": str(e)})

    def redrag(self, x: np.ndarray, target: Draggable, message: dict[str, Any]) -> np.ndarray:
        """Move `target` by the drag's offset from where the drag began, pin it, optimize the rest."""
        if message.get("begin") or target.name not in self.origins or self.anchor is None:
            self.origins[target.name] = [float(x[s]) for s in target.slots]
            self.anchor = x.copy()
        origin = self.origins[target.name]
        dx, dy = float(message.get("dx", 0.0)), float(message.get("dy", 0.0))
        if not (math.isfinite(dx) and math.isfinite(dy)):
            raise DragConstraintError("the drag offset is not finite")
        # as Penrose's editor, the constraint maps the shape's center (a line's midpoint) under the pointer
        cx, cy = float(np.mean(origin[0::2])), float(np.mean(origin[1::2]))
        px, py = cx + dx, cy + dy
        if target.constraint is not None:
            px, py = target.constraint(px, py)
        x = self.anchor.copy()
        for k, s in enumerate(target.slots):
            x[s] = origin[k] + (px - cx if k % 2 == 0 else py - cy)
        self.pinned = np.zeros(len(x), dtype=bool)
        self.pinned[target.slots] = True
        self.started = time.perf_counter()
        self.last_frame = -math.inf
        live = LiveProblem(self.problem, self, dragging=True)
        try:
            result = optimize(live, x, time_limit=float(self.job["timeLimit"]), on_progress=self.on_progress)
            x = result.x
            self.frame(x, result.energy)
            settled = {"energy": result.energy, "nViolated": result.n_violated, "seq": message.get("seq", 0)}
            self.send("settled", {**self.stats(), **settled})
        except Interrupt as e:
            if e.reason != "drag":
                raise
            x = live.last_x if live.last_x is not None else x
        except OptimizeError as e:
            self.send("warning", {"message": f"the layout failed after the drag: {e}"})
        return x


class LiveProblem:
    """The compiled problem with frames and commands between evaluations; while dragging, the pinned
    slots are left out of every stage's varying inputs."""

    def __init__(self, problem: Any, session: Session, dragging: bool):
        self.problem = problem
        self.session = session
        self.dragging = dragging
        self.last_x: np.ndarray | None = None
        self.stages = problem.stages
        if dragging and session.pinned is not None:
            keep = ~session.pinned
            self.stages = [replace(s, varying=s.varying & keep) for s in problem.stages]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.problem, name)

    def energy_and_grad(self, x: np.ndarray, stage: int, weight: float) -> tuple[float, np.ndarray]:
        s = self.session
        s.checkpoint(self.dragging)
        own, g = self.problem.energy_and_grad(x, stage, weight)
        f = own
        if self.dragging and s.anchor is not None and s.pinned is not None:
            away = np.where(s.pinned, 0.0, x - s.anchor)
            f, g = own + DRAG_LASSO * float(away @ away), g + 2.0 * DRAG_LASSO * away
        self.last_x = np.array(x, dtype=np.float64)
        now = time.perf_counter()
        if s.pending_step_frame or now - s.last_frame >= s.interval:
            s.pending_step_frame = False
            s.frame(self.last_x, float(own))
        return f, g


def run_session(
    conn: Connection, job: dict[str, Any], idle_limit: float, caches: Caches | None = None
) -> None:
    """Run one session on this worker's pipe, with the worker's `caches`; see the module docstring."""
    Session(conn, job, idle_limit, caches).run()
