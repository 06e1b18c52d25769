"""Where to stand: :func:`find_base` searches base poses on a :class:`~.reach_results.MountingSurface`
from which every target is reachable (ranked by where the targets fall in the arm's workspace,
checked by :func:`~.reach_checker.search_checker` with margins, the best conditioned of the first
few that pass), and :func:`find_base_relaxing` repeats it with fewer margins when none passes.
Overview and sources: :mod:`~.reachability`.

Units: metres, radians (degrees in texts). Poses: (4, 4) homogeneous transforms, world frame.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable, Optional, Sequence

import numpy as np
import pybullet as pb

from ..geometry.poses import Pose
from ..scene.reach_targets import ReachTarget
from .arm_workspace import WristBounds, wrist_bounds
from .base_pose import base_overlap, base_pose_at, placed_base_pose, set_base_frame
from .reach_checker import (HELD_PADDING_M, POSITION_TOLERANCE_M, SEARCH_HELD_PADDING_M, SEARCH_JOINT_MARGIN_RAD,
                            SEARCH_TOLERANCE_M, ReachChecker, search_checker)
from .reach_results import BasePlacement, MountingSurface, TargetResult
from .work import SearchBudget, work_units
from .world import CollisionWorld

__all__ = ["find_base", "find_base_relaxing", "RELAX_STEPS", "SearchBudget"]

#: what a base search gives up, step by step, when no base passes with its margins
#: (:func:`find_base_relaxing`): ``(what is relaxed, IK position tolerance m, held padding m, joint
#: margin rad, probe beyond the task's motion, candidates checked at most)``; the last step is the
#: check's own tolerances
RELAX_STEPS = (
    ("", SEARCH_TOLERANCE_M, SEARCH_HELD_PADDING_M, SEARCH_JOINT_MARGIN_RAD, True, 120),
    ("reduced margins (no probe beyond the task's motion, 3.5 mm IK tolerance, joints 0.02 rad from "
     "their limits, the held arm may brush the world by 2.5 mm)", 0.0035, -0.0025, 0.02, False, 60),
    ("no margins (the check's own 5 mm IK tolerance, no joint margin, the held arm may brush the world "
     "by 5 mm)", POSITION_TOLERANCE_M, HELD_PADDING_M, 0.0, False, 60),
)
#: base yaws tried at each candidate position, degrees from facing the targets' centre (a robot close
#: to a door faces it at an angle, its starting arm clear of the leaf), and what turning away costs
#: in the ranking per 30 deg
YAW_OFFSETS_DEG = (0.0, -30.0, 30.0, -60.0, 60.0)
YAW_COST = 0.15
#: ranking (:func:`_workspace_cost`): the cost of a base beyond a path's first approach (behind the
#: door it must open); the fraction of the wrist range near either end that costs; the horizontal
#: wrist distance from the base axis, as a fraction of the reach, below which the arm folds against
#: its shoulder joint's limit; the weight of an approach (TCP z) not pointing away from the base
#: (per sample, times 1 - cos)
BEHIND_COST = 5.0
WRIST_EDGE = 0.25
WRIST_NEAR = 0.3
APPROACH_COST = 2.0
#: once a base reaches every target, up to this many more are looked for (at most this many more
#: full checks) and the best conditioned one is chosen (:func:`_manipulability`)
QUALITY_SUCCESSES = 3
QUALITY_EXTRA_CHECKS = 10
#: a held path (a lever turned, a door swung, a drawer pulled) is well conditioned when no two
#: joint axes of the arm come closer than this to being one line (the larger of the angle between
#: them, radians, and their distance over :data:`AXIS_DISTANCE_SCALE_M`)
AXIS_SEPARATION_MIN = 0.35
AXIS_DISTANCE_SCALE_M = 0.1


def _fmt(v: Sequence[float]) -> str:
    return "(" + ", ".join(f"{x:.2f}" for x in v) + ")"


def _workspace_cost(T_base: Pose, targets: Sequence[ReachTarget], wrists: list, bounds: Optional[WristBounds],
                    reach: float) -> float:
    """Heuristic rank of a base pose (lower is better; inf: some target cannot be reached). Each
    sample's wrist point should lie inside :class:`WristBounds`, away from both ends of the range
    (:data:`WRIST_EDGE`), not folded in over the base (:data:`WRIST_NEAR`); its horizontal distance
    from the base axis within the reach; its approach (TCP z) pointing away from the base
    (:data:`APPROACH_COST`, :data:`BEHIND_COST`). A target counts its best alternative."""
    total = 0.0
    S = T_base[:3, :3] @ bounds.shoulder_in_base + T_base[:3, 3] if bounds is not None else None
    p = T_base[:3, 3]
    for t, wr in zip(targets, wrists):
        best = math.inf
        for path, W in zip(t.paths, wr):
            P = np.array([s.pose[:3, 3] for s in path])
            horiz = np.hypot(P[:, 0] - p[0], P[:, 1] - p[1])
            if np.any(horiz > reach):
                continue
            cost = 0.0
            if S is not None:
                d = np.linalg.norm(W - S, axis=1)
                if np.any(d < bounds.lo) or np.any(d > bounds.hi):
                    continue
                m = np.minimum(d - bounds.lo, bounds.hi - d) / (bounds.hi - bounds.lo)
                cost += float(np.sum(np.where(m < WRIST_EDGE, ((WRIST_EDGE - m) / WRIST_EDGE) ** 2, 0.0)))
                # a wrist pulled in over the base folds the arm against its shoulder joint's limit
                hw = np.hypot(W[:, 0] - p[0], W[:, 1] - p[1])
                cost += float(np.sum(np.where(hw < WRIST_NEAR * reach, ((WRIST_NEAR * reach - hw) / (0.1 * reach)) ** 2,
                                              0.0)))
            A = np.array([s.pose[:2, 2] for s in path])
            na = np.hypot(A[:, 0], A[:, 1])
            if na[0] > 0.5 and float(np.dot(A[0], P[0, :2] - p[:2])) < 0.0:
                cost += BEHIND_COST  # the base is beyond the first approach (behind a door it must open)
            D = P[:, :2] - p[:2]
            ok = (na > 0.3) & (horiz > 1e-6)
            if np.any(ok):
                cos = np.sum(A[ok] * D[ok], axis=1) / (na[ok] * horiz[ok])
                cost += float(np.sum(APPROACH_COST * (1.0 - cos)))
            best = min(best, cost / max(len(path), 1))
        if not math.isfinite(best):
            return math.inf
        total += best
    return total


def _axis_separation(world: CollisionWorld, robot: str, results: Sequence[TargetResult]) -> float:
    """How far the arm stays from having two joint axes on one line while the hand holds a handle
    (the ``held`` samples of the reachable paths): the smallest, over those configurations and over
    pairs of arm joints, of the larger of the angle between the two axes (radians) and the distance
    between the two lines over :data:`AXIS_DISTANCE_SCALE_M`. Two collinear axes (the Panda's and the
    iiwa's joints 1 and 3 when joint 2 passes 0) turn two joints into one: the arm's self-motion then
    swings those two joints against each other, and with the hand held by a drawer or a door the
    joint impedance presses it sideways (a 0.25 m drawer pull from a base where joint 2 crosses 0
    peaks at 49 N against 5 N from one where it stays at -0.5 rad and below). inf without held
    samples."""
    r = world.robots[robot]
    c = world.client
    q0 = r.joint_positions()
    worst = math.inf
    info = [pb.getJointInfo(r.body, j, physicsClientId=c)[13] for j in r.arm_joints]
    try:
        for res in results:
            path = res.target.paths[res.path] if res.target.paths else ()
            for q, s in zip(res.configurations, path):
                if not s.held:
                    continue
                r.reset_arm(q)
                pts, axes = [], []
                for j, a in zip(r.arm_joints, info):
                    st = pb.getLinkState(r.body, j, computeForwardKinematics=True, physicsClientId=c)
                    R = np.array(pb.getMatrixFromQuaternion(st[5])).reshape(3, 3)
                    v = R @ np.asarray(a, dtype=float)
                    pts.append(np.array(st[4]))
                    axes.append(v / max(np.linalg.norm(v), 1e-12))
                for i in range(len(axes)):
                    for k in range(i + 1, len(axes)):
                        ang = math.asin(min(1.0, float(np.linalg.norm(np.cross(axes[i], axes[k])))))
                        dist = float(np.linalg.norm(np.cross(pts[k] - pts[i], axes[i])))
                        worst = min(worst, max(ang, dist / AXIS_DISTANCE_SCALE_M))
    finally:
        r.reset_arm(q0)
    return worst


def _quality(world: CollisionWorld, robot: str, results: Sequence[TargetResult]) -> tuple[float, float]:
    """How well a base that reaches every target suits the task, for ranking (larger is better):
    ``(how far the held paths keep the joint axes apart (:func:`_axis_separation`), up to
    :data:`AXIS_SEPARATION_MIN`, beyond which all are alike; the smallest manipulability along the
    paths (:func:`_manipulability`))``."""
    # rounded: bases alike within these steps keep their search order (the workspace ranking)
    return (round(min(_axis_separation(world, robot, results), AXIS_SEPARATION_MIN), 2),
            round(_manipulability(world, robot, results), 3))


def _manipulability(world: CollisionWorld, robot: str, results: Sequence[TargetResult]) -> float:
    """The smallest Yoshikawa manipulability ``sqrt(det(J J^T))`` of the TCP (6 x n Jacobian) over every
    configuration of the reachable paths: low near a singularity (an arm stretched straight, a wrist
    folded), where tracking a door's arc takes large joint motions and forces."""
    r = world.robots[robot]
    c = world.client
    arm_cols = [r.movable_joints.index(j) for j in r.arm_joints]
    q0 = r.joint_positions()
    fingers = [pb.getJointState(r.body, j, physicsClientId=c)[0] for j in r.movable_joints if j not in r.arm_joints]
    local = r.tcp_in_link[:3, 3].tolist()
    worst = math.inf
    try:
        for res in results:
            for q in res.configurations:
                r.reset_arm(q)
                full, k = [], 0
                it = iter(fingers)
                for j in r.movable_joints:
                    full.append(float(q[r.arm_joints.index(j)]) if j in r.arm_joints else float(next(it)))
                zero = [0.0] * len(full)
                lin, ang = pb.calculateJacobian(r.body, r.tcp_link, local, full, zero, zero, physicsClientId=c)
                J = np.vstack([np.array(lin)[:, arm_cols], np.array(ang)[:, arm_cols]])
                worst = min(worst, math.sqrt(max(float(np.linalg.det(J @ J.T)), 0.0)))
    finally:
        r.reset_arm(q0)
    return worst if math.isfinite(worst) else 0.0


def _ring_points(centre: np.ndarray, reach: float, surface: MountingSurface) -> list[tuple[float, float]]:
    """The candidate base positions of :func:`find_base`: rings around ``centre``, 0.2 m to the reach
    every 0.05 m, every 10 deg, on ``surface``."""
    out = []
    for rho in np.arange(0.2, reach + 1e-9, 0.05):
        for k in range(36):
            phi = math.radians(10.0 * k)
            x, y = centre[0] + rho * math.cos(phi), centre[1] + rho * math.sin(phi)
            if surface.contains(x, y):
                out.append((float(x), float(y)))
    return out


def _reach_excess(T_base: Pose, target: ReachTarget, wrists: list, bounds: Optional[WristBounds],
                  reach: float) -> float:
    """How far (m) the best path of ``target`` lies beyond the arm's workspace from ``T_base`` at
    worst along it (0: every sample within the wrist bounds and the horizontal reach)."""
    S = T_base[:3, :3] @ bounds.shoulder_in_base + T_base[:3, 3] if bounds is not None else None
    p = T_base[:3, 3]
    best = math.inf
    for path, W in zip(target.paths, wrists):
        P = np.array([s.pose[:3, 3] for s in path])
        ex = np.maximum(np.hypot(P[:, 0] - p[0], P[:, 1] - p[1]) - reach, 0.0)
        if S is not None:
            d = np.linalg.norm(W - S, axis=1)
            ex = np.maximum(ex, np.maximum(d - bounds.hi, bounds.lo - d))
        best = min(best, float(np.max(np.maximum(ex, 0.0))))
    return best


def find_base(world: CollisionWorld, robot: str, targets: Sequence[ReachTarget], surface: MountingSurface,
              seed: int = 0, start: Optional[Sequence[float]] = None, max_candidates: int = 60,
              time_budget_s: float = 60.0, restore: bool = True, position_tolerance_m: float = SEARCH_TOLERANCE_M,
              held_padding_m: float = SEARCH_HELD_PADDING_M, joint_margin_rad: float = SEARCH_JOINT_MARGIN_RAD,
              progress: Optional[Callable[[int, str], None]] = None,
              accept: Optional[Callable[[Pose], Optional[str]]] = None,
              budget: Optional[SearchBudget] = None) -> BasePlacement:
    """Search a base pose on ``surface`` from which every target is reachable (see the module docs).

    Args:
        world: the collision world; ``robot``'s base is moved while searching (put back when
            ``restore``, else left at the pose found).
        targets: what must be reachable (:class:`ReachTarget`).
        surface: where the base may stand.
        seed: seeds the IK seeds (the search is deterministic for a given seed).
        start: the arm configuration the task starts from (default: the arm's now).
        max_candidates, time_budget_s: stop after this many IK-checked candidates or this much wall time
            (``base_pose: auto``'s safety net; a suggestion's search passes ``budget`` and no time).
        budget: stop once this :class:`SearchBudget` is spent (counted work: deterministic).
        position_tolerance_m: IK position error accepted at a sample (less than the check's 5 mm,
            so that the pose found works with a margin).
        progress: ``progress(candidates, text)`` after each candidate checked.
        accept: the whole-task test (``ptm validate --plan`` with the robot's base at the pose,
            :func:`py_trees_manipulation.trees.plan_check.whole_task_test`): ``accept(T)`` -> None when
            the whole task passes from base pose ``T`` ((4, 4), world), else why not. A base that
            reaches every target but fails it is not chosen (the search goes on), so the pose found,
            applied, passes the same test (None: the targets decide).

    Returns:
        :class:`BasePlacement`: ``ok`` with the pose found, or not ``ok`` with ``failure`` naming the
        target that no candidate reached (and the candidate that reached the most).
    """
    t0 = time.perf_counter()
    if budget is not None:
        budget.begin()
    r = world.robots[robot]
    c = world.client
    body = r.body
    p_saved, q_saved = pb.getBasePositionAndOrientation(body, physicsClientId=c)
    arm_saved = r.joint_positions()
    q_start = np.asarray(start if start is not None else arm_saved, dtype=float)
    reach = float(getattr(r.model, "reach_m", 0.0) or 0.9)
    targets = [t for t in targets if t.paths]
    ignore = [surface.body] if surface.body else []
    if not targets:
        return BasePlacement(robot, False, None, surface, failure="nothing to reach: the task names no target")
    # a door or drawer whose own sweep is blocked by the scene: no base pose helps
    for t in targets:
        blocked = ReachChecker(world, robot, seed=seed).blocked(t)
        if blocked is not None:
            return BasePlacement(robot, False, None, surface, failure=(
                f"no base pose helps: {blocked.label} {blocked.reason}"), time_s=time.perf_counter() - t0)
    # the targets' centre: each target weighs the same (a pick with 24 grasps as much as a door)
    centre = np.mean([t.positions().mean(axis=0) for t in targets], axis=0)
    bounds = wrist_bounds(world, robot)
    wrists = [[bounds.wrists(np.array([s.pose for s in path])) if bounds is not None else None for path in t.paths]
              for t in targets]
    cands = []
    considered = 0
    for rho in np.arange(0.2, reach + 1e-9, 0.05):
        for k in range(36):
            phi = math.radians(10.0 * k)
            x, y = centre[0] + rho * math.cos(phi), centre[1] + rho * math.sin(phi)
            if not surface.contains(x, y):
                continue
            considered += 1
            p = np.array([x, y, surface.z])
            facing = math.atan2(centre[1] - y, centre[0] - x)
            # (the cost does not depend on the yaw: the shoulder is on the base's vertical axis)
            cost = _workspace_cost(base_pose_at(x, y, surface.z, facing), targets, wrists, bounds, reach)
            if not math.isfinite(cost):
                continue
            for j, dyaw in enumerate(YAW_OFFSETS_DEG):
                cands.append((round(cost + YAW_COST * abs(dyaw) / 30.0, 9), round(float(rho), 3), k * 10 + j, p,
                              facing + math.radians(dyaw)))
    cands.sort(key=lambda e: e[:3])
    # the arm must be clear where it starts and in every configuration a target is approached from
    named = r.model.named_configurations
    start_configs = [q_start] + [np.asarray(named[c_], dtype=float) for c_ in
                                 sorted({t.approach_from for t in targets if t.approach_from in named})]
    best: Optional[tuple] = None   # (ok, targets reached, samples reached, pose, results)
    order = list(range(len(targets)))
    checked = screened = 0
    hardest: dict[int, int] = {}
    explained: list = []
    overlap: list[str] = []        # why candidates within reach were not clear (first few)
    found, first_found = 0, None
    quick_failed: dict[int, int] = {}
    refused: list[tuple[Pose, str]] = []   # bases that reach every target but fail the whole-task test
    try:
        for cost, rho, k, p, yaw in cands:
            if checked >= max_candidates or screened >= 8 * max_candidates or time.perf_counter() - t0 > time_budget_s \
                    or (budget is not None and budget.exhausted()):
                break
            T = placed_base_pose(p[0], p[1], p[2], yaw)
            set_base_frame(world, robot, T)
            world.set_robot_state(robot, q_start)
            hit_base = base_overlap(world, robot, ignore)
            if hit_base is not None:
                overlap.append(hit_base)
                continue
            free = world.checker(robot)
            hit_arm = next((h for h in (free.explain(q) for q in start_configs) if h is not None), None)
            if hit_arm is not None:
                overlap.append(f"the arm where it starts: {hit_arm.describe()}")
                continue
            ck = search_checker(world, robot, seed=seed, start=q_start, position_tolerance_m=position_tolerance_m,
                                held_padding_m=held_padding_m, joint_margin_rad=joint_margin_rad)
            # cheap first: the base clear of what swings (a door leaf), each target's hardest poses by IK
            hit_sweep = ck.sweep_hit(targets)
            if hit_sweep is not None:
                overlap.append(hit_sweep)
                continue
            screened += 1
            missed = next((i for i in order if not ck.quick(targets[i], wrists[i], bounds, T)), None)
            if missed is not None:
                quick_failed[missed] = quick_failed.get(missed, 0) + 1
                continue
            checked += 1
            results: list[Optional[TargetResult]] = [None] * len(targets)
            ok = True
            for i in order:
                res = ck.check(targets[i], explain=False)
                results[i] = res
                if not res.ok:
                    ok = False
                    hardest[i] = hardest.get(i, 0) + 1
                    break
            world.set_robot_state(robot, q_start)
            done = [x for x in results if x is not None]
            if ok and accept is not None:
                why = accept(T)
                world.set_robot_state(robot, q_start)
                if why is not None:
                    refused.append((T, why))
                    continue
            n_ok = sum(x.ok for x in done)
            # among bases that reach everything the best conditioned wins (the fewest samples
            # reached decides between the others)
            quality = _quality(world, robot, done) if ok else float(sum(x.reached for x in done))
            if best is None or (ok, n_ok, quality) > best[:3]:
                best = (ok, n_ok, quality, T, done)
            if progress is not None:
                progress(checked, f"{checked} candidates checked")
            if ok:
                # only a well-conditioned base counts toward the few compared (an ill-conditioned one
                # is kept as the fallback while the search goes on)
                found += 1 if quality[0] >= AXIS_SEPARATION_MIN else 0
                if first_found is None:
                    first_found = checked
            if first_found is not None and (found >= QUALITY_SUCCESSES or checked - first_found >= QUALITY_EXTRA_CHECKS):
                break
            # the target that fails most often is checked first at the next candidate
            order.sort(key=lambda i: -hardest.get(i, 0))
        if best is not None and not best[0]:
            # say precisely why at the best candidate
            set_base_frame(world, robot, best[3])
            world.set_robot_state(robot, q_start)
            explained = ReachChecker(world, robot, seed=seed, start=q_start, position_tolerance_m=position_tolerance_m,
                                     held_padding_m=held_padding_m, joint_margin_rad=joint_margin_rad,
                                     strict=True).check_all(targets)
            world.set_robot_state(robot, q_start)
    finally:
        if restore or best is None or not best[0]:
            world.set_base_pq(robot, p_saved, q_saved)
            world.set_robot_state(robot, arm_saved)
        else:
            set_base_frame(world, robot, best[3])
            world.set_robot_state(robot, arm_saved)
    dt = time.perf_counter() - t0
    if best is not None and best[0]:
        return BasePlacement(robot, True, best[3], surface, best[4], "", checked, dt)
    where = "on the floor" if surface.name == "floor" else f"on {surface.name!r}"
    if refused:
        # the most telling refusal: one of the task's steps, before a start in collision
        T_r, why = next((r for r in refused if "in collision at its initial_configuration" not in r[1]
                         and "stands in collision" not in r[1]), refused[0])
        reason = (f"no base position {where} passes the whole task ({checked} candidates checked): "
                  f"{len(refused)} reach every target, and from one, at {_fmt(T_r[:3, 3])}, {why}")
        return BasePlacement(robot, False, None, surface, [], reason, checked, time.perf_counter() - t0)
    if best is None:
        if not cands:
            # name the target out of reach from every position: the one that misses by the most at best
            miss = []
            for t, wr in zip(targets, wrists):
                m = min(_reach_excess(base_pose_at(x, y, surface.z, 0.0), t, wr, bounds, reach)
                        for x, y in _ring_points(centre, reach, surface))
                miss.append(m)
            i = int(np.argmax(miss))
            if miss[i] >= 0.0005:
                reason = (f"no base position {where} reaches {targets[i].name}: from the best of {considered} "
                          f"positions it stays {miss[i] * 1000:.0f} mm beyond what the arm can reach")
            elif miss[i] > 0:
                reason = (f"no base position {where} reaches {targets[i].name}: from the best of {considered} "
                          f"positions it lies at the very edge of what the arm can reach (under 1 mm beyond), "
                          f"with no room to move")
            else:
                reason = (f"no base position {where} has every target within reach at once "
                          f"({', '.join(t.name for t in targets)}; {considered} positions considered)")
        elif screened == 0 and not overlap or screened > 0 and not quick_failed:
            # the budget ran out before the first position was tried (a relaxed step started late)
            what = "budget" if budget is not None and budget.exhausted() else "time"
            return BasePlacement(robot, False, None, surface, [], f"the search's {what} ran out before it tried a "
                                 f"base position {where}", checked, dt, timed_out=True)
        elif screened == 0:
            reason = (f"every base position {where} within reach of the targets is taken: {overlap[0]}"
                      + (f" ({len(overlap)} positions tried)" if len(overlap) > 1 else "")
                      + (": start the arm in another initial_configuration, or mount it elsewhere (another "
                         "base_pose auto surface, or a base_pose)" if "the arm where it starts" in overlap[0] else ""))
        else:
            i = max(quick_failed, key=lambda k_: quick_failed[k_])
            reason = (f"no base position {where} reaches {targets[i].name}: at {screened} clear positions within "
                      f"reach, inverse kinematics misses its hardest poses")
        return BasePlacement(robot, False, None, surface, [], reason, checked, dt)
    # the target that no candidate reached: the one the best candidate failed on
    failed = next((x for x in explained if not x.ok), None) or next(x for x in best[4] if not x.ok)
    reason = (f"no base position {where} reaches {failed.target.name} ({checked} candidates checked); "
              f"from the best one, at {_fmt(best[3][:3, 3])}, {failed.describe()}")
    return BasePlacement(robot, False, best[3], surface, explained or best[4], reason, checked, dt)


def find_base_relaxing(world: CollisionWorld, robot: str, targets: Callable[[bool], Sequence[ReachTarget]],
                       surface: MountingSurface, seed: int = 0, budget: Optional[SearchBudget] = None,
                       **kwargs: Any) -> BasePlacement:
    """:func:`find_base` with the search's margins, relaxed in steps (:data:`RELAX_STEPS`) when no
    base passes with them: a base found with fewer margins is better than none, and says which it
    gave up (:attr:`BasePlacement.relaxed`, in the printed pose and the summary). A search that found
    no candidate within the arm's reach at all is not repeated (margins do not change that).

    Args:
        targets: ``targets(probe)``: the task's targets, probed beyond the motion (the request's
            ``with_margin``) when ``probe``.
        budget: the work all the steps together may spend (a :class:`SearchBudget`; the steps
            then have no wall-clock limit, so the answer does not depend on the machine or its
            load; None: each step its own ``time_budget_s``): a failure that suggests a base keeps
            its answer within seconds; a search cut short says so.
        kwargs: passed to :func:`find_base` (``restore``, ``max_candidates``, ``progress``, ...).

    Returns:
        The first step's :class:`BasePlacement` that is ``ok``; else the last step's (its failure
        says the margins were relaxed), candidates and time summed over the steps.
    """
    t0 = time.perf_counter()
    if budget is not None:
        budget.begin()
    checked = steps = 0
    last: Optional[BasePlacement] = None
    out_of_time = False
    accept = kwargs.get("accept")
    if accept is not None:   # the steps visit the same bases again: each is tested once
        tested: dict[tuple, Optional[str]] = {}

        def once(T: Pose) -> Optional[str]:
            key = tuple(np.round(np.asarray(T, dtype=float)[:3, :].ravel(), 6))
            if key not in tested:
                tested[key] = accept(T)
            return tested[key]

        kwargs = {**kwargs, "accept": once}
    for what, tol, held, margin, probe, count in RELAX_STEPS:
        step_kw = {"max_candidates": count, **kwargs}
        if budget is not None:
            if last is not None and budget.exhausted():   # (a first step spent at once says so itself)
                out_of_time = True
                break
            step_kw.setdefault("time_budget_s", math.inf)
            step_kw["budget"] = budget
        found = find_base(world, robot, targets(probe), surface, seed=seed, position_tolerance_m=tol,
                          held_padding_m=held, joint_margin_rad=margin, **step_kw)
        if found.timed_out and last is not None:   # the step had no time to try anything: keep the last answer
            out_of_time = True
            break
        steps += 1
        last = found
        checked += last.candidates
        if last.ok:
            last.relaxed = what
            break
        if last.candidates == 0:
            break
    assert last is not None
    last.candidates = checked
    last.time_s = time.perf_counter() - t0
    if not last.ok and steps > 1:
        last.failure += f" (with the search's margins relaxed in {steps - 1} step{'s' if steps > 2 else ''})"
    if not last.ok and budget is not None and (out_of_time or budget.exhausted()):
        last.failure += f" (the search stopped after {budget.describe()})"
    return last
