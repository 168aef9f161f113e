"""Shapes: a `Circle {...}` field becomes one `ShapeInstance` with every property filled in.

Properties the Style sets are evaluated and checked against the shape type's property types (a
vector where a vector is due, ...). Properties it does not set take the shape's default, drawn in
Penrose's sampling order before any evaluation (`sample_defaults`): sampled positions and sizes
that Penrose optimizes (`PropSpec.varying`: e.g. Circle `center`, `r`) become new unknowns, while
sampled colors and fixed defaults are constants. Text and Equation `width`, `height`, `ascent` and
`descent`, when the Style leaves them unset, are the label's measurements (`energies.labels`),
fixed before optimization as in Penrose. Properties a shape type does not declare are Penrose's
passthrough attributes: they must be strings or numbers and are kept in `props` as given; one that
looks like a misspelt property (strokeWidht) also gets an UnknownPropertyWarning naming it.
A shape's `name` is its path (e.g. "`A`.icon"), as Penrose names shapes.
"""

from __future__ import annotations

from difflib import get_close_matches
from functools import cache
from typing import TYPE_CHECKING, Any

from energies.diagram import ShapeInstance
from energies.expr import input_node
from energies.lang.ast import Pos
from energies.limits import MAX_PATH_COMMANDS, MAX_SHAPE_POINTS, MAX_STRING_LENGTH
from energies.shapes import SHAPE_TYPES, Canvas, Color, PropType, make_default_props
from energies.style import arith
from energies.style.context import ShapeSource
from energies.style.paths import ObjectRef
from energies.text.labels import LabelError, measure_label

if TYPE_CHECKING:
    from energies.shapes.seedrandom import SeedRandom
    from energies.style.evaluate import Evaluator

# difflib's similarity above which an unknown property reads as a misspelt one: strokeWidht and
# strokewidth are (0.91), SVG's own strokeLinejoin beside strokeLinecap (0.74) is not
MISSPELLING = 0.8
LABEL_PROPS = ("width", "height", "ascent", "descent")
LABEL_INPUTS = ("string", "fontSize", "fontFamily", "fontWeight", "fontStyle", "fontVariant", "fontStretch")


def sample_defaults(kind: str, canvas: Canvas, rng: SeedRandom) -> dict[str, Any]:
    """Every default property of a new shape, as Style values (lists, rgba colors)."""
    return {name: as_style_value(v) for name, v in make_default_props(kind, canvas, rng).items()}


def as_style_value(v: Any) -> Any:
    if isinstance(v, Color):
        return v if v.is_none else [v.r, v.g, v.b, v.a]
    if isinstance(v, tuple):
        return [as_style_value(x) for x in v]
    return v


def default_prop(ev: Evaluator, ref: ObjectRef, source: ShapeSource, pos: Pos | None) -> Any:
    """The value of a property the Style did not set."""
    assert ref.prop is not None
    spec = SHAPE_TYPES[source.kind].props.get(ref.prop)
    shape_key = ref.field_ref.key
    if spec is None:
        raise ev.rep.error(pos, f"{source.kind} {shape_key} has no property {ref.prop}", "MissingPathError")
    if ref.prop == "name":
        return shape_key
    if spec.pending:
        return getattr(measure(ev, ref.field_ref, source), ref.prop)
    value = ev.defaults[shape_key][ref.prop]
    if spec.varying and spec.type in (PropType.FLOAT, PropType.VECTOR):
        return _as_unknowns(ev, ref.key, value, spec.sample_ranges(ev.canvas))
    return value


def _as_unknowns(ev: Evaluator, name: str, value: Any, ranges: tuple[tuple[float, float], ...] | None) -> Any:
    if isinstance(value, list):
        return [
            input_node(ev.unknowns.add(float(x), f"{name}[{i}]", sampled_from=ranges[i] if ranges else None))
            for i, x in enumerate(value)
        ]
    return input_node(ev.unknowns.add(float(value), name, sampled_from=ranges[0] if ranges else None))


def measure(ev: Evaluator, shape_ref: ObjectRef, source: ShapeSource) -> Any:
    """The label measurements of a Text or Equation shape (once per shape)."""
    key = shape_ref.key
    found = ev.label_cache.get(key)
    if found is not None:
        return found
    inputs = {}
    for prop in LABEL_INPUTS:
        if prop not in SHAPE_TYPES[source.kind].props:
            continue
        value = ev.value_at(ObjectRef(shape_ref.scope, shape_ref.field, prop), source.pos)
        if not isinstance(value, str):
            where = source.props[prop].pos if prop in source.props else source.pos
            raise ev.rep.error(
                where,
                f"{key}.{prop} must be a string to measure the label, not {arith.kind_of(value)}",
                "BadShapeParamTypeError",
            )
        inputs[prop] = value
    try:
        metrics = measure_label(source.kind, key, inputs)
    except LabelError as e:
        where = source.props["string"].pos if "string" in source.props else source.pos
        raise ev.rep.error(where, str(e), "LabelError") from None
    ev.label_cache[key] = metrics
    return metrics


def build_shape(ev: Evaluator, ref: ObjectRef, source: ShapeSource) -> ShapeInstance:
    spec = SHAPE_TYPES[source.kind]
    props: dict[str, Any] = {}
    defaults = ev.defaults[ref.key]
    for name, prop_spec in spec.props.items():
        if name in source.props:
            value = ev.value_at(ObjectRef(ref.scope, ref.field, name), source.pos)
            value = check_prop(ev, ref, name, prop_spec.type, value, source.props[name].pos)
        elif prop_spec.varying or prop_spec.pending:  # shared with paths that read it: memoized
            value = ev.value_at(ObjectRef(ref.scope, ref.field, name), source.pos)
        else:
            value = defaults[name]
        props[name] = value
    props["name"] = ref.key
    for name, prop_source in source.props.items():
        if name in spec.props:
            continue
        value = ev.value_at(ObjectRef(ref.scope, ref.field, name), prop_source.pos)
        if not (isinstance(value, str) or arith.is_number(value)):
            raise ev.rep.error(
                prop_source.pos,
                f"{source.kind} has no property {name}; an extra (passthrough) property must be a string "
                f"or a number, not {arith.kind_of(value)}",
                "BadShapeParamTypeError",
            )
        close = _misspelt(source.kind, name)
        if close:  # a name far from every property is a deliberate SVG attribute (opacity, style)
            ev.rep.warn(
                prop_source.pos,
                "UnknownPropertyWarning",
                f"{source.kind} has no property {name} (did you mean {close[0]}?); it passes through to"
                " the SVG as an attribute",
            )
        props[name] = value
    shape = ShapeInstance(ref.key, source.kind, props)
    ev.shapes[ref.key] = shape
    return shape


@cache  # asked for every shape with the property: a thousand labels, one question
def _misspelt(kind: str, name: str) -> list[str]:
    """The property of `kind` that `name` reads as a misspelling of (a list of at most one)."""
    return get_close_matches(name, SHAPE_TYPES[kind].props, n=1, cutoff=MISSPELLING)


def check_prop(ev: Evaluator, ref: ObjectRef, name: str, ptype: PropType, value: Any, pos: Pos) -> Any:
    """`value` as the property type wants it, or a located BadShapeParamTypeError (ShapeLimitError
    when a list or string is longer than energies.limits allows)."""
    limit = SIZE_LIMITS.get(ptype)
    if limit is not None and isinstance(value, list | str) and len(value) > limit[0]:
        raise ev.rep.error(
            pos,
            f"{ref.key}.{name} has {len(value):,} {limit[1]}, above the limit of {limit[0]:,}",
            "ShapeLimitError",
        )
    fixed = coerce(ptype, value)
    if fixed is _BAD:
        raise ev.rep.error(
            pos,
            f"{ref.key}.{name} must be {ptype.describe}, not {arith.kind_of(value)}",
            "BadShapeParamTypeError",
        )
    return fixed


_BAD = object()
SIZE_LIMITS = {
    PropType.PT_LIST: (MAX_SHAPE_POINTS, "points"),
    PropType.PATH_DATA: (MAX_PATH_COMMANDS, "path commands"),
    PropType.STRING: (MAX_STRING_LENGTH, "characters"),
}


def coerce(ptype: PropType, v: Any) -> Any:
    if ptype is PropType.FLOAT:
        return (
            float(v) if isinstance(v, int) and not isinstance(v, bool) else v if arith.is_number(v) else _BAD
        )
    if ptype is PropType.STRING:
        return v if isinstance(v, str) else _BAD
    if ptype is PropType.BOOL:
        return v if isinstance(v, bool) else _BAD
    if ptype is PropType.VECTOR:
        return list(v) if arith.is_vector(v) else _BAD
    if ptype is PropType.PT_LIST:
        return [list(p) for p in v] if arith.is_matrix(v) or v == [] else _BAD
    if ptype is PropType.COLOR:
        if isinstance(v, Color):
            return as_style_value(v)
        return list(v) if arith.is_vector(v) and len(v) == 4 else _BAD
    if ptype is PropType.PATH_DATA:
        return v if isinstance(v, list) and all(hasattr(c, "cmd") for c in v) else _BAD
    if ptype is PropType.SHAPE_LIST:
        return list(v) if isinstance(v, list) and all(isinstance(s, ShapeInstance) for s in v) else _BAD
    if ptype is PropType.CLIP_DATA:
        return v if v is None or isinstance(v, ShapeInstance) else _BAD
    return v
