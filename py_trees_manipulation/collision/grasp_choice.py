"""Grasp choice: which grasp of an object's grasp set the arm can use from where it is now.

:func:`choose_grasp` takes the object's grasps in its own frame (HPP handles,
:func:`~py_trees_manipulation.geometry.grasps.grasps_for_object`), puts them at the object's pose
and evaluates each in a :class:`~.world.CollisionWorld`, cheapest test first:

1. **approach**: the approach direction (TCP z) is within ``max_approach_angle_deg`` of straight
   down (a top-down pick subtree asks for 45 degrees; 180 accepts every direction);
2. **width**: the object's width between the fingers at this grasp plus ``width_margin_m`` fits the
   gripper's opening (the robot description's ``gripper.opening_m``);
3. **pregrasp**: a collision-free IK solution at the pregrasp (the grasp backed off ``approach_m``
   along its approach), from the current configuration first, then the named configurations
   (what ``MoveToPose`` tries first), every pair at the padding;
4. **grasp**: IK at the grasp from the pregrasp solution, collision-free with the fingers fully
   open: the hand may come closer to the grasped object than the padding but not penetrate it
   (``contact_tolerance_m``). A finger that would land on the mug's handle penetrates it: rejected.
   (Allowing the hand to touch the object anywhere, as a descent onto a grasp does at run time,
   would accept exactly that grasp.)
5. **place** (optional ``place_poses``): with the object held as grasped (TCP = place @ grasp),
   collision-free IK above each place pose and at it (the held object may touch what it is put on),
   and (for the candidates the approach line is checked for, step 7) the retreat straight back up
   from it, the object left there, followed as MoveCartesian will follow it (its own line IK from
   the place configuration, each waypoint collision-checked);
6. **ranking**: by joint distance (radians, Euclidean) from the current configuration to the
   pregrasp, plus the descent, plus (with a place) the carry to above the place;
7. **approach line**, best first: the straight TCP line from pregrasp to grasp, IK every centimetre
   from the pregrasp solution (no joint jumps over 0.5 rad) and checked in joint space at the
   world's resolution with the grasp's contact rule. The first candidate whose line is clear is
   chosen; the ones ranked after it are not line-checked.

The result (:class:`GraspChoice`) keeps every candidate with why it was rejected, and
:meth:`GraspChoice.summary` groups them: ``"12 candidates: 4 too wide for the 80 mm opening (+5 mm
margin), 6 out of reach (best 0.03 m), 2 collide at the grasp: panda_leftfinger with table"``.

The world is left as found: the object's pose, the robot's joints and what it holds are restored.

Sources: HPP's handles and grasp/pregrasp constraints (Mirabel et al., "HPP: a new software
constraint-based framework for manipulation planning", 2016); MoveIt Task Constructor's
GenerateGraspPose + ComputeIK + approach stages, whose failures also say why each solution was dropped.
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

import numpy as np

from ..geometry.grasps import Grasp, translate_z
from ..geometry.poses import Pose, check_pose, invert
from ..motion.paths import first_invalid
from .ik import solve_ik
from .contacts import AllowedContacts, Proximity
from .world import CollisionWorld

__all__ = ["GraspCandidate", "GraspChoice", "choose_grasp", "grasp_at", "REJECTIONS"]

#: the speed the retreat from a place is checked at (examples/pick_and_place.yaml's retreat), m/s
RETREAT_SPEED_MPS = 0.1
#: rejection categories, in the order the summary lists them
REJECTIONS = ("approach", "width", "unreachable", "pregrasp_collision", "grasp_collision", "closing", "place",
              "approach_line", "lift")
#: a finger closed on the object may reach this far into another body, m (the collision world reads a
#: mesh hull's 1 mm margin as surface, as the simulator's contacts do: a fingertip on the table reads 0)
CLOSING_TOLERANCE_M = 0.0005
#: gaps checked along the fingers' closing stroke, open to the object's width, ends included
CLOSING_SAMPLES = 6
POSITION_TOLERANCE_M = 0.01        # as MoveToPose's default
ORIENTATION_TOLERANCE_RAD = 0.1
LINE_STEP_M = 0.01
MAX_JOINT_JUMP_RAD = 0.5



def _reject_unreached(c: GraspCandidate, stage: str, out_of_reach: str, hit: Optional[Proximity], miss: Any,
                      tolerance: Any, opening: float) -> None:
    """Reject ``c`` at ``stage`` (``"pregrasp"``, ``"grasp"``): in collision there (``hit``: the pair,
    its distance and padding kept on ``c``), else out of reach (``out_of_reach``, with the best IK
    solution's error ``miss``)."""
    if hit is not None:
        c.reject(f"{stage}_collision", f"collides at the {stage}: {_pair(hit)}{_hit_text(hit, opening)}", _pair(hit))
        c.hit_distance_m, c.hit_threshold_m = hit.distance_m, hit.threshold_m
    else:
        c.reject("unreachable", f"{out_of_reach} (best IK solution {_miss_text(miss, tolerance)})",
                 _miss_detail(miss, tolerance))

def _pair(p: Optional[Proximity]) -> str:
    """``"panda_leftfinger with table"`` (``"the held mug with shelf"``, a link of the other body named)."""
    if p is None:
        return "a collision"
    who = f"the held {p.link}" if p.held else p.link
    other = p.body_link if p.self_collision else p.body
    if not p.self_collision and p.body_link not in ("base", p.body):
        other = f"{p.body} ({p.body_link})"
    return f"{who} with {other}" + (" (self-collision)" if p.self_collision else "")


def _hit_text(p: Proximity, opening_m: float) -> str:
    """`` (2.1 mm inside it, padding 10 mm; fingers open to 80 mm)``: what decides the refusal."""
    d, thr = p.distance_m, p.threshold_m
    where = f"{-d * 1000:.1f} mm inside it" if d < 0 else f"{d * 1000:.1f} mm away"
    limit = f"padding {thr * 1000:.0f} mm" if thr > 0 else "contact allowed, no penetration"
    return f" ({where}, {limit}; fingers open to {opening_m * 1000:.0f} mm)"


@dataclass
class GraspCandidate:
    """One grasp of the set, evaluated at the object's pose.

    Attributes:
        grasp: the grasp (object frame).
        grasp_pose, pregrasp_pose: (4, 4) TCP poses, world frame.
        approach_angle_deg: angle between the approach direction and straight down, degrees.
        rejection: the category (one of :data:`REJECTIONS`) it was rejected for, "" when feasible.
        reason: why, in words ("" when feasible).
        detail: the figure or pair behind the reason (``unreachable``: the best IK solution's
            (position error m, orientation error deg); ``"panda_hand with table"``).
        q_pregrasp, q_grasp: IK solutions (radians) when found.
        joint_distance_rad: the ranking cost, radians (nan until ranked).
        line_checked: the approach line was checked (and was clear, when not rejected).
        place_retreats: ``(place pose, configuration there, retreat target, where)`` per place pose,
            the retreat lines the chosen candidate is checked along.
    """

    grasp: Grasp
    grasp_pose: Pose
    pregrasp_pose: Pose
    approach_angle_deg: float
    rejection: str = ""
    reason: str = ""
    detail: Any = None
    q_pregrasp: Optional[np.ndarray] = None
    q_grasp: Optional[np.ndarray] = None
    joint_distance_rad: float = float("nan")
    line_checked: bool = False
    place_retreats: list = field(default_factory=list)
    #: a collision rejection's worst pair: its distance (negative: penetration) and the threshold it
    #: broke (the padding, or 0 for the object being grasped), metres
    hit_distance_m: Optional[float] = None
    hit_threshold_m: Optional[float] = None

    @property
    def feasible(self) -> bool:
        return not self.rejection

    def reject(self, category: str, reason: str, detail: Any = None) -> "GraspCandidate":
        self.rejection, self.reason, self.detail = category, reason, detail
        return self

    def describe(self) -> str:
        """``"mug/top/30: chosen, joint distance 0.84 rad"`` or ``"mug/top/90: collides at the grasp: ..."``."""
        if self.feasible:
            line = "" if self.line_checked else " (approach line not checked)"
            return f"{self.grasp.name}: feasible, joint distance {self.joint_distance_rad:.2f} rad{line}"
        return f"{self.grasp.name}: {self.reason}"


@dataclass
class GraspChoice:
    """Result of :func:`choose_grasp`.

    Attributes:
        object: the object's name. robot: the robot's.
        candidates: every grasp evaluated: the chosen one first, the other feasible ones by cost, then
            the rejected ones in the grasp set's order.
        chosen: the chosen candidate, or None when none is feasible.
        opening_m: the gripper's opening, metres. width_margin_m: the margin asked for, metres.
        max_approach_angle_deg: the approach limit used, degrees.
        place_count: how many place poses the grasps had to reach too.
    """

    object: str
    robot: str
    candidates: list[GraspCandidate]
    chosen: Optional[GraspCandidate]
    opening_m: float
    width_margin_m: float
    max_approach_angle_deg: float
    place_count: int = 0

    @property
    def rejected(self) -> list[GraspCandidate]:
        return [c for c in self.candidates if not c.feasible]

    def _group_text(self, category: str, members: list[GraspCandidate]) -> str:
        n = len(members)
        one = n == 1
        if category == "approach":
            return (f"{n} approach{'es' if one else ''} more than {self.max_approach_angle_deg:g} deg from straight down "
                    f"(up to {max(c.approach_angle_deg for c in members):.0f} deg)")
        if category == "width":
            return (f"{n} too wide for the {self.opening_m * 1000:.0f} mm opening "
                    f"({min(c.grasp.width_m for c in members) * 1000:.0f} mm and more, "
                    f"+{self.width_margin_m * 1000:.0f} mm margin)")
        if category == "unreachable":
            pos, deg = min((c.detail for c in members), key=lambda m: (round(m[0], 3), m[1]))
            turn = f", {deg:.0f} deg off in orientation" if deg else ""   # reached in position only
            return f"{n} out of reach (best {pos:.2f} m{turn})"
        pairs = Counter(str(c.detail) for c in members)
        listed = "; ".join(f"{p}" + (f" (x{k})" if k > 1 and len(pairs) > 1 else "") for p, k in pairs.most_common(3))
        more = f"; {len(pairs) - 3} more" if len(pairs) > 3 else ""
        what = {"pregrasp_collision": f"collide{'s' if one else ''} at the pregrasp",
                "grasp_collision": f"collide{'s' if one else ''} at the grasp",
                "place": "cannot put it down at the place pose",
                "lift": f"cannot lift it{' so' if one else ''}",
                "closing": f"{'meets' if one else 'meet'} another body as the fingers close",
                "approach_line": f"ha{'s' if one else 've'} the approach line blocked"}
        return f"{n} {what.get(category, category)}: {listed}{more}" + self._hit_figures(category, members)

    def _hit_figures(self, category: str, members: list[GraspCandidate]) -> str:
        """What decides a collision refusal: the deepest pair's distance against its threshold (the
        padding, or 0 for the object grasped) and the finger opening the hand was checked with (the
        robot description's ``gripper.opening_m``)."""
        if category not in ("pregrasp_collision", "grasp_collision"):
            return ""
        hits = [c for c in members if c.hit_distance_m is not None]
        if not hits:
            return ""
        w = min(hits, key=lambda c: c.hit_distance_m)  # type: ignore[arg-type,return-value]
        d, thr = float(w.hit_distance_m), float(w.hit_threshold_m or 0.0)  # type: ignore[arg-type]
        where = f"{-d * 1000:.1f} mm inside it" if d < 0 else f"{d * 1000:.1f} mm away"
        limit = f"padding {thr * 1000:.0f} mm" if thr > 0 else "contact allowed, no penetration"
        return (f" ({where}, {limit}; fingers open to {self.opening_m * 1000:.0f} mm, the description's "
                "gripper.opening_m" + ("; the padding is scene.motion_planning.padding_m" if thr > 0 else "") + ")")

    def summary(self) -> str:
        """The candidates grouped by outcome, in one line (module docstring)."""
        n = len(self.candidates)
        parts = []
        by_cat: dict[str, list[GraspCandidate]] = {}
        for c in self.rejected:
            by_cat.setdefault(c.rejection, []).append(c)
        for cat in REJECTIONS:
            if cat in by_cat:
                parts.append(self._group_text(cat, by_cat[cat]))
        feasible = [c for c in self.candidates if c.feasible]
        head = f"{n} candidate{'s' if n != 1 else ''}"
        if self.chosen is not None:
            parts.insert(0, f"{len(feasible)} feasible")
        return head + (": " + ", ".join(parts) if parts else "")

    def details(self) -> list[str]:
        """One line per candidate (:meth:`GraspCandidate.describe`), chosen first."""
        return [c.describe() for c in self.candidates]

    def at(self, object_pose: Pose, approach_m: Optional[float] = None) -> "GraspChoice":
        """This choice with the object at ``object_pose`` ((4, 4), world; ``approach_m``: the
        pregrasp stand-off it was chosen with, metres, default each grasp's own): a copy whose
        candidates' grasp and pregrasp poses and approach angles are computed there as
        :func:`choose_grasp` computes them; which grasp is chosen, the rejections, the IK solutions
        and the ranking are this choice's. For the run that follows the check's choice
        (:meth:`~.kept_plans.KeptPlans.take_choice`), the object where the check saw it within
        :data:`~.kept_plans.OBJECT_TOLERANCE_M`."""
        T = check_pose(object_pose)
        out = copy.copy(self)
        out.candidates = []
        for c in self.candidates:
            moved = copy.copy(c)
            moved.grasp_pose, moved.pregrasp_pose, moved.approach_angle_deg = grasp_at(T, c.grasp, approach_m)
            out.candidates.append(moved)
            if c is self.chosen:
                out.chosen = moved
        return out

    def as_dict(self) -> dict[str, Any]:
        """Plain values for the run log: the chosen grasp, the summary and every candidate
        (``joint_distance_rad`` only where it was computed)."""
        def dist(c: Optional[GraspCandidate]) -> dict[str, float]:
            ok = c is not None and math.isfinite(c.joint_distance_rad)
            return {"joint_distance_rad": round(c.joint_distance_rad, 4)} if ok else {}  # type: ignore[union-attr]

        ch = self.chosen
        return {"object": self.object, "robot": self.robot, "chosen": ch.grasp.name if ch else "", **dist(ch),
                "summary": self.summary(),
                "candidates": [{"grasp": c.grasp.name, "feasible": c.feasible, "rejection": c.rejection,
                                "reason": c.reason, **dist(c)} for c in self.candidates]}


@dataclass
class _Context:
    world: CollisionWorld
    robot: str
    obj: str
    seeds: list
    free: Any = None           # MoveToPose's checker: every pair at the padding
    touch: Any = None          # the hand may come to the object, not into it
    tolerance: tuple = (POSITION_TOLERANCE_M, ORIENTATION_TOLERANCE_RAD)


def _within(sol: Any, tol: tuple) -> bool:
    return sol.position_error_m <= tol[0] and sol.orientation_error_rad <= tol[1]


def _miss_detail(miss: tuple[float, float], tolerance: tuple[float, float]) -> tuple[float, float]:
    """(position error m, orientation error deg) of an ``unreachable`` rejection; the orientation is
    kept (else 0) only for a pose reached in position but not in orientation (the hand cannot turn
    to it: a wrist joint at its limit), where it is the reason."""
    pos, deg = miss
    return (pos, deg) if pos <= tolerance[0] and math.radians(deg) > tolerance[1] else (pos, 0.0)


def _miss_text(miss: tuple[float, float], tolerance: tuple[float, float]) -> str:
    """``"0.034 m away"``, or ``"0.000 m away but 38 deg off in orientation"``."""
    pos, deg = _miss_detail(miss, tolerance)
    return f"{pos:.3f} m away" + (f" but {deg:.0f} deg off in orientation" if deg else "")


def _reach(ctx: _Context, T: Pose, seeds: Sequence[Sequence[float]], checker: Any) -> tuple[
        Optional[np.ndarray], tuple[float, float], Optional[Proximity]]:
    """The first collision-free IK solution within the tolerances over ``seeds`` (in order), or None;
    with the best miss seen (position error m, orientation error deg, of the solution nearest in
    position) and the first collision met."""
    r = ctx.world.robots[ctx.robot]
    best = (math.inf, 0.0)
    hit: Optional[Proximity] = None
    tried: list[np.ndarray] = []
    for seed in seeds:
        sol = solve_ik(r, T, [seed])
        miss = (sol.position_error_m, math.degrees(sol.orientation_error_rad))
        if (round(miss[0], 4), miss[1]) < (round(best[0], 4), best[1]):
            best = miss
        if not _within(sol, ctx.tolerance):
            continue
        if any(np.max(np.abs(sol.q - t)) < 1e-3 for t in tried):
            continue
        tried.append(sol.q)
        h = checker.explain(sol.q)
        if h is None:
            return sol.q, miss, None
        hit = hit or h
    return None, best, hit


def _line(ctx: _Context, c: GraspCandidate) -> Optional[tuple[str, str]]:
    """Check the straight TCP line from the pregrasp to the grasp: ``(why, what)`` when it fails
    (``what``: the colliding pair or the kind of failure), else None. On success ``c.q_grasp``
    becomes the line's last state."""
    r = ctx.world.robots[ctx.robot]
    a, b = c.pregrasp_pose, c.grasp_pose
    dist = float(np.linalg.norm(b[:3, 3] - a[:3, 3]))
    n = max(2, int(math.ceil(dist / LINE_STEP_M)))
    q = np.asarray(c.q_pregrasp, dtype=float)
    qs = [q]
    for i in range(1, n + 1):
        T = np.array(b, dtype=float)
        T[:3, 3] = a[:3, 3] + (b[:3, 3] - a[:3, 3]) * (i / n)
        sol = solve_ik(r, T, [q], iterations=3, local=True)
        if not _within(sol, ctx.tolerance):
            return f"it leaves the reachable space {dist * i / n:.3f} m along it", "out of reach"
        if float(np.max(np.abs(sol.q - q))) > MAX_JOINT_JUMP_RAD:
            return (f"it passes a joint limit or singularity {dist * i / n:.3f} m along it",
                    "a joint limit or singularity")
        q = sol.q
        qs.append(q)
    bad = first_invalid(np.array(qs), ctx.touch.is_valid, ctx.world.max_step_rad)
    if bad is not None:
        pair = _pair(ctx.touch.explain(bad.q))
        return f"{pair} at {100 * bad.fraction:.0f}% of it", pair
    c.q_grasp = qs[-1]
    return None


def _hand_touch(world: CollisionWorld, robot: str, obj: str, tolerance_m: float) -> AllowedContacts:
    """The hand's links may come to ``obj`` (any of its links) but not ``tolerance_m`` into it."""
    out = AllowedContacts()
    body = world.body_id(obj)
    links = world._links.get(body, [-1])
    for j in sorted(world.hand_links(robot)):
        for ol in links:
            out.relaxed[(("link", j), body, ol)] = -tolerance_m
    out.reasons.append(f"hand-{obj} (a grasp: the open fingers around it, at most {tolerance_m * 1000:.0f} mm into it)")
    return out


def _place(ctx: _Context, c: GraspCandidate, places: Sequence[Pose], approach_m: float) -> Optional[str]:
    """With the object held as grasped, reach above each place pose and down to it; the reason it
    fails or None. Adds the carry's joint distance to the cost."""
    w, robot = ctx.world, ctx.robot
    try:
        w.attach(robot, ctx.obj, invert(c.grasp.pose))
    except ValueError:  # a fixed object cannot be held: nothing to check
        return None
    try:
        carry = w.checker(robot)
        everything = AllowedContacts()
        held_side = ("held", -1)
        for body in w.names:
            everything.pairs.add((held_side, body, None))
        down = w.checker(robot, everything)
        q_prev = c.q_grasp
        for k, P in enumerate(places):
            T_place = np.asarray(P, dtype=float) @ c.grasp.pose
            T_above = T_place.copy()
            T_above[2, 3] += approach_m
            where = f"place pose {k}" if len(places) > 1 else "the place pose"
            q_above, miss, hit = _reach(ctx, T_above, [q_prev, *ctx.seeds], carry)
            if q_above is None:
                return (f"above {where}: " + (_pair(hit) if hit is not None
                                              else f"out of reach ({_miss_text(miss, ctx.tolerance)})"))
            q_down, miss, hit = _reach(ctx, T_place, [q_above], down)
            if q_down is None:
                return f"at {where}: " + (_pair(hit) if hit is not None
                                          else f"out of reach ({_miss_text(miss, ctx.tolerance)})")
            c.joint_distance_rad += float(np.linalg.norm(q_above - q_prev))
            c.place_retreats.append((np.asarray(P, dtype=float), q_down, T_above, where))
            q_prev = q_down
        return None
    finally:
        w.detach(robot)


def _closing(ctx: _Context, c: GraspCandidate) -> Optional[str]:
    """The hand at the grasp with its fingers closed to the object's width: a linkage's fingertips
    travel along the approach as they close (the xArm Gripper's about 10 mm over its stroke), so a
    grasp whose open fingers clear the table by the padding may close them onto it (a new user's
    trial: 'closed on no object: the fingers stalled at 49.8 mm against table'). Which hand link
    would reach more than :data:`CLOSING_TOLERANCE_M` into a body other than the object and how far,
    or None. A parallel gripper's fingers close level: this never finds what the grasp check did not."""
    import pybullet as pb

    w, robot = ctx.world, ctx.robot
    r = w.robots[robot]
    width = c.grasp.width_m if math.isfinite(c.grasp.width_m) else 0.0
    held = w.bodies.get(ctx.obj)
    closed, opened = max(width, r.closed_gap), float(r.model.max_gap_m)
    try:
        worst: Optional[tuple[float, int, str, float]] = None
        # the sweep from open to the object's width: a linkage's fingertips travel along an arc, the
        # deepest point of the stroke may lie between its ends
        for gap in np.linspace(opened, closed, CLOSING_SAMPLES) if opened > closed else [closed]:
            w.set_robot_state(robot, c.q_grasp, fingers=r.finger_targets(float(gap)))
            for name, other in w.bodies.items():
                if other in (r.body, held):
                    continue
                for link in w.hand_links(robot):
                    for p in pb.getClosestPoints(r.body, other, 0.0, linkIndexA=link, physicsClientId=w.client):
                        depth = -float(p[8])
                        if depth > CLOSING_TOLERANCE_M and (worst is None or depth > worst[0]):
                            worst = (depth, link, name, float(gap))
        if worst is None:
            return None
        depth, link, name, gap = worst
        return (f"{w.link_name(r.body, link)} would reach {depth * 1000:.1f} mm into {name!r} as the fingers close "
                f"(at {gap * 1000:.0f} mm of their way from {opened * 1000:.0f} to {closed * 1000:.0f} mm)")
    finally:
        w.set_robot_state(robot, c.q_grasp, fingers=r.finger_targets(float(r.model.max_gap_m)))


def _lift(ctx: _Context, c: GraspCandidate, lift_m: float) -> Optional[str]:
    """The straight lift ``lift_m`` up from the grasp with the object held, planned as the
    ``move_cartesian`` motion plans it (:meth:`~.arm_planner.ArmMotionPlanner.plan`: its lines, the
    object attached to the hand, contacts at the start allowed to stay); why it fails, or None."""
    from .arm_planner import ArmMotionPlanner, MotionPlanningError, MotionRequest

    w, robot = ctx.world, ctx.robot
    r = w.robots[robot]
    width = c.grasp.width_m if math.isfinite(c.grasp.width_m) else 0.0
    try:
        w.attach(robot, ctx.obj, invert(c.grasp.pose))
    except ValueError:  # a fixed object cannot be held: nothing to lift
        return None
    try:
        w.set_robot_state(robot, c.q_grasp, fingers=r.finger_targets(max(width, r.closed_gap)))
        target = c.grasp_pose.copy()
        target[2, 3] += float(lift_m)
        req = MotionRequest(robot=robot, kind="cartesian", start=c.q_grasp, target=target, speed_mps=0.1,
                            position_tolerance_m=ctx.tolerance[0])
        try:
            ArmMotionPlanner(w, robot, measure_clearance=False).plan(req)   # the verdict only
        except MotionPlanningError as e:
            return str(e)
        return None
    finally:
        w.detach(robot)
        w.set_robot_state(robot, c.q_grasp, fingers=r.finger_targets(float(r.model.max_gap_m)))


def _retreats(ctx: _Context, c: GraspCandidate, approach_m: float) -> Optional[str]:
    """The retreat straight up from each place pose, the object left there, as MoveCartesian will
    follow it (its own line IK from the place configuration); why one fails, or None."""
    w = ctx.world
    saved = w.object_pose(ctx.obj)
    try:
        for P, q_down, T_above, where in c.place_retreats:
            w.set_object_pose(ctx.obj, P)
            why = _executed_line(ctx, q_down, T_above, RETREAT_SPEED_MPS)
            if why is not None:
                return f"the retreat {approach_m:.2f} m up from {where}: {why}"
        return None
    finally:
        w.set_object_pose(ctx.obj, saved)


def _executed_line(ctx: _Context, q: np.ndarray, target: Pose, speed_mps: float) -> Optional[str]:
    """The MoveCartesian line from ``q`` to ``target`` (world) as the motion computes it
    (:meth:`~.arm_planner.ArmMotionPlanner.lines`: the first redundancy resolution that is clear),
    each waypoint collision-checked with every pair at the padding except the hand with the object
    just let go; why the first fails when none is clear, or None."""
    from .arm_planner import ArmMotionPlanner, MotionPlanningError, MotionRequest

    w, robot = ctx.world, ctx.robot
    planner = ArmMotionPlanner(w, robot)
    req = MotionRequest(robot=robot, kind="cartesian", start=q, target=target, speed_mps=speed_mps,
                        position_tolerance_m=ctx.tolerance[0])
    ck = w.checker(robot, _hand_touch(w, robot, ctx.obj, 0.0))
    first: Optional[str] = None
    for line in planner.lines(req, np.asarray(q, dtype=float), target):
        if isinstance(line, MotionPlanningError):
            first = first or str(line)
            continue
        qs, s_wp, _ = line
        for k in range(1, len(qs)):
            h = ck.explain(qs[k])
            if h is not None:
                first = first or f"{_pair(h)} at {100 * float(s_wp[k]):.0f}% of it"
                break
        else:
            return None
    return first


def grasp_at(object_pose: Pose, grasp: Grasp, approach_m: Optional[float] = None) -> tuple[Pose, Pose, float]:
    """Grasp ``grasp`` (object frame) with the object at ``object_pose`` ((4, 4), world):
    ``(grasp pose, pregrasp pose, approach angle)``: the TCP poses ((4, 4), world; the pregrasp backed
    off ``approach_m`` along the approach, default the grasp's own ``approach_m``, metres) and the angle
    between the approach and straight down, degrees."""
    G = object_pose @ grasp.pose
    P = translate_z(G, -(grasp.approach_m if approach_m is None else approach_m))
    ang = math.degrees(math.acos(float(np.clip(G[:3, 2] @ _DOWN, -1.0, 1.0))))
    return G, P, ang


_DOWN = np.array([0.0, 0.0, -1.0])


def choose_grasp(world: CollisionWorld, robot: str, obj: str, object_pose: Pose, grasps: Sequence[Grasp], *,
                 start: Optional[Sequence[float]] = None, seeds: Optional[Sequence[Sequence[float]]] = None,
                 width_margin_m: float = 0.005, max_approach_angle_deg: float = 180.0,
                 approach_m: Optional[float] = None, place_poses: Sequence[Pose] = (),
                 place_approach_m: float = 0.10, contact_tolerance_m: float = 0.001,
                 lift_m: Optional[float] = None,
                 cancelled: Optional[Callable[[], bool]] = None) -> GraspChoice:
    """Evaluate ``grasps`` of object ``obj`` at ``object_pose`` for ``robot`` and choose one (module docstring).

    Args:
        world: the collision world, synced to the current state (the robot's joints are ``start``).
        robot: the robot's name in it. obj: the object's body name in it.
        object_pose: (4, 4) object pose, world frame (the world's copy of the object is moved there
            for the checks, then put back).
        grasps: the object's grasps, object frame (:class:`~py_trees_manipulation.geometry.grasps.Grasp`).
        start: the arm's configuration now, radians (default: the world's).
        seeds: further IK seeds, radians (default: the model's named configurations, ``ready`` first).
        width_margin_m: clearance the open fingers need beyond the object's width, metres (>= 0).
        max_approach_angle_deg: largest angle between the approach and straight down, degrees.
        approach_m: pregrasp stand-off, metres (default: each grasp's ``approach_m``).
        place_poses: (4, 4) object poses, world frame, where it will be put down as grasped.
        place_approach_m: height above a place pose the carry arrives at, metres.
        contact_tolerance_m: how far the open hand may sink into the grasped object's collision
            shape at the grasp and on the approach, metres.
        lift_m: the straight lift after the grasp, metres (None: not checked): the chosen grasp's
            lift with the object held is planned as the ``move_cartesian`` motion plans it (its
            lines, the object attached, what it touches at the start allowed to stay).
        cancelled: returns True to stop (raises ValueError("cancelled")).

    Returns:
        The :class:`GraspChoice` (``chosen`` None when no grasp is feasible).

    Raises:
        KeyError: unknown robot or object. ValueError: an invalid pose or argument, or cancelled.
    """
    if robot not in world.robots:
        raise KeyError(f"no robot named {robot!r}; the collision world has {sorted(world.robots)}")
    world.body_id(obj)
    if width_margin_m < 0 or contact_tolerance_m < 0:
        raise ValueError("width_margin_m and contact_tolerance_m must be >= 0 m")
    T_obj = check_pose(object_pose)
    places = [check_pose(P) for P in place_poses]
    r = world.robots[robot]
    model = r.model
    opening = float(model.max_gap_m)
    q0 = np.asarray(r.joint_positions() if start is None else start, dtype=float)
    named = dict(getattr(model, "named_configurations", {}) or {})
    if seeds is None:
        seeds = [named["ready"]] if "ready" in named else []
        seeds += [v for k, v in sorted(named.items()) if k != "ready"]
    seeds = [np.asarray(s, dtype=float) for s in seeds]
    saved_obj = world.object_pose(obj)
    saved_fingers = r.finger_positions()
    held0, T_held0 = world.attached(robot), world.attached_transform(robot)
    stop = cancelled or (lambda: False)
    try:
        world.detach(robot)  # the checks are of the hand reaching for the object, empty
        world.set_object_pose(obj, T_obj)
        world.set_robot_state(robot, q0, fingers=r.finger_targets(opening))
        ctx = _Context(world, robot, obj, seeds)
        ctx.free = world.checker(robot)
        ctx.touch = world.checker(robot, _hand_touch(world, robot, obj, contact_tolerance_m))
        cands: list[GraspCandidate] = []
        for g in grasps:
            if stop():
                raise ValueError("cancelled")
            G, P, ang = grasp_at(T_obj, g, approach_m)
            c = GraspCandidate(g, G, P, ang)
            cands.append(c)
            if ang > max_approach_angle_deg + 1e-6:
                c.reject("approach", f"approaches {ang:.0f} deg from straight down (at most "
                                     f"{max_approach_angle_deg:g} deg)", ang)
                continue
            if math.isfinite(g.width_m) and g.width_m + width_margin_m > opening + 1e-9:
                c.reject("width", f"{g.width_m * 1000:.0f} mm wide (+{width_margin_m * 1000:.0f} mm margin): more "
                                  f"than the {opening * 1000:.0f} mm opening", g.width_m)
                continue
            q_pre, miss, hit = _reach(ctx, P, [q0, *seeds], ctx.free)
            if q_pre is None:
                _reject_unreached(c, "pregrasp", "pregrasp out of reach", hit, miss, ctx.tolerance, opening)
                continue
            c.q_pregrasp = q_pre
            q_g, miss, hit = _reach(ctx, G, [q_pre], ctx.touch)
            if q_g is None:
                _reject_unreached(c, "grasp", "grasp out of reach from the pregrasp", hit, miss, ctx.tolerance, opening)
                continue
            c.q_grasp = q_g
            c.joint_distance_rad = float(np.linalg.norm(q_pre - q0) + np.linalg.norm(q_g - q_pre))
            if places:
                why = _place(ctx, c, places, place_approach_m)
                world.set_object_pose(obj, T_obj)
                if why is not None:
                    c.reject("place", f"holding it so, cannot put it down: {why}", why)
                    continue
        feasible = sorted((c for c in cands if c.feasible), key=lambda c: c.joint_distance_rad)
        chosen: Optional[GraspCandidate] = None
        for c in feasible:
            if stop():
                raise ValueError("cancelled")
            failed = _line(ctx, c)
            c.line_checked = True
            if failed is not None:
                c.reject("approach_line", f"approach line blocked: {failed[0]}", failed[1])
                continue
            why = _closing(ctx, c)
            if why is not None:
                c.reject("closing", f"closing on it: {why}", why)
                continue
            why = _retreats(ctx, c, place_approach_m)
            if why is not None:
                c.reject("place", f"holding it so, cannot put it down: {why}", why)
                continue
            why = _lift(ctx, c, lift_m) if lift_m else None
            world.set_object_pose(obj, T_obj)
            if why is not None:
                c.reject("lift", f"holding it so, cannot lift it {lift_m:.2f} m: {why}", why)
                continue
            chosen = c
            break
        ranked = [c for c in feasible if c.feasible]
        rejected = [c for c in cands if not c.feasible]
        return GraspChoice(obj, robot, ranked + rejected, chosen, opening, width_margin_m, max_approach_angle_deg,
                           len(places))
    finally:
        world.detach(robot)
        world.set_object_pose(obj, saved_obj)
        world.set_robot_state(robot, q0, fingers=saved_fingers)
        if held0 is not None:
            world.attach(robot, held0, T_held0)
