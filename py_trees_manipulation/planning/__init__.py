"""Pure planning: HPP-style constraint graph (grasp modes) and regrasp search.

Imports only the standard library (numpy/scipy not needed). ``to_networkx`` imports networkx
lazily when called.
"""

from .constraint_graph import (
    ConstraintGraphFactory,
    GraspIsAllowed,
    PossibleGrasps,
    Rule,
    Rules,
    State,
    SubEdge,
    Transition,
    WaypointState,
    expected_ordered_sequence_count,
    expected_state_count,
    expected_transition_count,
    expected_transition_pair_count,
    state_count_by_grasps,
)
from .regrasp import (
    NoPlanError,
    RegraspPlan,
    RegraspPlanner,
    RegraspStep,
    SearchStats,
)

__all__ = [
    "ConstraintGraphFactory",
    "GraspIsAllowed",
    "PossibleGrasps",
    "Rule",
    "Rules",
    "State",
    "SubEdge",
    "Transition",
    "WaypointState",
    "expected_ordered_sequence_count",
    "expected_state_count",
    "expected_transition_count",
    "expected_transition_pair_count",
    "state_count_by_grasps",
    "NoPlanError",
    "RegraspPlan",
    "RegraspPlanner",
    "RegraspStep",
    "SearchStats",
]
