"""Drawing order: Penrose's default order, `layer` statements, and groups.

Shapes start in the order Penrose's dependency graph meets them. Each `layer a above b` adds an
edge b -> a between the two shapes, or, when they sit in different groups, between their
outermost distinct ancestors (a shape inside a group is ordered with its group). A topological
sort that keeps the default order wherever the statements allow it gives the order; when the
statements form a cycle, the order is approximate (fewest unmet statements first) and a
`LayerCycleWarning` says so. A Group's members are drawn inside the group, so only shapes that
belong to no group are drawn at the top level; a group's members are drawn in the global order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from energies.diagram import ShapeInstance


@dataclass
class Graph:
    """A directed graph keeping node insertion order (Penrose's utils/Graph)."""

    succ: dict[str, list[str]] = field(default_factory=dict)
    pred: dict[str, list[str]] = field(default_factory=dict)

    def add_node(self, n: str) -> None:
        self.succ.setdefault(n, [])
        self.pred.setdefault(n, [])

    def add_edge(self, a: str, b: str) -> None:
        self.add_node(a)
        self.add_node(b)
        self.succ[a].append(b)
        self.pred[b].append(a)

    def topsort(self) -> list[str] | None:
        """Penrose's stable sort: reverse of a stack-driven reverse topological order; None on a cycle."""
        out_degree = {n: len(s) for n, s in self.succ.items()}
        stack = [n for n, s in self.succ.items() if not s]
        order: list[str] = []
        while stack:
            n = stack.pop()
            order.append(n)
            for p in self.pred[n]:
                out_degree[p] -= 1
                if out_degree[p] == 0:
                    stack.append(p)
        if len(order) != len(self.succ):
            return None
        return order[::-1]

    def approximate_order(self) -> list[str]:
        """For a cyclic graph: repeatedly take the node with the fewest remaining in-edges."""
        in_degree = {n: len(p) for n, p in self.pred.items()}
        position = {n: i for i, n in enumerate(self.succ)}
        left = dict.fromkeys(self.succ)
        order = []
        while left:
            n = min(left, key=lambda m: (in_degree[m], position[m]))
            del left[n]
            order.append(n)
            for s in self.succ[n]:
                in_degree[s] -= 1
        return order


def group_parents(shapes: list[ShapeInstance]) -> dict[str, list[str]]:
    """Shape name -> names of the groups listing it (a clip shape belongs to its group)."""
    parents: dict[str, list[str]] = {}
    for s in shapes:
        if s.kind != "Group":
            continue
        members = [m.name for m in s.props.get("shapes", [])]
        clip = s.props.get("clipPath")
        if isinstance(clip, ShapeInstance) and clip.name not in members:
            members.append(clip.name)
        for m in members:
            parents.setdefault(m, []).append(s.name)
    return parents


def _path_from_root(parents: dict[str, list[str]], name: str) -> list[str]:
    path = [name]
    seen = {name}
    while parents.get(path[-1]):
        up = parents[path[-1]][0]
        if up in seen:  # a group cycle (warned about separately)
            break
        seen.add(up)
        path.append(up)
    return path[::-1]


def layer_order(
    names: list[str], layers: list[tuple[str, str]], parents: dict[str, list[str]]
) -> tuple[list[str], bool]:
    """All shape names in drawing order, and whether the layering statements were cyclic."""
    graph = Graph()
    for n in names:
        graph.add_node(n)
    for below, above in layers:
        below_path = _path_from_root(parents, below)
        above_path = _path_from_root(parents, above)
        i = 0
        while i < min(len(below_path), len(above_path)) and below_path[i] == above_path[i]:
            i += 1
        if i == min(len(below_path), len(above_path)):
            i -= 1  # one contains the other: the edge is a loop, as in Penrose
        graph.add_edge(below_path[i], above_path[i])
    order = graph.topsort()
    if order is None:
        return graph.approximate_order(), True
    return order, False


def group_warnings(shapes: list[ShapeInstance], parents: dict[str, list[str]]) -> list[tuple[str, str]]:
    """(kind, message) for shapes in several groups and for groups containing themselves."""
    out = [
        ("ShapeBelongsToMultipleGroups", f"shape {name} belongs to several groups: {', '.join(groups)}")
        for name, groups in parents.items()
        if len(groups) > 1
    ]
    for s in shapes:
        if s.kind == "Group":
            seen, todo = set(), [s.name]
            while todo:
                n = todo.pop()
                for p in parents.get(n, []):
                    if p == s.name:
                        out.append(("GroupCycleWarning", f"group {s.name} contains itself"))
                        todo = []
                        break
                    if p not in seen:
                        seen.add(p)
                        todo.append(p)
    return out


def arrange(
    shapes: list[ShapeInstance], order: list[str], parents: dict[str, list[str]]
) -> list[ShapeInstance]:
    """Top-level shapes in drawing order; each group's `shapes` re-sorted into drawing order."""
    rank = {n: i for i, n in enumerate(order)}
    for s in shapes:
        if s.kind == "Group" and s.props.get("shapes"):
            s.props["shapes"] = sorted(s.props["shapes"], key=lambda m: rank.get(m.name, len(rank)))
    by_name = {s.name: s for s in shapes}
    roots = [n for n in order if not parents.get(n)]
    if not roots:  # everything is in a group cycle: Penrose draws all nodes
        roots = list(order)
    return [by_name[n] for n in roots if n in by_name]
