"""The metrics a run reports (``summary["metrics"]``), declared once: what each measures, its unit
and its source. The metrics table of ``docs/task_file.md`` is generated from :data:`RUN_METRICS`
(``ptm docs --update docs/task_file.md``), and a scenario's ``expect:`` is checked against it when the
scenario is collected (a misspelt metric is an error at its line, with the closest name).

A metric appears in a run when its source is in the run: the target object's when the scene has one,
a family's when its section or behaviour is used. The backends and behaviours produce them (their
``metrics()`` and the ``/metrics/<name>`` blackboard keys); a test reads that code and fails on a
metric without a declaration here. A plugin behaviour that reports its own metrics names them in its
class attribute ``METRICS`` (a tuple of names), which scenario checks accept for trees that use it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable


@dataclass(frozen=True)
class MetricDoc:
    """One row of the metrics table: the metric's name(s), what it measures, its unit, its source."""

    names: tuple[str, ...]
    what: str
    unit: str
    source: str


#: every metric the package reports, in the order of the documentation
RUN_METRICS: tuple[MetricDoc, ...] = (
    MetricDoc(('sim_time_s',),
              'backend time at the end',
              's', 'simulator'),
    MetricDoc(('target_object',),
              'the object the object metrics are about',
              'name', 'simulator (`scene.task`)'),
    MetricDoc(('object_lift_m',),
              "final height of the target's base frame minus its height after the scene settled (world z)",
              'm', 'simulator'),
    MetricDoc(('object_max_lift_m',),
              'largest such lift during the run, sampled at 100 Hz',
              'm', 'simulator'),
    MetricDoc(('max_carried_kg',),
              "largest load any hand held up: the vertical force its wrist force-torque joint reads (its own "
              "weight taken off), averaged over 0.5 s, over g; past the arm's rated payload minus its gripper "
              "(+20 %, at least 0.1 kg) a run whose tree succeeds fails (sim/payload.py); while another hand holds "
              "the same object (a handover), what the wrist reads beyond an object the arm may lift is the hands "
              "pulling against each other: up to 10 N (libfranka's default collision threshold) it is said in the "
              "events, not an overload; beyond, the failure says so (lightening the object does not help)",
              'kg', 'simulator, robots with a rated payload'),
    MetricDoc(('object_dropped',),
              'the target **fell**: it left every robot without being set down and came down more '
              'than 2 cm touching nothing, or came down 0.4 m/s faster than the finger touching it '
              '(slipped out), or is still falling at the end (`sim/outcome.py`). A place on any '
              'support at any height (a second, lower table) is not a drop',
              'true/false', 'simulator'),
    MetricDoc(('object_slid_in_hand_m', 'object_slid_in_hand'),
              "largest distance the target's centre moved in the gripping robot's TCP frame since its grip "
              'began (two or more of its links touching it; a release and a regrasp start again), sampled at '
              '100 Hz; a run whose tree succeeds while it is over 1.5 cm fails (the object slid down the pads, '
              'whatever the tree checked); how much, where and when (`sim/outcome.py`)',
              'm, text', 'simulator'),
    MetricDoc(('object_tilt_deg',),
              "angle between the target's z axis after settling and at the end (a box knocked over reads about 90)",
              'deg', 'simulator'),
    MetricDoc(('place_error_m',),
              "distance of the target's final base position to `task.place_position` (world)",
              'm', 'simulator, with `task.place_position`'),
    MetricDoc(('placed_on',),
              'what carries the target at the end: the non-robot body touching it below its centre '
              'with the largest normal force; `nothing`; or `held by ROBOT`. A run whose tree '
              'succeeds while this is not the support under `task.place_position` fails',
              'body name', 'simulator, with `task.place_position`'),
    MetricDoc(('object_at_rest',),
              'the target moves slower than 0.01 m/s and 0.1 rad/s at the end; a place task whose '
              'tree succeeds while it is not at rest fails',
              'true/false', 'simulator, with `task.place_position`'),
    MetricDoc(('planning_time_s',),
              'wall-clock time spent checking and planning arm motions, summed over the run (sim time'
              ' stands still meanwhile)',
              's (wall)', 'motion planning (simulator and hardware client)'),
    MetricDoc(('planned_motions',),
              'arm motions checked or planned',
              'count', 'motion planning'),
    MetricDoc(('motions_from_check',),
              'arm motions that followed the plan the check before the run made for them (the same IK '
              'solution, path and timing: docs/reachability.md)',
              'count', 'a run with `--plan-first` (the default)'),
    MetricDoc(('motions_replanned',),
              'arm motions whose kept plan no longer fitted (start, goal, held object or mechanism moved) '
              'and that were planned again as they started; each says why in its feedback',
              'count', 'a run with `--plan-first` (the default)'),
    MetricDoc(('planning_saved_s',),
              'planning time the followed plans saved the run, less the time spent looking them up',
              's (wall)', 'a run with `--plan-first` (the default)'),
    MetricDoc(('min_clearance_m',),
              "smallest distance between the moving robot's links (or its held object) and any other "
              'body, measured every 10 ms of every executed motion, the contacts each motion allows '
              'excluded; capped at 0.25',
              'm', 'motion planning (simulator)'),
    MetricDoc(('chosen_grasp',),
              'the grasp `ChooseGrasp` chose, by name (`mug/top/30`)',
              'name', '`ChooseGrasp`'),
    MetricDoc(('max_fingertip_force_n',),
              "largest normal force one finger put on a movable object or a mechanism's handle (a door, a "
              'drawer), sampled every 5 ms '
              '(`tactile.sample_period_s`)',
              'N', 'tactile emulation'),
    MetricDoc(('max_grip_effort_n',),
              "largest squeeze force the finger actuators applied (at most the gripper's force limit)",
              'N', 'tactile emulation'),
    MetricDoc(('crushed', 'crushed_objects'),
              'a fragile object (`crush_force_n`) was crushed: a finger pressed it harder than that '
              'for 50 ms; which ones',
              'true/false, names', 'tactile emulation'),
    MetricDoc(('slip_events',),
              'ground-truth slip episodes: a gripped object sliding faster than 5 mm/s '
              '(`slip_event_speed_mps`) at the pads',
              'count', 'tactile emulation'),
    MetricDoc(('slip_events_detected',),
              'slip episodes during which the PR2 controller flagged slip',
              'count', 'tactile emulation'),
    MetricDoc(('slip_events_missed',),
              'slip episodes while the controller listened (SlipServo, a slip-triggered event armed) '
              'that it did not flag',
              'count', 'tactile emulation'),
    MetricDoc(('slip_detections',),
              "onsets of the controller's slip flag",
              'count', 'tactile emulation'),
    MetricDoc(('slips_at_force_limit',),
              'slips the slip servo felt with its set-point at `fingertip_force_limit` (it may not squeeze harder)',
              'count', 'tactile emulation'),
    MetricDoc(('sensor_losses',),
              'fingertip sensor losses the controllers acted on',
              'count', 'tactile emulation'),
    MetricDoc(('place_impact_n',),
              'peak normal force between the target and any non-robot body after the gripper lifted '
              'it, over single 1 ms physics steps (the static weight of a set-down object included; a '
              'force-guarded place reads a little over its `max_force_n`)',
              'N', 'tactile emulation, with a target'),
    MetricDoc(('release_delay_s',),
              "from the target's touch-down (its first contact with a non-robot body after the lift) "
              'to the first `Release` that fires after it',
              's', 'tactile emulation, with a target and a `Release`'),
    MetricDoc(('pad_force_imbalance_n',),
              'largest left-right difference of the pad forces on the target while it is held free '
              '(lifted, both pads on it, nothing but its gripper\'s robot touching it), averaged over '
              'one frame period',
              'N', 'tactile emulation, with a target'),
    MetricDoc(('grip_needed_n',),
              'the static grip per pad that holds the target by friction, `m g / (2 mu)` (`mu`: the '
              "target's times the pads' lateral friction)",
              'N', 'tactile emulation, with a target'),
    MetricDoc(('grip_force_limit_n',),
              "the first gripper's force limit (the controller's `fingertip_force_limit`, else the "
              "actuator's, or a lower `GripperCommand` `max_effort`)",
              'N', 'tactile emulation, with a target'),
    MetricDoc(('grip_margin',),
              "`grip_force_limit_n / grip_needed_n` (below about 1.3 the lift's acceleration is not held)",
              'ratio', 'tactile emulation, with a target'),
    MetricDoc(('grasp_fix_attaches', 'grasp_fix_detaches'),
              'GraspFix welds made and released',
              'count', '`grasp_fix:`'),
    MetricDoc(('door_angle_deg',),
              "the first door's hinge angle (0 closed)",
              'deg', '`doors:`'),
    MetricDoc(('handle_angle_deg',),
              "the first door's lever angle",
              'deg', '`doors:`'),
    MetricDoc(('drawer_opening_m',),
              "how far the first cabinet's drawer is pulled out",
              'm', '`cabinets:`'),
    MetricDoc(('doors', 'drawers'),
              'those angles and openings by name, when there are several',
              'deg, m', '`doors:`, `cabinets:`'),
    MetricDoc(('max_wrist_force_n',),
              'largest wrist force of any screw motion (`MoveAlongArc`, `TwistHandle`), averaged over'
              ' 50 ms: the hand-joint reaction in the world frame plus the weight of the hand',
              'N', '`doors:`, `cabinets:`'),
    MetricDoc(('plan_time_ms',),
              'wall-clock time `PlanRegrasp` and the re-plans of `ExecuteRegraspPlan` spent planning, summed',
              'ms (wall)', 'regrasp'),
    MetricDoc(('planned_grasp_changes',),
              'grasp changes in the last plan',
              'count', 'regrasp'),
    MetricDoc(('geometric_checks',),
              'transitions checked by IK and collisions, summed',
              'count', 'regrasp'),
    MetricDoc(('pruned_transitions',),
              'transitions the checks refused, summed',
              'count', 'regrasp'),
    MetricDoc(('ik_time_ms', 'collision_time_ms'),
              'wall-clock time of those checks in IK and in collision checking, summed',
              'ms (wall)', 'regrasp'),
    MetricDoc(('grasp_changes',),
              'grasp changes executed',
              'count', 'regrasp'),
    MetricDoc(('release_shift_m',),
              'the largest distance a placed object moved from where it was set down while the fingers '
              'opened and the hand retreated (simulator); over 0.01 m, or the object still touching the '
              'gripper after the retreat, fails the step (issue 33 item 4)',
              'm', 'regrasp'),
    MetricDoc(('goal_reached',),
              'the executed plan reached its goal grasp state',
              'true/false', 'regrasp'),
    MetricDoc(('replans',),
              're-plans after a failed step',
              'count', 'regrasp'),
    MetricDoc(('rosbridge_url',),
              "the robot's rosbridge address",
              'URL', 'hardware backend'),
    MetricDoc(('wall_time_s',),
              "the hardware backend's clock at the end",
              's', 'hardware backend'),
    MetricDoc(('metrics_error',),
              "why the robot's own metrics service did not answer (its JSON object's keys are added as they come)",
              'text', 'hardware backend'),
    MetricDoc(('error',),
              "why the backend's metrics failed (the run's status stands)",
              'text', 'any backend'),
)


#: metrics that are wall-clock times (unit "s (wall)" or "ms (wall)"): the same run gives another
#: figure each time, so comparisons of two runs' metrics (determinism tests, the example metrics
#: benchmark) leave them out
WALL_CLOCK_METRICS: frozenset[str] = frozenset(n for m in RUN_METRICS if "(wall)" in m.unit for n in m.names)


def metric_names(behaviour_classes: Iterable[Any] = ()) -> frozenset[str]:
    """Every metric name of :data:`RUN_METRICS`, plus the ``METRICS`` the given behaviour classes
    (a tree's, from the registry) declare."""
    names = {n for m in RUN_METRICS for n in m.names}
    for cls in behaviour_classes:
        names.update(str(n) for n in (getattr(cls, "METRICS", ()) or ()))
    return frozenset(names)


def metrics_markdown() -> str:
    """The metrics table (Markdown) of ``docs/task_file.md``."""
    lines = ["| metric | what it measures | unit | source |", "|---|---|---|---|"]
    for m in RUN_METRICS:
        lines.append(f"| {', '.join(f'`{n}`' for n in m.names)} | {m.what} | {m.unit} | {m.source} |")
    return "\n".join(lines) + "\n"
