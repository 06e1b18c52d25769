"""What the scene file alone says about where its bodies are: interpenetration and support, decided
without the simulator (``ptm validate``; issue 32 items 1, 2 and the "Bad input" list).

The shapes the file gives exactly are checked here: primitive objects (box, cylinder, sphere) and
the ``<box>``, ``<cylinder>`` and ``<sphere>`` collision shapes of a fixture's or a URDF object's
links that hang from its base on fixed joints (the table's top). A mesh, a robot or a door is known
only to the simulator, which checks every pair again when it loads the scene
(:mod:`py_trees_manipulation.sim.start_state`).

- **Interpenetration** (:func:`overlap_problems`): a movable object deeper than
  ``scene.start_penetration_m`` inside another body (fixture, object) is refused with both names,
  the depth, and the move that clears it (the minimum translation: SAT over the face normals and
  edge cross products of two convex polyhedra; a cylinder is its 48-sided prism, within 0.2 % of
  its radius; a sphere exactly).
- **Support** (:func:`support_problems`): a movable object with nothing under it (no known shape
  below its footprint, and no unknown one that could be: a mesh, a door) is named.

Pure (NumPy and the URDF reader): no PyBullet. Shapes are in the world frame, metres.
"""

from __future__ import annotations

import functools
import math
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

#: sides of the prism a cylinder is checked as
CYLINDER_SIDES = 48


@dataclass(frozen=True)
class Shape:
    """A convex shape in the world frame.

    Attributes:
        kind: ``box``, ``cylinder`` or ``sphere``.
        pose: (4, 4) centre pose (a cylinder's axis along its z).
        size: box full extents (x, y, z); cylinder (radius, length, 0); sphere (radius, 0, 0); metres.
    """

    kind: str
    pose: np.ndarray
    size: tuple[float, float, float]

    @functools.cached_property
    def polyhedron(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(vertices (n, 3), face normal directions (m, 3), edge directions (k, 3)), world frame."""
        R, c = self.pose[:3, :3], self.pose[:3, 3]
        if self.kind == "box":
            h = np.asarray(self.size) / 2.0
            corners = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float) * h
            return corners @ R.T + c, R.T.copy(), R.T.copy()
        r, length = self.size[0], self.size[1]
        a = np.linspace(0.0, 2.0 * math.pi, CYLINDER_SIDES, endpoint=False)
        ring = np.stack([r * np.cos(a), r * np.sin(a)], axis=1)
        verts = np.concatenate([np.c_[ring, np.full(len(a), -length / 2)], np.c_[ring, np.full(len(a), length / 2)]])
        half = CYLINDER_SIDES // 2
        mid = a[:half] + math.pi / CYLINDER_SIDES
        normals = np.concatenate([[[0.0, 0.0, 1.0]], np.stack([np.cos(mid), np.sin(mid), 0 * mid], axis=1)])
        edges = np.concatenate([[[0.0, 0.0, 1.0]], np.stack([-np.sin(mid), np.cos(mid), 0 * mid], axis=1)])
        return verts @ R.T + c, normals @ R.T, edges @ R.T

    def aabb(self) -> tuple[np.ndarray, np.ndarray]:
        """World axis-aligned bounding box (lower, upper), metres."""
        if self.kind == "sphere":
            c = self.pose[:3, 3]
            return c - self.size[0], c + self.size[0]
        v = self.polyhedron[0]
        return v.min(axis=0), v.max(axis=0)


def _box_distance(point: np.ndarray, box: Shape) -> tuple[float, np.ndarray]:
    """Signed distance of ``point`` from ``box`` (negative inside) and the outward direction."""
    R, c = box.pose[:3, :3], box.pose[:3, 3]
    local = R.T @ (point - c)
    h = np.asarray(box.size) / 2.0
    q = np.abs(local) - h
    if np.all(q <= 0):
        i = int(np.argmax(q))
        n = np.zeros(3)
        n[i] = 1.0 if local[i] >= 0 else -1.0
        return float(q[i]), R @ n
    out = np.maximum(q, 0.0) * np.sign(local)
    d = float(np.linalg.norm(out))
    return d, R @ (out / d)


def _cylinder_distance(point: np.ndarray, cyl: Shape) -> tuple[float, np.ndarray]:
    R, c = cyl.pose[:3, :3], cyl.pose[:3, 3]
    x, y, z = R.T @ (point - c)
    r, half = cyl.size[0], cyl.size[1] / 2.0
    rr = math.hypot(x, y)
    radial = np.array([x / rr, y / rr, 0.0]) if rr > 1e-12 else np.array([1.0, 0.0, 0.0])
    axial = np.array([0.0, 0.0, 1.0 if z >= 0 else -1.0])
    dr, dz = rr - r, abs(z) - half
    if dr <= 0 and dz <= 0:
        return (float(dr), R @ radial) if dr > dz else (float(dz), R @ axial)
    v = max(dr, 0.0) * radial + max(dz, 0.0) * axial
    d = float(np.linalg.norm(v))
    return d, R @ (v / d)


def penetration(a: Shape, b: Shape) -> tuple[float, np.ndarray]:
    """How deep ``a`` is inside ``b`` (m, 0 when apart) and the unit direction to move ``a`` along
    to separate them (by that depth)."""
    if a.kind == "sphere" or b.kind == "sphere":
        sphere, other, sign = (a, b, 1.0) if a.kind == "sphere" else (b, a, -1.0)
        c, r = sphere.pose[:3, 3], sphere.size[0]
        if other.kind == "sphere":
            v = c - other.pose[:3, 3]
            d = float(np.linalg.norm(v))
            n = v / d if d > 1e-12 else np.array([0.0, 0.0, 1.0])
            return max(0.0, r + other.size[0] - d), sign * n
        d, n = (_box_distance if other.kind == "box" else _cylinder_distance)(c, other)
        return max(0.0, r - d), sign * n
    va, fa, ea = a.polyhedron
    vb, fb, eb = b.polyhedron
    cross = np.cross(ea[:, None, :], eb[None, :, :]).reshape(-1, 3)
    axes = np.concatenate([fa, fb, cross])
    norms = np.linalg.norm(axes, axis=1)
    axes = axes[norms > 1e-9] / norms[norms > 1e-9, None]
    pa, pb = va @ axes.T, vb @ axes.T
    push_pos = pb.max(axis=0) - pa.min(axis=0)   # move a along +axis by this
    push_neg = pa.max(axis=0) - pb.min(axis=0)   # or along -axis by this
    overlap = np.minimum(push_pos, push_neg)
    i = int(np.argmin(overlap))
    if overlap[i] <= 0:
        return 0.0, axes[i]
    return float(overlap[i]), axes[i] if push_pos[i] <= push_neg[i] else -axes[i]


# ---- shapes of a scene ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Body:
    """A scene body as the file gives it.

    Attributes:
        name: its scene name. kind: ``object``, ``fixed object`` or ``fixture``.
        shapes: its exactly known shapes (world frame).
        complete: every collision shape of it is among ``shapes`` (no mesh, no moving link).
        path: where it is written in the scene (``("objects", 2)``).
    """

    name: str
    kind: str
    shapes: tuple[Shape, ...]
    complete: bool
    path: tuple
    boxes: tuple[tuple[np.ndarray, np.ndarray], ...] = ()
    """World AABBs of its mesh shapes (OBJ files; for support only), metres."""

    def footprint(self) -> Optional[tuple[np.ndarray, np.ndarray]]:
        """World AABB of everything known of it, or None."""
        bounds = [s.aabb() for s in self.shapes] + list(self.boxes)
        if not bounds:
            return None
        return np.min([b[0] for b in bounds], axis=0), np.max([b[1] for b in bounds], axis=0)


def _rpy(r: float, p: float, y: float) -> np.ndarray:
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _floats(text: Optional[str], n: int) -> list[float]:
    vals = [float(v) for v in (text or "").split()] or [0.0] * n
    if len(vals) != n:
        raise ValueError
    return vals


@functools.lru_cache(maxsize=64)
def _obj_bounds(path: str) -> Optional[tuple[tuple[float, ...], tuple[float, ...]]]:
    """(lower, upper) of an OBJ file's vertices, or None (not an OBJ, unreadable, no vertices)."""
    if not path.lower().endswith(".obj"):
        return None
    lo, hi = [math.inf] * 3, [-math.inf] * 3
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("v "):
                    v = [float(x) for x in line.split()[1:4]]
                    lo = [min(a, b) for a, b in zip(lo, v)]
                    hi = [max(a, b) for a, b in zip(hi, v)]
    except (OSError, ValueError):
        return None
    return (tuple(lo), tuple(hi)) if math.isfinite(lo[0]) else None


@functools.lru_cache(maxsize=64)
def _urdf_shapes(path: str, mtime: float) -> tuple[tuple[tuple[str, tuple, tuple], ...], bool]:
    """The URDF's primitive collision shapes on links fixed to its base: ``(kind, size, local pose
    as a tuple of 16)`` (``("mesh", (lower, upper) of its vertices scaled, pose)`` for an OBJ mesh),
    and whether the primitives are all its collision shapes."""
    from ..robots.urdf import UrdfError, parse_urdf

    try:
        model = parse_urdf(path)
        root = ET.parse(path).getroot()
    except (UrdfError, ET.ParseError, OSError):
        return (), False
    complete = True
    out = []
    for link in root.findall("link"):
        name = str(link.get("name"))
        cols = link.findall("collision")
        try:
            chain = model.chain(name)
        except ValueError:
            complete = complete and not cols
            continue
        if any(j.movable for j in chain):
            complete = complete and not cols
            continue
        T_link = model.link_pose(name)
        for col in cols:
            try:
                o = col.find("origin")
                xyz = _floats(o.get("xyz") if o is not None else None, 3)
                rpy = _floats(o.get("rpy") if o is not None else None, 3)
                g = col.find("geometry")
                shape = g[0] if g is not None and len(g) else None
                if shape is None:
                    continue
                if shape.tag == "box":
                    size = tuple(_floats(shape.get("size"), 3))
                elif shape.tag == "cylinder":
                    size = (float(shape.get("radius", "nan")), float(shape.get("length", "nan")), 0.0)
                elif shape.tag == "sphere":
                    size = (float(shape.get("radius", "nan")), 0.0, 0.0)
                else:
                    complete = False
                    if shape.tag != "mesh":
                        continue
                    from ..robots.urdf import resolve_mesh

                    found = resolve_mesh(str(shape.get("filename")), os.path.dirname(path), {})[0]
                    bounds = _obj_bounds(found) if found else None
                    if bounds is None:
                        continue
                    k = _floats(shape.get("scale"), 3) if shape.get("scale") else [1.0, 1.0, 1.0]
                    lo, hi = np.array(bounds[0]) * k, np.array(bounds[1]) * k
                    T = np.eye(4)
                    T[:3, :3], T[:3, 3] = _rpy(*rpy), xyz
                    out.append(("mesh", (tuple(np.minimum(lo, hi)), tuple(np.maximum(lo, hi))),
                                tuple((T_link @ T).ravel())))
                    continue
            except (ValueError, TypeError):
                complete = False
                continue
            if not all(math.isfinite(v) for v in size):
                complete = False
                continue
            T = np.eye(4)
            T[:3, :3], T[:3, 3] = _rpy(*rpy), xyz
            out.append((shape.tag, size, tuple((T_link @ T).ravel())))
    return tuple(out), complete


def _urdf_body_shapes(urdf_path: Optional[str], pose: np.ndarray, scale: float
                      ) -> tuple[tuple[Shape, ...], bool, tuple[tuple[np.ndarray, np.ndarray], ...]]:
    if not urdf_path:
        return (), False, ()
    try:
        mtime = os.path.getmtime(urdf_path)
    except OSError:
        return (), False, ()
    shapes, complete = _urdf_shapes(urdf_path, mtime)
    out, boxes = [], []
    for kind, size, local in shapes:
        L = np.array(local).reshape(4, 4)
        L[:3, 3] *= scale
        if kind == "mesh":
            lo, hi = np.array(size[0]) * scale, np.array(size[1]) * scale
            corners = np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])])
            T = pose @ L
            w = corners @ T[:3, :3].T + T[:3, 3]
            boxes.append((w.min(axis=0), w.max(axis=0)))
            continue
        s = tuple(v * scale for v in size) if kind != "cylinder" else (size[0] * scale, size[1] * scale, 0.0)
        out.append(Shape(kind, pose @ L, s))  # type: ignore[arg-type]
    return tuple(out), complete, tuple(boxes)


def scene_bodies(scene: Any) -> list[Body]:
    """The fixtures and objects of a parsed scene with their exactly known shapes (written poses)."""
    out = []
    for i, f in enumerate(scene.fixtures):
        shapes, complete, boxes = _urdf_body_shapes(f.urdf_path, np.asarray(f.pose, dtype=float), f.scale)
        out.append(Body(f.name, "fixture", shapes, complete, ("fixtures", i), boxes))
    for i, o in enumerate(scene.objects):
        pose = np.asarray(o.pose, dtype=float)
        kind = "fixed object" if o.fixed else "object"
        if o.primitive is not None:
            pr = o.primitive
            size = (tuple(pr.size) if pr.shape == "box" else (pr.radius, pr.length, 0.0) if pr.shape == "cylinder"
                    else (pr.radius, 0.0, 0.0))
            out.append(Body(o.name, kind, (Shape(pr.shape, pose, size),), True, ("objects", i)))  # type: ignore[arg-type]
        else:
            shapes, complete, boxes = _urdf_body_shapes(o.urdf_path, pose, o.scale)
            out.append(Body(o.name, kind, shapes, complete, ("objects", i), boxes))
    return out


def _direction(n: np.ndarray) -> str:
    i = int(np.argmax(np.abs(n)))
    if abs(n[i]) >= math.cos(math.radians(10.0)):
        return ("-" if n[i] < 0 else "+") + "xyz"[i]
    return f"({n[0]:.2f}, {n[1]:.2f}, {n[2]:.2f})"


def _xyz(p: Sequence[float]) -> str:
    return "[" + ", ".join(f"{round(float(v), 3) + 0.0:.3f}" for v in p) + "]"


def overlap_problems(scene: Any, bodies: Optional[list[Body]] = None) -> list[tuple[tuple, str]]:
    """``(scene path, message)`` for each movable object that starts deeper than
    ``scene.start_penetration_m`` inside another body, by the shapes the file gives exactly."""
    tol = float(getattr(scene, "start_penetration_m", 0.003))
    bodies = scene_bodies(scene) if bodies is None else bodies
    out = []
    for i, a in enumerate(bodies):
        for b in bodies[:i] + bodies[i + 1:]:
            if a.kind != "object" or (b.kind == "object" and bodies.index(b) > i):
                continue  # the movable object is moved; of two, the later one written
            depth, n, deepest = 0.0, np.zeros(3), None
            for sa in a.shapes:
                for sb in b.shapes:
                    d, m = penetration(sa, sb)
                    if d > depth:
                        depth, n, deepest = d, m, sb
            if depth <= tol:
                continue
            shift = depth + 0.001
            if b.kind in ("fixture", "fixed object") and n[2] < -0.7 and deepest is not None:
                # the shortest way out is down through a table top or a board, where nothing holds it
                # up: out through its top instead, onto it (as the simulator's check says)
                lo = min(float(s.aabb()[0][2]) for s in a.shapes)
                n, shift = np.array([0.0, 0.0, 1.0]), float(deepest.aabb()[1][2]) - lo + 0.001
            pose = a.shapes[0].pose if a.path[0] == "objects" and len(a.shapes) == 1 else None
            where = ""
            if pose is not None:
                where = (f", to pose position {_xyz(pose[:3, 3] + shift * n)} (a primitive's pose is its centre, "
                         "a URDF object's pose its frame)")
            out.append((a.path + ("pose",),
                        f"{a.kind} {a.name!r} starts {depth * 1000:.0f} mm inside {b.kind} {b.name!r} "
                        f"(start_penetration_m {tol * 1000:g} mm): move {a.name!r} by {shift:.3f} m along "
                        f"{_direction(n)}{where}"))
    return out


def support_problems(scene: Any, bodies: Optional[list[Body]] = None) -> list[tuple[tuple, str]]:
    """``(scene path, message)`` for each movable object with nothing under it: no shape below its
    footprint, every body of the scene known exactly or bounded (an OBJ mesh's box), no doors or
    cabinets (else the simulator decides when the scene settles). ``may_move: true`` exempts an
    object (a drop test)."""
    bodies = scene_bodies(scene) if bodies is None else bodies
    extra = getattr(scene, "extra", {}) or {}
    if extra.get("doors") or extra.get("cabinets"):
        return []
    # a body neither known exactly nor bounded (a mesh other than OBJ) could be under anything
    if any(not b.complete and not b.boxes and not b.shapes for b in bodies):
        return []
    out = []
    may_move = {o.name for o in scene.objects if getattr(o, "may_move", False)}
    for a in bodies:
        box = a.footprint()
        if a.kind != "object" or box is None or a.name in may_move:
            continue
        lo, hi = box
        under = False
        for b in bodies:
            if b is a:
                continue
            for blo, bhi in [s.aabb() for s in b.shapes] + list(b.boxes):
                if blo[0] < hi[0] and bhi[0] > lo[0] and blo[1] < hi[1] and bhi[1] > lo[1] and blo[2] < hi[2]:
                    under = True
        if not under:
            c = 0.5 * (lo + hi)
            out.append((a.path + ("pose",),
                        f"object {a.name!r} has nothing under it: no fixture or object below its footprint "
                        f"(x {lo[0]:.3f} ... {hi[0]:.3f}, y {lo[1]:.3f} ... {hi[1]:.3f} m, centre {_xyz(c)}): it would "
                        "fall; put it on a fixture (a table) or another object"))
    return out


#: vertices within this height of an object's lowest one bear on a flat top under it, m
TIP_CONTACT_M = 0.002
#: how far outside the bearing vertices' hull its centre of mass may be and the object still rest, m
TIP_MARGIN_M = 0.001
#: a movable object that turns more than this while the scene settles is refused (degrees): the
#: simulator's settle check (``sim.start_state``) and this module's tipping test, which counts an
#: object tilted at most this from a resting pose as settling onto it
SETTLE_TURN_DEG = 5.0


def _hull_distance(points: np.ndarray, q: np.ndarray) -> float:
    """Distance (m) from ``q`` (2,) to the convex hull of ``points`` (n, 2) in the plane, 0 inside."""
    pts = np.unique(np.round(points, 9), axis=0)
    if len(pts) == 1:
        return float(np.linalg.norm(q - pts[0]))
    pts = pts[np.lexsort((pts[:, 1], pts[:, 0]))]

    def half(seq: np.ndarray) -> list[np.ndarray]:  # Andrew's monotone chain
        h: list[np.ndarray] = []
        for p in seq:
            while len(h) >= 2 and float(np.cross(h[-1] - h[-2], p - h[-2])) <= 1e-12:
                h.pop()
            h.append(p)
        return h

    hull = half(pts)[:-1] + half(pts[::-1])[:-1]

    def seg(a: np.ndarray, b: np.ndarray) -> float:
        ab = b - a
        t = float(np.clip((q - a) @ ab / max(float(ab @ ab), 1e-18), 0.0, 1.0))
        return float(np.linalg.norm(q - (a + t * ab)))

    if len(hull) < 3:
        return seg(hull[0], hull[-1])
    inside = all(float(np.cross(hull[(k + 1) % len(hull)] - hull[k], q - hull[k])) >= 0 for k in range(len(hull)))
    return 0.0 if inside else min(seg(hull[k], hull[(k + 1) % len(hull)]) for k in range(len(hull)))


def _tilt_from_resting_deg(shape: Shape) -> float:
    """Degrees between ``shape``'s pose and the nearest pose it rests in on a flat top: a face down
    (box), an end down or lying on its side (cylinder)."""
    R = shape.pose[:3, :3]
    if shape.kind == "box":
        return min(math.degrees(math.acos(float(np.clip(abs(R[2, k]), -1.0, 1.0)))) for k in range(3))
    axis_from_vertical = math.degrees(math.acos(float(np.clip(abs(R[2, 2]), -1.0, 1.0))))
    return min(axis_from_vertical, 90.0 - axis_from_vertical)


def tipping_problems(scene: Any, bodies: Optional[list[Body]] = None) -> list[tuple[tuple, str]]:
    """``(scene path, message)`` for each movable box or cylinder written in a pose it cannot rest in
    on the flat top under it: its centre of mass (the shape's centre, uniform density) is outside the
    hull of the vertices it would bear on (those within ``TIP_CONTACT_M`` of its lowest), so it tips
    over as the scene settles (a cylinder tilted 20 deg stands on one point of its rim). Decided only
    where the bearing is known: the object touches nothing but tops under it whose upper face is
    horizontal (a box or an upright cylinder, within 1 deg); an object leaning on a wall or another
    object is left to the simulator's settle check. ``may_move: true`` exempts an object."""
    bodies = scene_bodies(scene) if bodies is None else bodies
    may_move = {o.name for o in scene.objects if getattr(o, "may_move", False)}
    level = math.cos(math.radians(1.0))
    out = []
    for a in bodies:
        if (a.kind != "object" or a.path[0] != "objects" or a.name in may_move or len(a.shapes) != 1
                or a.shapes[0].kind not in ("box", "cylinder")):
            continue
        shape = a.shapes[0]
        verts = shape.polyhedron[0]
        zmin = float(verts[:, 2].min())
        lo, hi = shape.aabb()

        def touches(box: tuple[np.ndarray, np.ndarray]) -> bool:  # within 5 mm of its bounding box
            return bool(np.all(box[0] < hi + 0.005) and np.all(box[1] > lo - 0.005))

        def flat_top_below(sb: Shape) -> bool:
            axes = range(3) if sb.kind == "box" else (2,)
            return (sb.kind in ("box", "cylinder") and any(abs(float(sb.pose[2, k])) >= level for k in axes)
                    and float(sb.aabb()[1][2]) <= zmin + 0.02)

        others = [b for b in bodies if b is not a]
        # a mesh near it, or a body known to nobody but the simulator: left to the simulator
        if any(any(touches(box) for box in b.boxes) or not (b.complete or b.shapes or b.boxes) for b in others):
            continue
        near = [(b, sb) for b in others for sb in b.shapes if touches(sb.aabb())]
        if not near or not all(flat_top_below(sb) for _, sb in near):
            continue
        tilt = _tilt_from_resting_deg(shape)
        if tilt <= SETTLE_TURN_DEG:
            continue  # it settles onto its face within what the simulator's settle check allows
        bearing = verts[verts[:, 2] <= zmin + TIP_CONTACT_M][:, :2]
        off = _hull_distance(bearing, shape.pose[:2, 3])
        if off <= TIP_MARGIN_M:
            continue
        tops = sorted({b.name for b, _ in near})
        if shape.kind == "box":
            how = {1: "one corner", 2: "one edge"}.get(len(np.unique(np.round(bearing, 6), axis=0)), "part of a face")
            rests = "with a face down (rpy_deg: roll and pitch multiples of 90, any yaw)"
        else:
            how = "its rim"
            rests = "standing on an end (rpy_deg [0, 0, yaw]) or lying on its side (rpy_deg [90, 0, yaw])"
        out.append((a.path + ("pose",),
                    f"object {a.name!r} cannot rest as written on {', '.join(repr(t) for t in tops)}: tilted "
                    f"{tilt:.0f} deg from its nearest resting pose, it would stand on {how} with its centre of mass "
                    f"{off * 1000:.0f} mm outside it, and turn over as the scene settles; write it {rests}, or give it "
                    "may_move: true if it is meant to move"))
    return out


#: half the side of a robot's base plate, m: a base stands on a top that reaches under any of it
BASE_PLATE_M = 0.1


def mount_warnings(scene: Any, bodies: Optional[list[Body]] = None) -> list[tuple[tuple, str]]:
    """``(scene path, message)`` for each robot whose base stands above the floor (z > 2 cm) with no
    fixture or object of the scene under its base plate (:data:`BASE_PLATE_M` either side of the base
    frame) within 5 cm of its height: a base moved off the table it
    was written on, or a pedestal the scene does not model. A warning, not an error: the simulator
    holds a robot's base where it is written, so the run goes on; on a real robot it would not."""
    bodies = scene_bodies(scene) if bodies is None else bodies
    out = []
    for i, r in enumerate(getattr(scene, "robots", ()) or ()):
        if getattr(r, "base_auto", None) is not None:   # base_pose: auto stands on the surface it searches
            continue
        T = np.asarray(r.base_pose, dtype=float)
        x, y, z = (float(v) for v in T[:3, 3])
        if z <= 0.02:
            continue
        tops = []
        for b in bodies:
            for blo, bhi in [s.aabb() for s in b.shapes] + list(b.boxes):
                if (blo[0] <= x + BASE_PLATE_M and x - BASE_PLATE_M <= bhi[0] and blo[1] <= y + BASE_PLATE_M
                        and y - BASE_PLATE_M <= bhi[1] and z - 0.05 <= bhi[2] <= z + 0.02):
                    tops.append(b.name)
        if tops:
            continue
        near = ""
        for b in bodies:
            if b.kind != "fixture":
                continue
            for blo, bhi in [s.aabb() for s in b.shapes] + list(b.boxes):
                if abs(bhi[2] - z) <= 0.02:
                    near = (f"; the top of {b.name!r} at that height spans x {blo[0]:.2f} ... {bhi[0]:.2f}, "
                            f"y {blo[1]:.2f} ... {bhi[1]:.2f} m")
                    break
            if near:
                break
        out.append((("robots", i, "base_pose", "position"),
                    f"robot {r.name!r} stands on nothing: its base at {_xyz((x, y, z))} is {z:.3f} m above the floor "
                    f"with no fixture or object of the scene under it{near} (a pedestal the scene does not model? "
                    f"the simulator holds the base where it is written)"))
    return out

