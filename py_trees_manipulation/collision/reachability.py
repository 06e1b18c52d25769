"""Reachability before motion: can the robot reach every TCP pose a task needs, and where should it stand?

A task's **targets** (:class:`ReachTarget`) are what the arm must reach before anything moves: the
grasps of the object to pick (any one suffices), a door's lever along the whole opening arc, a
drawer's bar along its pull line. A target is one or more alternative **paths**; a path is a
sequence of :class:`ReachSample` (a TCP pose, the joint positions of the articulated bodies at that
moment, what the hand may touch there), reached in order and continuously, the way the task moves
through them:

- the first sample by inverse kinematics: from the solution the motion planner would take
  (seeded by the approach configuration, then ``ready``), or, when the task moves the arm to the
  posture the check found (``ReachTarget.any_posture``), from up to :data:`MAX_STARTS` distinct
  solutions of fixed seeds (named configurations, turned toward the target and as they are, seeded
  random ones);
- every later one from the previous solution (:func:`~.ik.solve_ik`, in steps of at most
  :data:`STEP_M` / :data:`STEP_RAD` of TCP motion, no joint jumping more than 0.5 rad), as the
  Cartesian and screw motions execute it;
- each solution collision-checked in the :class:`~.world.CollisionWorld` with the door or drawer
  set to the sample's joint positions (the hand may touch the handle it holds; while it holds it,
  the compliant arm may brush the world by :data:`HELD_PADDING_M`; free samples keep the planning
  padding; backing off a contact, every step keeps it or stays as far as it started, as the motion
  planner's lines do), and the robot's base clear of what swings.

:class:`ReachChecker` answers "is every target reachable from where the robot stands?" with a
:class:`TargetResult` per target; a failure names the sample and why, e.g.
``"the door handle at 40 deg of its 60 deg arc is out of reach: best IK 0.060 m away"``.

:func:`find_base` searches base poses on a :class:`MountingSurface` (the floor or a fixture's top)
from which every target is reachable: candidate positions on rings around the targets (0.2 m to the
arm's reach, every 0.05 m and 10 deg), facing the targets (and turned 30 and 60 deg, ranked lower),
ranked by where the targets fall in the arm's workspace (:class:`WristBounds`: the wrist point's
distance from the shoulder inside the arm's range and away from its ends; approaches pointing away
from the base), then checked in that order: the base and the starting arm clear of fixtures, doors,
cabinets and objects (the surface it stands on aside) and of a swinging leaf, a quick IK test of each
target's hardest poses, and the full check with margins (2 mm IK tolerance, no brushing, joints
0.05 rad from their limits, the probes a request adds beyond the motion), each path followed from
:data:`SEARCH_STARTS` distinct arm postures found from IK seeds and their mirror images
(:class:`ArmMirror`: a door hinged on the right is the mirror image of one hinged on the left). Of
the first few bases that pass, the best conditioned (:func:`_quality`: the held motion keeping the
joint axes apart, then :func:`_manipulability`) wins. When none passes, :func:`find_base_relaxing`
repeats the search with fewer margins (:data:`RELAX_STEPS`) and says so. Deterministic: fixed
candidate order, IK seeds from ``seed``. Sources: Zacharias et al., "Capturing robot workspace structure: representing
robot capabilities" (IROS 2007) and Vahrenkamp et al., "Robot placement based on reachability
inversion" (ICRA 2013) for ranking base poses by where the task's poses fall in the arm's workspace;
Yoshikawa, "Manipulability of robotic mechanisms" (IJRR 1985); the check itself is the motion
planner's IK and collision test.

Units: metres, radians (degrees in texts). Poses: (4, 4) homogeneous transforms, world frame.

The code lives in modules by concept: :mod:`~.reach_checker` (the check, path following),
:mod:`~.base_search` (where to stand), :mod:`~.arm_workspace` (arm mirror, wrist bounds),
:mod:`~.base_pose` (the base frame, base overlap), :mod:`~.reach_results` (results and messages);
this module gathers their names.
"""

from __future__ import annotations

from ..scene.reach_targets import ReachSample, ReachTarget
from .arm_workspace import ArmMirror, WristBounds, arm_mirror, wrist_bounds
from .base_pose import base_frame, base_overlap, base_pose_at, placed_base_pose, set_base_frame  # noqa: F401
from .base_search import AXIS_SEPARATION_MIN, RELAX_STEPS, _axis_separation, find_base, find_base_relaxing  # noqa: F401
from .reach_checker import (ORIENTATION_TOLERANCE_RAD, POSITION_TOLERANCE_M, ReachChecker, check_for_task,
                            search_checker)
from .reach_results import BasePlacement, MountingSurface, SampleResult, TargetResult

__all__ = ["ReachSample", "ReachTarget", "SampleResult", "TargetResult", "ReachChecker", "MountingSurface",
           "BasePlacement", "WristBounds", "find_base", "wrist_bounds", "base_pose_at", "base_frame", "set_base_frame",
           "base_overlap", "check_for_task", "search_checker", "find_base_relaxing", "RELAX_STEPS", "arm_mirror", "ArmMirror", "POSITION_TOLERANCE_M", "ORIENTATION_TOLERANCE_RAD"]
