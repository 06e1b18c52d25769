"""Pure planning: HPP-style constraint graph (grasp modes) and regrasp search.

The graph and the symbolic search import only the standard library; ``to_networkx`` imports
networkx lazily when called. :mod:`.geometric` (placements and grasps in the state, transitions
checked by a geometry callable) uses numpy and is imported on its own:
``from py_trees_manipulation.planning.geometric import GeometricRegraspPlanner``.
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
