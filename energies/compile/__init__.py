"""From a Diagram to a compiled optimization problem: goal kinds, the energy, and its gradient."""

from .kinds import GoalKind, group_goals
from .pieces import set_threads
from .problem import CompiledProblem, compile_problem

__all__ = ["CompiledProblem", "GoalKind", "compile_problem", "group_goals", "set_threads"]
