"""Shapes of a builder program: Penrose's eleven shape types, made from keyword arguments.

    a = db.circle(r=db.input(), fill_color="#3050c0")      # a Shape
    a.center, a.r, a.fillColor                              # its properties (Vec, lazy or plain)

Rules, those of a Style's `shape x = Circle { ... }` (energies/style/shapes.py):
- keywords are Penrose's property names (`fillColor`) or their snake_case spelling (`fill_color`);
  any other keyword is a mistake, reported with "did you mean" when it is close to a property
  (difflib ratio >= 0.8) and with the shape's properties otherwise; Penrose's passthrough SVG
  attributes, strings or numbers, are given apart: `passthrough={"opacity": 0.5}`;
- every shape draws all its samplers from the builder's generator in Penrose's order, whichever
  properties are given, so a shape's random numbers do not depend on its keywords;
- a property not given takes Penrose's default: sampled positions and sizes (Circle `center` and
  `r`, ...) become optimized inputs named `<shape>.<property>[i]`, sampled colors and fixed
  defaults are constants; Text and Equation `width`, `height`, `ascent`, `descent` are the label's
  measurements (energies.text.labels);
- a given value is checked against the property's type (a number, a vector, a color as "#rrggbb",
  "none", an rgba or rgb sequence, ...), and a bare unnamed input given as a component takes the
  property's name (`<shape>.center[0]`), which messages and `widget.layout` show;
- `drag` and `dragConstraint` are Bloom's: whether the reader may drag the shape in the notebook
  widget (default: any shape whose position is optimized inputs), and a Python function
  `(x, y) -> (x, y)` mapping the pointer's canvas position to the shape's.
Shapes are immutable once made: a property is given when the shape is made, as in Bloom.
"""

from __future__ import annotations

from collections.abc import Callable
from difflib import get_close_matches
from typing import Any

from energies.diagram import ShapeInstance
from energies.expr import Node, input_node
from energies.lang.errors import did_you_mean
from energies.library.paths import PathCmd
from energies.limits import MAX_SHAPE_POINTS, MAX_STRING_LENGTH
from energies.shapes import SHAPE_TYPES, Color, PropType, make_default_props
from energies.text.labels import LabelError, measure_label

from .errors import BuilderAttributeError, BuilderError
from .values import describe, from_style, is_scalar, to_style

# The builder (service.builder.builder) imports this module; it is typed `Any` here so that the
# import runs one way: DiagramBuilder = Any.
DiagramBuilder = Any

MISSPELLING = 0.8  # difflib's ratio above which an unknown keyword reads as a misspelt property
LABEL_PROPS = ("width", "height", "ascent", "descent")
LABEL_INPUTS = ("string", "fontSize", "fontFamily", "fontWeight", "fontStyle", "fontVariant", "fontStretch")
DRAG_KEYWORDS = {"drag": "drag", "dragConstraint": "dragConstraint", "drag_constraint": "dragConstraint"}


def camel(name: str) -> str:
    """fill_color -> fillColor (a camelCase name is left as it is)."""
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def prop_name(kind: str, name: str) -> str | None:
    """The Penrose property `name` means on a `kind` shape (as written, or snake_case), or None."""
    props = SHAPE_TYPES[kind].props
    if name in props:
        return name
    c = camel(name)
    return c if c in props else None


class Shape:
    """A shape of a builder's diagram. Its properties read as attributes, by Penrose's names or
    snake_case: vectors as `Vec`s, numbers as floats or lazy values, group members as Shapes.
    Pass it to constraints, objectives, functions and `db.layer`."""

    __slots__ = ("_instance", "_builder")

    def __init__(self, instance: ShapeInstance, builder: DiagramBuilder):
        object.__setattr__(self, "_instance", instance)
        object.__setattr__(self, "_builder", builder)

    @property
    def kind(self) -> str:
        """Penrose's shape type: "Circle", "Text", ..."""
        return self._instance.kind

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        inst = self._instance
        name = prop_name(inst.kind, attr)
        if name is None and attr in inst.props:  # a passthrough attribute
            name = attr
        if name is None:
            raise BuilderAttributeError(
                f"{inst.kind} {inst.name} has no property {attr}"
                f"{did_you_mean(camel(attr), [*SHAPE_TYPES[inst.kind].props, *inst.props])}"
            )
        return from_style(inst.props[name], self._builder._shape_of)

    def __setattr__(self, attr: str, value: Any) -> None:
        raise BuilderError(
            f"{self._instance.kind} {self._instance.name}: a shape's properties are given when it is made, "
            f"e.g. db.{self._instance.kind.lower()}({attr}=...)"
        )

    def __dir__(self) -> list[str]:
        return ["kind", *self._instance.props]

    def __repr__(self) -> str:
        return f"<{self._instance.kind} {self._instance.name}>"


def make_shape(db: DiagramBuilder, kind: str, keywords: dict[str, Any]) -> Shape:
    """A new `kind` shape of `db` from the user's keywords (see the module docstring)."""
    spec = SHAPE_TYPES[kind]
    defaults = make_default_props(kind, db.canvas, db.rng)  # every sampler, in Penrose's order
    name = keywords.pop("name", None)
    if name is None:
        name = f"{len(db._shapes)}_{kind}"  # Bloom's default names
    if not isinstance(name, str) or not name:
        raise BuilderError(f"{kind}: name must be a non-empty string, not {describe(name)}")
    if name in db._shapes:
        raise BuilderError(f"{kind}: there is already a shape named {name}")
    given: dict[str, Any] = {}
    passthrough = check_passthrough(kind, name, keywords.pop("passthrough", None) or {})
    drag: dict[str, Any] = {}
    for key, value in keywords.items():
        prop = prop_name(kind, key)
        if prop is None and key in DRAG_KEYWORDS:
            drag[DRAG_KEYWORDS[key]] = value
            continue
        if prop is None:
            raise BuilderAttributeError(unknown_keyword(kind, key))
        if prop in given:
            raise BuilderError(f"{kind} {name}: {prop} is given twice (as {prop} and as {camel(key)})")
        given[prop] = check_prop(kind, name, prop, spec.props[prop].type, value)
    props: dict[str, Any] = {}
    for prop, prop_spec in spec.props.items():
        if prop in given:
            props[prop] = given[prop]
            db._name_inputs(given[prop], f"{name}.{prop}")
        elif prop_spec.varying and prop_spec.type in (PropType.FLOAT, PropType.VECTOR):
            props[prop] = sampled_inputs(
                db, f"{name}.{prop}", defaults[prop], prop_spec.sample_ranges(db.canvas)
            )
        elif not prop_spec.pending:
            props[prop] = to_style(defaults[prop])
    props["name"] = name
    if kind in ("Text", "Equation"):
        measure(kind, name, props)
    props.update(passthrough)
    instance = ShapeInstance(name, kind, props)
    db._drag[name] = drag_spec(kind, name, drag)
    return db._add_shape(instance)


def unknown_keyword(kind: str, key: str) -> str:
    props = SHAPE_TYPES[kind].props
    close = get_close_matches(camel(key), props, n=1, cutoff=MISSPELLING)
    if close:
        return f"{kind} has no property {key} (did you mean {close[0]}?)"
    return (
        f"{kind} has no property {key}; its properties are {', '.join(p for p in props if p != 'name')} "
        "(SVG attributes go in passthrough={...})"
    )


def check_passthrough(kind: str, name: str, attrs: Any) -> dict[str, Any]:
    """Penrose's passthrough properties: SVG attributes given as strings or numbers."""
    if not isinstance(attrs, dict):
        raise BuilderError(
            f"{kind} {name}: passthrough must be a dict of SVG attributes, not {describe(attrs)}"
        )
    for key, value in attrs.items():
        if not isinstance(key, str) or prop_name(kind, key) is not None:
            raise BuilderError(f"{kind} {name}: passthrough {key!r} is a property: give it as {key}=...")
        if not (isinstance(value, str) or (is_scalar(value) and not isinstance(value, Node))):
            raise BuilderError(
                f"{kind} {name}: passthrough {key} must be a string or a number, not {describe(value)}"
            )
    return {k: to_style(v) for k, v in attrs.items()}


def sampled_inputs(db: DiagramBuilder, name: str, value: Any, ranges: Any) -> Any:
    """The optimized inputs of a sampled property, started at the sampled value."""
    if isinstance(value, tuple | list):
        return [
            input_node(db._unknowns.add(float(v), f"{name}[{i}]", sampled_from=ranges[i] if ranges else None))
            for i, v in enumerate(value)
        ]
    return input_node(db._unknowns.add(float(value), name, sampled_from=ranges[0] if ranges else None))


def measure(kind: str, name: str, props: dict[str, Any]) -> None:
    """Fill the label measurements the program did not give (`LABEL_PROPS`)."""
    missing = [p for p in LABEL_PROPS if p in SHAPE_TYPES[kind].props and p not in props]
    if not missing:
        return
    inputs = {p: props[p] for p in LABEL_INPUTS if p in props}
    try:
        metrics = measure_label(kind, name, inputs)
    except LabelError as e:
        raise BuilderError(f"{kind} {name}: {e}") from None
    for p in missing:
        props[p] = getattr(metrics, p)


def drag_spec(kind: str, name: str, drag: dict[str, Any]) -> tuple[bool | None, Callable[..., Any] | None]:
    """(drag, dragConstraint) as given: drag None means "if its position is optimized"."""
    enabled = drag.get("drag")
    constraint = drag.get("dragConstraint")
    if enabled is not None and not isinstance(enabled, bool):
        raise BuilderError(f"{kind} {name}: drag must be True or False, not {describe(enabled)}")
    if constraint is not None and not callable(constraint):
        raise BuilderError(
            f"{kind} {name}: dragConstraint must be a function (x, y) -> (x, y), not {describe(constraint)}"
        )
    return enabled, constraint


def _color(v: Any) -> Any:
    if isinstance(v, str):
        if v.strip().lower() == "none":
            return Color.none()
        try:
            c = Color.parse(v.strip())
        except ValueError:
            return None
        return [c.r, c.g, c.b, c.a]
    v = to_style(v)
    if isinstance(v, Color):
        return v
    if isinstance(v, list) and len(v) in (3, 4) and all(is_scalar(c) for c in v):
        return v if len(v) == 4 else [*v, 1.0]
    return None


def _points(v: Any) -> Any:
    v = to_style(v)
    if isinstance(v, list) and all(isinstance(p, list) and p and all(is_scalar(c) for c in p) for p in v):
        return v
    return None


def _check(ok: Callable[[Any], bool]) -> Callable[[Any], Any]:
    def convert(v: Any) -> Any:
        v = to_style(v)
        return v if ok(v) else None

    return convert


CONVERT: dict[PropType, Callable[[Any], Any]] = {
    PropType.FLOAT: lambda v: to_style(v) if is_scalar(v) else None,
    PropType.STRING: lambda v: v if isinstance(v, str) else None,
    PropType.BOOL: lambda v: bool(v) if isinstance(v, bool) else None,
    PropType.VECTOR: _check(lambda v: isinstance(v, list) and bool(v) and all(is_scalar(c) for c in v)),
    PropType.PT_LIST: _points,
    PropType.COLOR: _color,
    PropType.PATH_DATA: _check(lambda v: isinstance(v, list) and all(isinstance(c, PathCmd) for c in v)),
    PropType.SHAPE_LIST: _check(
        lambda v: isinstance(v, list) and all(isinstance(s, ShapeInstance) for s in v)
    ),
    PropType.CLIP_DATA: _check(lambda v: v is None or isinstance(v, ShapeInstance)),
}
SIZE_LIMITS = {
    PropType.PT_LIST: (MAX_SHAPE_POINTS, "points"),
    PropType.PATH_DATA: (MAX_SHAPE_POINTS, "path commands"),
    PropType.STRING: (MAX_STRING_LENGTH, "characters"),
}


def check_prop(kind: str, name: str, prop: str, ptype: PropType, value: Any) -> Any:
    """`value` as the property's Style value, or a BuilderError naming the shape and property."""
    try:
        converted = CONVERT[ptype](value)
    except BuilderError:
        converted = None
    if converted is None and not (ptype is PropType.CLIP_DATA and value is None):
        raise BuilderError(f"{kind} {name}: {prop} must be {ptype.describe}, not {describe(value)}")
    limit = SIZE_LIMITS.get(ptype)
    if limit is not None and len(converted) > limit[0]:
        raise BuilderError(
            f"{kind} {name}: {prop} has {len(converted):,} {limit[1]}, above the limit of {limit[0]:,}"
        )
    return converted
