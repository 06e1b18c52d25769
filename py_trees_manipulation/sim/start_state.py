"""The scene as written, or a refusal: the simulator's start-state checks (issue 32 item 1).

Before the first tick, :class:`~.backend.SimBackend` asks two questions of the world it loaded, as
MoveIt refuses a start state in collision:

- **Interpenetration** (:func:`start_overlaps`), before the scene settles: every pair of bodies
  that could be pushed apart or that the arm starts in (a movable object with anything; a robot's
  links with anything but its own) is measured with ``getClosestPoints``; a pair deeper than
  ``scene.start_penetration_m`` (3 mm by default) is refused naming both bodies (and links), the
  depth, and the fix: which body to move, how far and along which axis, and the position that
  clears it. Static pairs (fixtures, fixed objects, doors and cabinets among themselves) are not
  checked: nothing pushes them apart.
- **Settling** (:func:`settle_report`), after ``settle_s`` of physics: a movable object that moved
  further than ``scene.settle_tolerance_m`` (1 cm) or turned more than :data:`SETTLE_TURN_DEG` from
  the pose it was loaded at is refused naming it, how far it moved (or fell, with the height that
  puts it down), unless its scene entry says ``may_move: true`` (a ball meant to roll).

``ptm validate`` decides what the file alone decides (primitive and URDF box, cylinder and sphere
shapes: :mod:`py_trees_manipulation.scene.overlap`); these checks see every shape (meshes, robots,
doors) and the pose noise of the run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np
import pybullet as pb

from ..scene.overlap import SETTLE_TURN_DEG  # (one figure for the settle check and validate's tipping test)

#: a movable object that falls further than this while the scene settles was placed in the air (m):
#: the report says what is under it and the height that puts it there
START_FALL_M = 0.10
#: how a scene places an object, said with a position that fixes it
POSE_IS = "(a primitive's pose is its centre, a URDF object's pose its frame)"


@dataclass(frozen=True)
class _Body:
    name: str
    kind: str          # "object", "fixed object", "fixture", "robot", "door", "cabinet"
    body: int

    @property
    def movable(self) -> bool:
        return self.kind == "object"

    @property
    def static(self) -> bool:
        return self.kind in ("fixed object", "fixture", "door", "cabinet")


def _bodies(sim: Any) -> list[_Body]:
    sc = sim.scene
    kinds: dict[str, str] = {f.name: "fixture" for f in sc.fixtures}
    kinds.update({r.name: "robot" for r in sc.robots})
    kinds.update({o.name: ("fixed object" if o.fixed else "object") for o in sc.objects})
    for section, kind in (("doors", "door"), ("cabinets", "cabinet")):
        kinds.update({s.name: kind for s in (sc.extra.get(section) or [])})
    return [_Body(name, kinds.get(name, "body"), body) for name, body in sim._bodies.items()]


def direction_text(n: np.ndarray) -> str:
    """``"+z"`` for a unit vector within 10 degrees of an axis, else ``"(0.71, -0.71, 0.00)"``."""
    n = np.asarray(n, dtype=float)
    n = n / max(float(np.linalg.norm(n)), 1e-12)
    i = int(np.argmax(np.abs(n)))
    if abs(n[i]) >= math.cos(math.radians(10.0)):
        return ("-" if n[i] < 0 else "+") + "xyz"[i]
    return f"({n[0]:.2f}, {n[1]:.2f}, {n[2]:.2f})"


def _xyz(p: np.ndarray) -> str:
    """``[0.500, -0.104, 0.686]`` (no ``-0.000``)."""
    return "[" + ", ".join(f"{round(float(v), 3) + 0.0:.3f}" for v in p) + "]"


def _label(sim: Any, b: _Body, link: int) -> str:
    text = f"{b.kind} {b.name!r}"
    if b.kind in ("robot", "door", "cabinet"):
        name = (pb.getBodyInfo(b.body, physicsClientId=sim.client)[0].decode() if link < 0
                else sim.world.link_name(b.body, link))
        text += f" ({name})"
    return text


def start_overlaps(sim: Any, fixes: Optional[dict[str, tuple[np.ndarray, float]]] = None) -> tuple[list[str], set[str]]:
    """The pairs of bodies that start deeper than ``scene.start_penetration_m`` inside each other.

    Args:
        fixes: filled with movable object name -> ((3,) world base position, m, that clears its
            deepest overlap; that depth, m), for :func:`apply_overlap_fixes`.

    Returns:
        (one message per pair, deepest first; the names of the bodies involved).
    """
    c = sim.client
    tol = float(sim.scene.start_penetration_m)
    bodies = _bodies(sim)
    order = {b.name: i for i, b in enumerate(bodies)}
    found: list[tuple[float, str]] = []
    names: set[str] = set()

    def box(body: int) -> tuple:  # the body's world AABB (all its links)
        boxes = [pb.getAABB(body, link, physicsClientId=c) for link in range(-1, pb.getNumJoints(body, physicsClientId=c))]
        return (tuple(min(b[0][k] for b in boxes) for k in range(3)), tuple(max(b[1][k] for b in boxes) for k in range(3)))

    boxes = {b.body: box(b.body) for b in bodies}
    for i, a in enumerate(bodies):
        for b in bodies[i + 1:]:
            if a.static and b.static or a.kind == "body" or b.kind == "body":
                continue
            (l0, l1, l2), (h0, h1, h2) = boxes[a.body]
            (a0, a1, a2), (b0, b1, b2) = boxes[b.body]
            if l0 > b0 or l1 > b1 or l2 > b2 or h0 < a0 or h1 < a1 or h2 < a2:
                continue  # apart: no penetration (one box test per pair; a scene's many objects)
            # the body to move: a movable object (the later one written), else the robot
            if b.movable or (not a.movable and b.kind == "robot" and a.kind != "robot"):
                mover, other = b, a
            else:
                mover, other = a, b
            if mover.movable and other.movable and order[other.name] > order[mover.name]:
                mover, other = other, mover
            pts = pb.getClosestPoints(mover.body, other.body, -tol, physicsClientId=c)
            if not pts:
                continue
            deepest = min(pts, key=lambda p: p[8])
            depth = -float(deepest[8])
            if depth <= tol:
                continue
            normal = np.asarray(deepest[7], dtype=float)  # on B (other), pointing towards A (mover)
            shift = depth + 0.001
            if mover.kind == "object" and other.static and normal[2] < -0.7:
                # the shortest way out is down through a table top or a board: under it, nothing holds
                # it up (a mug written 8 cm too low). Out through its top instead, onto it
                top, bottom = boxes[other.body][1][2], boxes[mover.body][0][2]
                normal, shift = np.array([0.0, 0.0, 1.0]), float(top - bottom) + 0.001
            text = (f"{_label(sim, mover, deepest[3])} starts {depth * 1000:.0f} mm inside "
                    f"{_label(sim, other, deepest[4])} (start_penetration_m {tol * 1000:g} mm): ")
            if mover.kind == "robot":
                spec = next(r for r in sim.scene.robots if r.name == mover.name)
                if getattr(spec, "base_auto", None) is not None and getattr(sim, "_placement_failure", None):
                    names.update((mover.name, other.name))
                    continue  # base_pose: auto found no base: that refusal says why, not "give it auto"
                at = np.asarray(spec.base_pose[:3, 3], dtype=float)
                if float(normal[2]) > 0.7 and int(deepest[3]) >= 0:
                    # up, for an arm link (not the base) dipping into a body from above: lifting the
                    # robot off its mount clears it ("stands on nothing" then, a new user's trial: a
                    # finger in a lower table top). Sideways instead, away from the body, by what takes
                    # the link's box clear of the body's (a base sunk into its mount still goes up)
                    normal, shift = _sideways(c, mover.body, int(deepest[3]), at, boxes[other.body])
                to = at + shift * normal
                if to[2] < -1e-6 <= at[2]:   # the way out is down through the floor: a base under a table top
                    text += (f"its base at {_xyz(at)} puts it under or inside {other.name!r}: move robot "
                             f"{mover.name!r} clear of it (base_pose position), give it base_pose: auto (a base "
                             f"from which the task's targets are reached), move {other.name!r}, or start the arm in "
                             "another initial_configuration")
                else:
                    text += (f"move robot {mover.name!r} by {shift:.3f} m along {direction_text(normal)} (base_pose "
                             f"position {_xyz(to)}), move {other.name!r}, or start the "
                             "arm in another initial_configuration")
            else:
                pos = np.asarray(pb.getBasePositionAndOrientation(mover.body, physicsClientId=c)[0], dtype=float)
                to = pos + shift * normal
                # the position to write: the file's, moved (the run's pose noise moved the body a little)
                spec = next((o for o in sim.scene.objects if o.name == mover.name), None)
                written = (np.asarray(spec.pose, dtype=float)[:3, 3] if spec is not None and getattr(spec, "pose", None)
                           is not None else pos) + shift * normal
                text += (f"move {mover.name!r} by {shift:.3f} m along {direction_text(normal)}, to pose position "
                         f"{_xyz(written)} {POSE_IS}")
                into = _overlap_at(sim, mover, to, tol, exclude=other)
                if into is not None:  # that move takes it into another body: it is wedged between two
                    third, mm = into
                    text += (f"; moved there it would start {mm:.0f} mm inside {third.kind} {third.name!r}: it is "
                             f"caught between {other.name!r} and {third.name!r}: move "
                             + (f"robot {other.name!r} (its base_pose)" if other.kind == "robot" else
                                f"{other.kind} {other.name!r}" if not other.static or third.static else
                                f"it clear of both")
                             + " instead")
                if (into is None and fixes is not None and mover.kind == "object"
                        and (mover.name not in fixes or depth > fixes[mover.name][1])):
                    fixes[mover.name] = (to, depth)
            found.append((depth, text))
            names.update((mover.name, other.name))
    found.sort(key=lambda x: -x[0])
    return [t for _, t in found], names


def _sideways(c: int, body: int, link: int, base: np.ndarray, other: tuple) -> tuple[np.ndarray, float]:
    """The horizontal axis (+-x or +-y, away from the centre of ``other``'s world AABB) and the
    distance, m, that take link ``link`` of ``body`` (its AABB) clear of ``other``'s AABB: the move
    of a robot base whose link overlaps a body from above or below."""
    lo, hi = (np.asarray(v, dtype=float) for v in pb.getAABB(body, link, physicsClientId=c))
    olo, ohi = np.asarray(other[0], dtype=float), np.asarray(other[1], dtype=float)
    away = base[:2] - 0.5 * (olo[:2] + ohi[:2])
    best: Optional[tuple[float, np.ndarray]] = None
    for i in (0, 1):
        for sign in (-1.0, 1.0):
            if away[i] * sign < 0:
                continue   # towards the body's centre: through it
            need = (ohi[i] - lo[i]) if sign > 0 else (hi[i] - olo[i])
            axis = np.zeros(3)
            axis[i] = sign
            if best is None or need < best[0]:
                best = (float(need), axis)
    if best is None:  # pragma: no cover (away is never zero on both axes with both signs excluded)
        return np.array([0.0, 0.0, 1.0]), 0.0
    return best[1], best[0] + 0.001


def _overlap_at(sim: Any, mover: _Body, to: np.ndarray, tol: float, exclude: _Body) -> Optional[tuple[_Body, float]]:
    """The deepest body (other than ``mover`` and ``exclude``) that ``mover`` would start more than
    ``tol`` inside with its base at ``to`` (world, m), and the depth in mm; None: clear. Puts it back."""
    c = sim.client
    p, q = pb.getBasePositionAndOrientation(mover.body, physicsClientId=c)
    pb.resetBasePositionAndOrientation(mover.body, [float(v) for v in to], q, physicsClientId=c)
    try:
        pb.performCollisionDetection(physicsClientId=c)
        worst: Optional[tuple[_Body, float]] = None
        for b in _bodies(sim):
            if b.body in (mover.body, exclude.body) or b.kind == "body":
                continue
            pts = pb.getClosestPoints(mover.body, b.body, -tol, physicsClientId=c)
            if pts:
                d = -min(float(x[8]) for x in pts)
                if d > tol and (worst is None or d * 1000 > worst[1]):
                    worst = (b, d * 1000)
        return worst
    finally:
        pb.resetBasePositionAndOrientation(mover.body, p, q, physicsClientId=c)


def apply_overlap_fixes(sim: Any, fixes: dict[str, tuple[np.ndarray, float]]) -> None:
    """Move each movable object named in ``fixes`` (from :func:`start_overlaps`) to the position its
    message gives, before the scene settles: the run is refused anyway, and the settle then tells
    whether that move is the whole fix (:func:`settle_report`'s ``moved_by_fix``: a mug tilted 20 deg,
    lifted out of the table, still tips over; one message says both)."""
    c = sim.client
    for name, (to, _depth) in fixes.items():
        body = sim._objects.get(name)
        if body is None:
            continue
        _p, q = pb.getBasePositionAndOrientation(body, physicsClientId=c)
        pb.resetBasePositionAndOrientation(body, [float(v) for v in to], q, physicsClientId=c)


def start_poses(sim: Any) -> dict[str, tuple[np.ndarray, np.ndarray, float, str]]:
    """For each movable object before settling: (base position, m; orientation (x, y, z, w); the gap
    under its lowest point to the first body below, m, ``inf`` for none; that body's name). The gap
    is the least of five vertical rays from under its bounding box (the centre and the corners)."""
    c = sim.client
    out: dict[str, tuple[np.ndarray, np.ndarray, float, str]] = {}
    for o in sim.scene.objects:
        body = sim._objects.get(o.name)
        if body is None or o.fixed:
            continue
        lo, hi = pb.getAABB(body, -1, physicsClientId=c)
        for link in range(pb.getNumJoints(body, physicsClientId=c)):
            a, b = pb.getAABB(body, link, physicsClientId=c)
            lo, hi = np.minimum(lo, a), np.maximum(hi, b)
        x0, y0, z_lo = float(lo[0]), float(lo[1]), float(lo[2]) - 1e-4
        x1, y1 = float(hi[0]), float(hi[1])
        xy = [((x0 + x1) / 2, (y0 + y1) / 2), (x0, y0), (x0, y1), (x1, y0), (x1, y1)]
        hits = pb.rayTestBatch([(x, y, z_lo) for x, y in xy], [(x, y, z_lo - 10.0) for x, y in xy],
                               physicsClientId=c)
        gap, under = math.inf, ""
        for h in hits:
            if h[0] >= 0 and h[0] != body and 10.0 * h[2] < gap:
                gap, under = 10.0 * h[2], sim._names.get(h[0], f"body {h[0]}")
        p, q = pb.getBasePositionAndOrientation(body, physicsClientId=c)
        out[o.name] = (np.asarray(p, dtype=float), np.asarray(q, dtype=float), gap, under)
    return out


def _turn_deg(q0: np.ndarray, q1: np.ndarray) -> float:
    return math.degrees(2.0 * math.acos(min(1.0, abs(float(np.dot(q0, q1))))))


def settle_report(sim: Any, start: dict[str, tuple[np.ndarray, np.ndarray, float, str]],
                  skip: Optional[set[str]] = None, moved_by_fix: Optional[set[str]] = None) -> list[str]:
    """The movable objects that moved while the scene settled (see the module docs); objects in
    ``skip`` (already named by :func:`start_overlaps`) are left out, except those in ``moved_by_fix``
    (moved by :func:`apply_overlap_fixes` first): for them the message says the move that clears
    the overlap is not the whole fix."""
    c = sim.client
    tol = float(sim.scene.settle_tolerance_m)
    may_move = {o.name for o in sim.scene.objects if o.may_move}
    found = []
    for name, (p0, q0, gap, under) in start.items():
        fixed_first = name in (moved_by_fix or ())
        if (name in (skip or ()) and not fixed_first) or name in may_move:
            continue
        p1, q1 = pb.getBasePositionAndOrientation(sim._objects[name], physicsClientId=c)
        p1 = np.asarray(p1, dtype=float)
        moved = float(np.linalg.norm(p1 - p0))
        turned = _turn_deg(q0, np.asarray(q1, dtype=float))
        fell = float(p0[2] - p1[2])
        settle = f"while the scene settled (settle_s {sim.scene.settle_s:g}"
        if fixed_first:  # the overlap's message gave the move: say whether it is the whole fix
            if moved > tol or turned > SETTLE_TURN_DEG:
                how = f"moved {moved:.3f} m" + (f" and turned {turned:.0f} deg" if turned > SETTLE_TURN_DEG else "")
                fix = ("write it in a pose it rests in: it tips over as written (stand it upright or on a face)"
                       if turned > SETTLE_TURN_DEG else "put it where it rests (there it is on an edge, a slope or "
                       "another object)")
                found.append(f"and moved there, object {name!r} would still not rest: it {how} {settle}, "
                             f"settle_tolerance_m {tol:g}) from {_xyz(p0)} to {_xyz(p1)}: {fix}, or give it may_move: "
                             "true if it is meant to move")
            continue
        if fell > START_FALL_M or (moved > tol and fell > 0.8 * moved and turned <= SETTLE_TURN_DEG):
            where = (f"its lowest point starts {gap:.3f} m above {under!r}: lower it to z = {p0[2] - gap + 0.001:.3f} m "
                     f"{POSE_IS}" if math.isfinite(gap)
                     else "there is nothing under it: put it on a fixture (a table) or another object")
            found.append(f"object {name!r} fell {fell:.3f} m {settle}"
                         + (f", settle_tolerance_m {tol:g}" if fell <= START_FALL_M else "") + f"): {where}")
        elif moved > tol or turned > SETTLE_TURN_DEG:
            how = f"moved {moved:.3f} m" + (f" and turned {turned:.0f} deg" if turned > SETTLE_TURN_DEG else "")
            found.append(f"object {name!r} {how} {settle}, settle_tolerance_m {tol:g}): from "
                         f"{_xyz(p0)} to {_xyz(p1)}: it is "
                         "not at rest where it is written (on an edge, a slope or another object); put it where it "
                         "rests, or give it may_move: true if it is meant to move")
    return found
