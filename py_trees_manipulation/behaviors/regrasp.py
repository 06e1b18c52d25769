"""Graph-planned regrasps: plan a sequence of grasp changes, carry it out, check the grasp state.

Behaviours: ``PlanRegrasp`` (HPP constraint-graph search from the current grasp state to a goal; in
the simulator every transition of a candidate plan is checked by IK and collisions and the plan
chooses placements and grasps: :func:`plan_in_world`), ``ExecuteRegraspPlan`` (expands each step, at
run time, into a Sequence of the motion behaviours: approach, grasp, lift, place on a contact surface,
release, retreat; re-plans from the sensed state when a step fails) and the condition ``GraspStateIs``.

The regrasp description (:class:`RegraspConfig`) maps HPP names onto the scene. It is a **task
value on the blackboard** (key ``regrasp`` by default), not a ``scene:`` section: handles, placements
and rules are task knowledge that holds the same on the simulator, the fake backend and hardware,
and the planner behaviours are not sim-only. Format (poses: ``{position, orientation (w, x, y, z)
| rpy_deg}``, metres)::

    blackboard:
      regrasp:
        grippers:                      # HPP gripper name -> robot (arm and gripper resources)
          panda/hand: panda            #   or {arm: panda, gripper: panda}
        objects:
          box:
            handles:                   # HPP handle name -> TCP pose in the object frame
              box/top:  {pose: {position: [0, 0, 0.04], rpy_deg: [180, 0, 0]}, approach_m: 0.10}
              box/side: {pose: {position: [0, 0, 0.02], rpy_deg: [0, 90, 0]}}
            contacts:                  # object contact surface -> object poses (world) resting on it
              box/bottom: [{position: [0.5, 0.0, 0.686]}]
            handover_pose: {position: [0.6, 0, 0.9]}   # optional: where the holder presents it
          mug: {}                      # no handles: every handle of its grasp set (geometry/grasps.py)
          can: {handles: [can/side]}   # a list: these handles of its grasp set
        environment_contacts: [table/top]   # the top of body "table"
        placements: {grid_spacing_m: 0.10, yaws_deg: [0, 90, 180, 270], max_points: 20, spot: true}   # or false
        rules:                         # optional, HPP semantics (first match wins, full regex)
          - {grippers: [".*"], handles: [".*"], link: true}

Per-handle keys: ``pose`` (required), ``approach_m`` (stand-off along the TCP z axis before the
straight approach, default 0.10 m), ``open_m`` (finger gap for the approach, metres, or ``open``:
the gripper's full opening, the default), ``max_effort_n`` (grip force, default 40 N), ``width_m``
(the object's extent between the fingers; default from a primitive's size). A declared handle has
two grasps (its pose and the pose turned half a turn about the approach axis), a handle of the grasp
set its symmetric grasps (a box face: four yaws). Top-level optional keys: ``lift_m`` (0.10 m, lift
after a grasp from a surface and the height of the pre-place pose), ``retreat_m`` (0.10 m, back-off
along the TCP z axis after a release), ``place_force_n`` (8 N, force guard when lowering onto the
surface), ``placements`` (:class:`~py_trees_manipulation.planning.geometric_model.PlacementSettings`:
placement poses generated besides the description's: a grid on every environment contact surface
within the robots' reach, and the spot where a free object stands, on its other faces).

Grasp state: a mapping ``{gripper: handle or None}``. ``sense: auto`` derives it from the
simulator's contacts (:func:`sense_grasps`: opposing finger contacts, the object lifted off its
support, the TCP on a handle's region) and otherwise reads the blackboard key ``state_key``
(``grasp_state``), which ``ExecuteRegraspPlan`` updates after every completed step. Summary metrics
go to the blackboard namespace ``/metrics`` (merged into the run summary by the runner):
``plan_time_ms`` (sum over plans and re-plans), ``grasp_changes`` (executed steps), ``goal_reached``
and, with geometry, ``geometric_checks``, ``pruned_transitions``, ``ik_time_ms``,
``collision_time_ms``.

Sources: HPP ``ConstraintGraphFactory`` (names, waypoint transitions: pregrasp / intersec /
preplace), Lamiraux & Mirabel, IEEE T-RO 2021; MoveIt Task Constructor's pick/place stage order
(approach, close, lift / lower, open, retreat).

The code lives in modules by concept: :mod:`~.regrasp_config` (the description, grasp-state names),
:mod:`~.grasp_state` (sensing the grasp state, the behaviours' base, ``GraspStateIs``),
:mod:`~.regrasp_plan` (``PlanRegrasp``, planning with geometry), :mod:`~.regrasp_execute`
(``ExecuteRegraspPlan``: expansion into motions, recovery by re-planning); this module gathers
their names (and is the one the behaviour registry imports).
"""

from __future__ import annotations

from .grasp_state import (METRICS_NS, GraspStateIs, SensedGrasp, sense_grasp_state, sense_grasps,  # noqa: F401
                          sense_grasps_from_poses)
from .regrasp_config import HandleSpec, ObjectRegraspSpec, RegraspConfig
from .regrasp_execute import ExecuteRegraspPlan
from .regrasp_plan import PlanRegrasp, geometry_host, placement_goal_of, plan_in_world, plan_with_geometry  # noqa: F401

__all__ = ["RegraspConfig", "HandleSpec", "ObjectRegraspSpec", "PlanRegrasp", "ExecuteRegraspPlan",
           "GraspStateIs", "sense_grasp_state", "METRICS_NS"]
