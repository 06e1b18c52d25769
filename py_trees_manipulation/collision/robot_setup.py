"""A robot description drafted from a URDF (``ptm robots init``), as MoveIt's Setup Assistant does.

:func:`draft_description` reads a URDF and guesses what a robot description file says that the
URDF does not, each guess with the reason written next to it in the file:

- **the hand**: the link where the kinematic tree splits into two or more moving branches (the
  deepest such split); the **arm** is every movable joint from the root down to it;
- **the gripper**: the pair of links, on two different branches below the hand, whose collision
  geometry comes closest when the gripper closes and moves apart the most when it opens (PyBullet's
  ``getClosestPoints`` at both ends of the finger joints' travel). One joint that every finger joint
  follows through ``<mimic>`` tags, with more than one joint between the hand and a pad, is a
  linkage: ``driver:``; otherwise the two finger joints: ``joints:``;
- **the pads**: on each finger, the collision surface nearest the other finger, fully open (its
  vertices within 1 mm of the innermost, read with PyBullet's ``getMeshData`` or from the
  primitive's dimensions): the pad frame's y is the closing direction reversed, z the approach (from
  the hand to the fingertips), its width and length the face's extent;
- **the TCP**: midway between the pad centres at half the opening, z the approach, y the first
  pad's back direction (the finger travel), in the hand link's frame;
- **ready**: by inverse kinematics (:func:`~.ik.solve_ik`), the hand pointing down in front of the
  base at a height and distance in proportion to the arm's reach, fingers along the base's y axis,
  free of self-collision and above the base's plane; **forward**: the hand level, pointing forward;
- **allowed collision pairs**: link pairs (not joined by one joint) in contact in every one of 300
  seeded random configurations (MoveIt's "always in collision"), and the two pads when they touch
  closed on nothing;
- **forces**: a prismatic finger joint's URDF effort when it reads like a force (5-200 N), else
  40 N, marked as a guess to replace by the data sheet's.

The draft is checked by loading it (:func:`~py_trees_manipulation.robots.load_description`) before
it is written. Errors (:class:`RobotSetupError`) say what could not be found and what to do.
"""

from __future__ import annotations

from ..bullet import _quiet_import  # noqa: F401  (first: pybullet's import banner)

import math
import os
import tempfile
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

import numpy as np
import pybullet as pb

from ..geometry.poses import pose_from_pq
from ..robots.description import FingerPad
from ..robots.urdf import UrdfModel, parse_urdf, pybullet_data_path, resolve_mesh

__all__ = ["RobotSetupError", "Draft", "draft_description", "find_packages", "ALWAYS_SAMPLES"]

#: random configurations sampled for the always-in-contact link pairs (MoveIt's default is 10,000;
#: a pair in contact in 300 seeded ones is in contact in all of them in practice)
ALWAYS_SAMPLES = 300
#: vertices within this of the innermost one belong to a finger's inner face, metres
FACE_TOLERANCE_M = 0.001
#: a link pair closer than this (penetrating) is in self-collision, metres (meshes that touch, as
#: the iiwa's wrist links do, are not)
PENETRATION_M = 0.0005
_MOVABLE = ("revolute", "continuous", "prismatic")


class RobotSetupError(ValueError):
    """What ``ptm robots init`` could not find in a URDF; ``hint`` says what to do."""

    def __init__(self, message: str, hint: str = ""):
        self.message, self.hint = message, hint
        super().__init__(message + (f"; {hint}" if hint else ""))


@dataclass
class Draft:
    """A drafted robot description: values and the comment (the reason) for each.

    ``text`` is the YAML file; the other attributes are what it says, for tests and messages.
    """

    name: str
    urdf_value: str
    packages: dict[str, str]
    arm: list[str]
    palm: str
    driver: Optional[str]
    joints: list[str]
    pads: list[FingerPad]
    pad_size: tuple[float, float]
    tcp: tuple[tuple[float, float, float], tuple[float, float, float]]
    default_force_n: float
    named: dict[str, list[float]]
    allowed: list[tuple[str, str]]
    notes: dict[str, str] = field(default_factory=dict)
    text: str = ""


# ------------------------------------------------------------------------------------------------
def find_packages(urdf_path: str, given: Optional[Mapping[str, str]] = None) -> tuple[dict[str, str], list[str]]:
    """``({package: folder}, [packages not found])`` for the ``package://`` URIs of a URDF's meshes.

    Each package the URDF names that ``given`` does not map, and that is not a folder next to the
    URDF (which the loader tries itself), is looked for in the URDF's folder and up to four folders
    above it: a folder with the package's name, or one whose ``package.xml`` names it (a ROS
    workspace). ``pybullet_data`` is always known.
    """
    import re
    import xml.etree.ElementTree as ET

    with open(urdf_path, encoding="utf-8") as f:
        text = f.read()
    wanted = sorted(set(re.findall(r"package://([^/\"']+)/", text)) - {"pybullet_data"} - set(given or {}))
    folder = os.path.dirname(os.path.abspath(urdf_path))
    found: dict[str, str] = dict(given or {})
    missing: list[str] = []
    for pkg in wanted:
        if os.path.isdir(os.path.join(folder, pkg)):
            continue                                      # the loader finds it next to the URDF
        hit = None
        d = folder
        for _ in range(5):
            cand = os.path.join(d, pkg)
            if os.path.isdir(cand):
                hit = cand
                break
            if os.path.basename(d) == pkg:
                hit = d
                break
            for sub in sorted(os.listdir(d)) if os.path.isdir(d) else []:
                px = os.path.join(d, sub, "package.xml")
                if os.path.isfile(px):
                    try:
                        if (ET.parse(px).getroot().findtext("name") or "").strip() == pkg:
                            hit = os.path.join(d, sub)
                            break
                    except ET.ParseError:
                        pass
            if hit:
                break
            d = os.path.dirname(d)
        if hit:
            found[pkg] = os.path.abspath(hit)
        else:
            missing.append(pkg)
    return found, missing


def _branches(urdf: UrdfModel) -> dict[str, list[str]]:
    """For each link, its child joints whose subtree (the joint included) has a movable joint."""
    children: dict[str, list[str]] = {ln: [] for ln in urdf.links}
    for j in urdf.joints.values():
        children[j.parent].append(j.name)
    moving: dict[str, bool] = {}

    def has_moving(jn: str) -> bool:
        if jn not in moving:
            j = urdf.joints[jn]
            moving[jn] = j.type in _MOVABLE or any(has_moving(k) for k in children[j.child])
        return moving[jn]

    return {ln: [jn for jn in children[ln] if has_moving(jn)] for ln in urdf.links}


def _hand(urdf: UrdfModel) -> str:
    """The link where the tree splits into two or more moving branches, the deepest such link (by
    the number of movable joints above it)."""
    br = _branches(urdf)
    splits = [ln for ln in urdf.links if len(br[ln]) >= 2]
    if not splits:
        raise RobotSetupError(f"no gripper in {os.path.basename(urdf.path)}: no link has two moving fingers below it",
                              "ptm robots init needs one URDF with the arm and a two-finger gripper (attach the "
                              "gripper's URDF to the arm's flange with a fixed joint, as the KUKA iiwa + WSG 50 "
                              "stock model does)")

    def depth(ln: str) -> int:
        return sum(1 for j in urdf.chain(ln) if j.type in _MOVABLE)

    return max(splits, key=lambda ln: (depth(ln), -urdf.links.index(ln)))


# ---- PyBullet helpers -----------------------------------------------------------------------------
class _Body:
    """The URDF loaded in its own PyBullet DIRECT client (for distances, meshes and IK)."""

    def __init__(self, urdf_file: str):
        self.client = pb.connect(pb.DIRECT)
        try:
            self.body = pb.loadURDF(urdf_file, useFixedBase=True, flags=pb.URDF_USE_SELF_COLLISION,
                                    physicsClientId=self.client)
        except pb.error as e:
            pb.disconnect(self.client)
            raise RobotSetupError(f"PyBullet cannot load {urdf_file}: {e}",
                                  "check that every mesh file exists and is .obj, .stl or .dae") from None
        n = pb.getNumJoints(self.body, physicsClientId=self.client)
        infos = [pb.getJointInfo(self.body, j, physicsClientId=self.client) for j in range(n)]
        self.joint = {i[1].decode(): k for k, i in enumerate(infos)}
        self.link = {i[12].decode(): k for k, i in enumerate(infos)}
        self.link[pb.getBodyInfo(self.body, physicsClientId=self.client)[0].decode()] = -1
        self.parent = {k: i[16] for k, i in enumerate(infos)}

    def close(self) -> None:
        pb.disconnect(self.client)

    def set(self, positions: Mapping[str, float]) -> None:
        for name, v in positions.items():
            if name in self.joint:
                pb.resetJointState(self.body, self.joint[name], float(v), physicsClientId=self.client)

    def frame(self, link: str) -> np.ndarray:
        k = self.link[link]
        if k == -1:
            p, q = pb.getBasePositionAndOrientation(self.body, physicsClientId=self.client)
        else:
            st = pb.getLinkState(self.body, k, computeForwardKinematics=True, physicsClientId=self.client)
            p, q = st[4], st[5]
        return pose_from_pq(p, (q[3], q[0], q[1], q[2]))

    def distance(self, a: str, b: str, cap: float = 1.0) -> float:
        pts = pb.getClosestPoints(self.body, self.body, cap, linkIndexA=self.link[a], linkIndexB=self.link[b],
                                  physicsClientId=self.client)
        return min((p[8] for p in pts), default=cap)

    def has_collision(self, link: str) -> bool:
        return bool(pb.getCollisionShapeData(self.body, self.link[link], physicsClientId=self.client))

    def vertices(self, link: str) -> np.ndarray:
        """Collision surface points of ``link`` in its link frame, shape (n, 3): mesh vertices (the
        convex hull PyBullet built), box corners, points on spheres and cylinders."""
        c, body, k = self.client, self.body, self.link[link]
        dyn = pb.getDynamicsInfo(body, k, physicsClientId=c)
        inertial = pose_from_pq(dyn[3], (dyn[4][3], dyn[4][0], dyn[4][1], dyn[4][2]))
        pts: list[np.ndarray] = []
        for i, shape in enumerate(pb.getCollisionShapeData(body, k, physicsClientId=c)):
            kind, dims = shape[2], shape[3]
            local = pose_from_pq(shape[5], (shape[6][3], shape[6][0], shape[6][1], shape[6][2]))
            if kind == pb.GEOM_MESH:
                try:
                    v = np.asarray(pb.getMeshData(body, k, collisionShapeIndex=i, physicsClientId=c)[1], dtype=float)
                except pb.error:
                    v = np.zeros((0, 3))
                if len(v):
                    pts.append((inertial[:3, :3] @ v.T).T + inertial[:3, 3])
                continue
            if kind == pb.GEOM_BOX:
                h = np.asarray(dims, dtype=float) / 2
                v = np.array([[sx * h[0], sy * h[1], sz * h[2]] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)])
            elif kind == pb.GEOM_SPHERE:
                r = float(dims[0])
                a = np.linspace(0, 2 * np.pi, 16, endpoint=False)
                ring = np.stack([np.cos(a), np.sin(a), 0 * a], axis=1)
                v = np.concatenate([ring * r, ring[:, [0, 2, 1]] * r, ring[:, [2, 0, 1]] * r])
            elif kind in (pb.GEOM_CYLINDER, pb.GEOM_CAPSULE):
                length, r = float(dims[0]), float(dims[1])
                a = np.linspace(0, 2 * np.pi, 24, endpoint=False)
                ring = np.stack([r * np.cos(a), r * np.sin(a), 0 * a], axis=1)
                v = np.concatenate([ring + [0, 0, -length / 2], ring + [0, 0, length / 2]])
            else:
                continue
            T = inertial @ local
            pts.append((T[:3, :3] @ v.T).T + T[:3, 3])
        return np.concatenate(pts) if pts else np.zeros((0, 3))


# ---- the gripper ----------------------------------------------------------------------------------
def _finger_pair(urdf: UrdfModel, body: _Body, palm: str, ends: Sequence[dict[str, float]]
                 ) -> tuple[str, str, dict[str, float], dict[str, float]]:
    """The two links on different branches below ``palm`` that close on each other: nearest at one
    end of the travel, furthest apart at the other. Returns (link a, link b, closed, open)."""
    br = _branches(urdf)[palm]
    side = {}
    for ln in urdf.links:
        if ln == palm or not urdf.is_descendant(ln, palm) or not body.has_collision(ln):
            continue
        top = urdf.chain(ln, palm)[0].name
        if top in br and any(j.type in _MOVABLE for j in urdf.chain(ln, palm)):
            side[ln] = top
    best = None
    links = list(side)
    for i, a in enumerate(links):
        for b in links[i + 1:]:
            if side[a] == side[b]:
                continue
            d = []
            for e in ends:
                body.set(e)
                d.append(body.distance(a, b))
            k_closed, k_open = int(np.argmin(d)), int(np.argmax(d))
            score = d[k_open] - d[k_closed]
            if d[k_closed] < 0.02 and (best is None or score > best[0]):
                best = (score, a, b, k_closed, k_open)
    if best is None or best[0] < 0.005:
        raise RobotSetupError(f"no two links below {palm!r} close on each other when the finger joints move",
                              "check the finger joints' limits and that the fingers have <collision> geometry")
    _, a, b, kc, ko = best
    return a, b, dict(ends[kc]), dict(ends[ko])


def _face(body: _Body, link: str, palm: str, toward: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(centre (3,), vertices (n, 3)) of ``link``'s collision surface nearest the other finger
    (``toward``: unit vector, palm frame), in the palm frame, at the body's current configuration."""
    T = np.linalg.inv(body.frame(palm)) @ body.frame(link)
    v = body.vertices(link)
    if not len(v):
        raise RobotSetupError(f"the finger link {link!r} has no collision geometry PyBullet can read",
                              "give it a <collision> box or mesh")
    w = (T[:3, :3] @ v.T).T + T[:3, 3]
    s = w @ toward
    face = w[s >= s.max() - FACE_TOLERANCE_M]
    return face, w


def _pad_frames(body: _Body, a: str, b: str, palm: str) -> tuple[list[np.ndarray], tuple[float, float]]:
    """The pad frames of fingers ``a`` and ``b`` (palm frame, (4, 4) each) and the pad size (width,
    length), at the body's current (open) configuration."""
    pts = pb.getClosestPoints(body.body, body.body, 1.0, linkIndexA=body.link[a], linkIndexB=body.link[b],
                              physicsClientId=body.client)
    if not pts:
        raise RobotSetupError(f"the fingers {a!r} and {b!r} are more than 1 m apart open")
    p = min(pts, key=lambda x: x[8])
    Pinv = np.linalg.inv(body.frame(palm))
    n_world = np.asarray(p[7], dtype=float)                 # from b towards a
    n = _snap(Pinv[:3, :3] @ n_world)
    faces = [_face(body, a, palm, -n)[0], _face(body, b, palm, n)[0]]
    centres = [0.5 * (f.min(0) + f.max(0)) for f in faces]
    # the approach: from the palm's origin towards the fingertips, square to the closing direction
    mid = 0.5 * (centres[0] + centres[1])
    approach = mid - (mid @ n) * n
    if np.linalg.norm(approach) < 1e-6:
        approach = np.array([0.0, 0.0, 1.0]) - n[2] * n
    approach = _snap(approach)
    frames = []
    size = []
    for k, (face, y) in enumerate(zip(faces, (n, -n))):
        z = approach - (approach @ y) * y
        z /= np.linalg.norm(z)
        x = np.cross(y, z)
        xs, zs = face @ x, face @ z
        centre = x * 0.5 * (xs.min() + xs.max()) + z * 0.5 * (zs.min() + zs.max()) + y * float(np.mean(face @ y))
        F = np.eye(4)
        F[:3, 0], F[:3, 1], F[:3, 2], F[:3, 3] = x, y, z, centre
        frames.append(F)
        size.append((float(xs.max() - xs.min()), float(zs.max() - zs.min())))
    width = max(0.005, min(s[0] for s in size))
    length = max(0.005, min(s[1] for s in size))
    return frames, (width, length)


def _snap(v: np.ndarray, within_deg: float = 2.0) -> np.ndarray:
    """``v`` normalised, or the nearest axis of its frame when it is within ``within_deg`` of it (a
    mesh's closest points tilt the closing direction by a fraction of a degree)."""
    v = np.asarray(v, dtype=float) / np.linalg.norm(v)
    k = int(np.argmax(np.abs(v)))
    if abs(v[k]) >= np.cos(np.radians(within_deg)):
        out = np.zeros(3)
        out[k] = np.sign(v[k])
        return out
    return v


def _rpy_deg(R: np.ndarray) -> list[float]:
    """URDF-style fixed-axis roll, pitch, yaw of a rotation, degrees, rounded."""
    from transforms3d.euler import mat2euler

    r, p, y = mat2euler(R, "sxyz")
    return [round(math.degrees(v), 3) + 0.0 for v in (r, p, y)]


def _fmt(v: float, digits: int = 4) -> str:
    s = f"{v:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def _vec(v: Sequence[float], digits: int = 4) -> str:
    return "[" + ", ".join(_fmt(float(x), digits) for x in v) + "]"


# ---- the draft --------------------------------------------------------------------------------------
def draft_description(urdf_path: str, packages: Optional[Mapping[str, str]] = None,
                      out_dir: Optional[str] = None, name: Optional[str] = None,
                      progress: Any = None) -> Draft:
    """Draft a robot description for the URDF at ``urdf_path`` (see the module docstring).

    Args:
        urdf_path: the URDF (arm and gripper in one file).
        packages: ``{package: folder}`` for ``package://`` meshes; others are looked for
            (:func:`find_packages`).
        out_dir: the folder the description will be written to (the URDF path and package
            folders are written relative to it); default: the current folder.
        name: the model name (default: the URDF's ``<robot name>``).
        progress: called with a short text before each slow step, or None.

    Raises:
        RobotSetupError: no gripper, no fingers that close, an unknown package, a URDF PyBullet
            cannot load, or no ``ready`` configuration found.
    """
    from ..robots.loader import RobotDescriptionError, load_description
    from ..robots.urdf import UrdfError, loadable_urdf

    say = progress or (lambda _msg: None)
    urdf_path = os.path.abspath(urdf_path)
    out_dir = os.path.abspath(out_dir or os.getcwd())
    if not os.path.isfile(urdf_path):
        raise RobotSetupError(f"no such file {urdf_path}")
    if urdf_path.lower().endswith(".sdf"):
        raise RobotSetupError(f"{urdf_path} is an SDF file", "convert it to URDF (e.g. ROS's sdformat_urdf)")
    pk, missing = find_packages(urdf_path, packages)
    if missing:
        raise RobotSetupError(f"the URDF names meshes in package(s) {', '.join(missing)}, which are not next to it "
                              "nor in a folder above it",
                              "give each with --package NAME=FOLDER (the folder that holds the package's meshes/)")
    try:
        urdf = parse_urdf(urdf_path, pk)
        loadable = loadable_urdf(urdf_path, pk)
    except UrdfError as e:
        raise RobotSetupError(f"cannot read the URDF: {e}") from None
    bad = [fn for fn, p in urdf.meshes if p is None]
    if bad:
        why = resolve_mesh(bad[0], os.path.dirname(urdf_path), pk)[1]
        raise RobotSetupError(f"the URDF names mesh {bad[0]!r}: {why}", "give the package with --package NAME=FOLDER")
    notes: dict[str, str] = {}
    palm = _hand(urdf)
    arm = [j.name for j in urdf.chain(palm) if j.type in _MOVABLE]
    if len(arm) < 3:
        raise RobotSetupError(f"only {len(arm)} movable joint(s) above the hand {palm!r}: not an arm")
    notes["arm"] = (f"every movable joint from {urdf.root!r} down to {palm!r}, where the tree splits into the fingers")
    say("finding the fingers")
    body = _Body(loadable)
    try:
        gripper_joints = [j for j in urdf.joints.values() if j.type in _MOVABLE and j.name not in arm
                          and urdf.is_descendant(j.parent, palm)]
        try:
            roots = sorted({urdf.mimic_root(j.name)[0] for j in gripper_joints}, key=list(urdf.joints).index)
        except ValueError as e:
            raise RobotSetupError(f"the gripper's <mimic> tags are broken: {e}") from None
        ranges = {r: (urdf.joints[r].lower, urdf.joints[r].upper) for r in roots}
        for r, (lo, hi) in ranges.items():
            if not (np.isfinite(lo) and np.isfinite(hi)) or hi <= lo:
                raise RobotSetupError(f"the gripper joint {r!r} has no position limits", "give it <limit lower upper>")

        def config(ends: Sequence[int]) -> dict[str, float]:
            q = {r: ranges[r][e] for r, e in zip(roots, ends)}
            return {j.name: urdf.joint_value(j.name, q) for j in gripper_joints}

        import itertools

        combos = [config(e) for e in itertools.product((0, 1), repeat=len(roots))] if len(roots) <= 3 else \
            [config([0] * len(roots)), config([1] * len(roots))]
        a, b, closed, opened = _finger_pair(urdf, body, palm, combos)
        chains = [[j for j in urdf.chain(ln, palm) if j.type in _MOVABLE] for ln in (a, b)]
        pad_roots = {urdf.mimic_root(j.name)[0] for ch in chains for j in ch}
        driver = None
        if len(pad_roots) == 1 and any(len(ch) > 1 for ch in chains):
            driver = next(iter(pad_roots))
            if driver not in {j.name for j in chains[0]} and driver in {j.name for j in chains[1]}:
                a, b, chains = b, a, chains[::-1]
            notes["driver"] = (f"every joint between the hand and the pads follows {driver!r} through <mimic> tags "
                               "(a one-motor linkage)")
        elif len(pad_roots) <= 2:
            firsts = [ch[0].name for ch in chains]
            if list(urdf.joints).index(firsts[0]) > list(urdf.joints).index(firsts[1]):
                a, b, chains, firsts = b, a, chains[::-1], firsts[::-1]
            notes["joints"] = "the first joint between the hand and each pad"
        else:
            raise RobotSetupError(f"the pads {a!r} and {b!r} move with {len(pad_roots)} independent joints "
                                  f"({', '.join(sorted(pad_roots))})", "a parallel gripper has one or two")
        notes["pads"] = (f"{a!r} and {b!r}: the links that close on each other (nearest closed, furthest apart open); "
                         "each pad is the finger's collision surface nearest the other finger, fully open")
        body.set(opened)
        frames, (width, length) = _pad_frames(body, a, b, palm)
        pads = []
        for ln, F in zip((a, b), frames):
            L = np.linalg.inv(body.frame(palm)) @ body.frame(ln)
            P = np.linalg.inv(L) @ F
            pads.append((ln, P))
        # the TCP: halfway through the travel, midway between the pad centres
        half = {k: 0.5 * (closed[k] + opened[k]) for k in closed}
        if driver is not None:
            half = {j.name: urdf.joint_value(j.name, {driver: 0.5 * (closed[driver] + opened[driver])})
                    for j in gripper_joints}
        body.set(half)
        Pinv = np.linalg.inv(body.frame(palm))
        pad_world = [Pinv @ body.frame(ln) @ P for ln, P in pads]
        mid = 0.5 * (pad_world[0][:3, 3] + pad_world[1][:3, 3])
        z = frames[0][:3, 2]
        y = frames[0][:3, 1]
        R = np.stack([np.cross(y, z), y, z], axis=1)
        notes["tcp"] = ("midway between the pad centres halfway through the travel: z out of the fingers, y along the "
                        "finger travel (the first pad's back)")
        # forces
        force = 40.0
        fj = urdf.joints[chains[0][0].name]
        if driver is None and fj.type == "prismatic" and 5.0 <= fj.effort <= 200.0:
            force = float(fj.effort)
            notes["force"] = f"GUESS: the URDF's effort limit of {fj.name!r}; put your gripper's data sheet figure"
        else:
            notes["force"] = "GUESS: 40 N; put your gripper's data sheet figure (continuous gripping force)"
        joints_out = [] if driver is not None else [ch[0].name for ch in chains]
        # pads touching closed on nothing
        body.set(closed)
        pads_touch = body.distance(a, b) <= 0.0005
    finally:
        body.close()

    urdf_value = _urdf_value(urdf_path, out_dir)
    draft = Draft(name=name or _model_name(urdf), urdf_value=urdf_value,
                  packages={k: _rel(v, out_dir) for k, v in pk.items()}, arm=arm, palm=palm, driver=driver,
                  joints=joints_out, pads=[FingerPad(ln, tuple(P[:3, 3]), (1.0, 0.0, 0.0, 0.0)) for ln, P in pads],
                  pad_size=(width, length), tcp=(tuple(float(v) for v in mid), tuple(_rpy_deg(R))),  # type: ignore[arg-type]
                  default_force_n=force, named={}, allowed=[], notes=notes)
    pad_rpy = [_rpy_deg(P[:3, :3]) for _, P in pads]
    # a first file (ready: the zero configuration clipped to the limits) to load the robot with
    zero = [float(np.clip(0.0, urdf.joints[j].lower, urdf.joints[j].upper)) for j in arm]
    draft.named = {"ready": zero}
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "draft.yaml")
        with open(path, "w") as f:
            f.write(_yaml(draft, pad_rpy, urdf_value=urdf_path, packages=pk))
        try:
            d = load_description(path)
        except RobotDescriptionError as e:
            raise RobotSetupError(f"the drafted description does not load: {e}",
                                  "report this URDF; meanwhile write the description by hand (README 'Robots')") from None
        say("sampling self-collisions")
        draft.allowed = _always_in_contact(d, pads_touch)
        say("finding ready by inverse kinematics")
        draft.named, why = _named_configurations(d, draft.allowed)
        notes.update(why)
    draft.text = _yaml(draft, pad_rpy)
    return draft


def _model_name(urdf: UrdfModel) -> str:
    import re

    base = urdf.name or os.path.splitext(os.path.basename(urdf.path))[0]
    return re.sub(r"[^A-Za-z0-9_]+", "_", base).strip("_") or "my_robot"


def _rel(path: str, out_dir: str) -> str:
    """``path`` relative to ``out_dir`` when it is at most two folders up, else absolute."""
    rel = os.path.relpath(path, out_dir)
    return rel if not rel.startswith(os.path.join("..", "..", "..")) else path


def _urdf_value(urdf_path: str, out_dir: str) -> str:
    data = pybullet_data_path()
    if urdf_path.startswith(data + os.sep):
        return "package://pybullet_data/" + os.path.relpath(urdf_path, data).replace(os.sep, "/")
    return _rel(urdf_path, out_dir)


def _always_in_contact(d: Any, pads_touch: bool) -> list[tuple[str, str]]:
    """Link pairs (not joined by one joint) in contact in every one of :data:`ALWAYS_SAMPLES` seeded
    random configurations (arm and gripper), plus the pads when they touch closed."""
    from ..bullet.robots import LoadedRobot

    c = pb.connect(pb.DIRECT)
    try:
        body = pb.loadURDF(d.urdf, useFixedBase=True, flags=pb.URDF_USE_SELF_COLLISION, physicsClientId=c)
        r = LoadedRobot(c, body, d)
        n = pb.getNumJoints(body, physicsClientId=c)
        parent = {j: pb.getJointInfo(body, j, physicsClientId=c)[16] for j in range(n)}
        names = {j: pb.getJointInfo(body, j, physicsClientId=c)[12].decode() for j in range(n)}
        names[-1] = pb.getBodyInfo(body, physicsClientId=c)[0].decode()
        links = [j for j in [-1, *range(n)] if pb.getCollisionShapeData(body, j, physicsClientId=c)]
        pairs = [(a, b) for i, a in enumerate(links) for b in links[i + 1:] if parent.get(b) != a and parent.get(a) != b]
        rng = np.random.default_rng(0)
        lo, hi = np.clip(r.lower, -np.pi, np.pi), np.clip(r.upper, -np.pi, np.pi)
        always = set(pairs)
        g = d.gripper
        for _ in range(ALWAYS_SAMPLES):
            r.reset_arm(rng.uniform(lo, hi))
            r.reset_gripper(r.finger_targets(rng.uniform(*g.opening_m)))
            always = {(a, b) for a, b in always
                      if pb.getClosestPoints(body, body, 0.0, linkIndexA=a, linkIndexB=b, physicsClientId=c)}
            if not always:
                break
    finally:
        pb.disconnect(c)
    out = [(names[a], names[b]) for a, b in sorted(always)]
    pad_pair = tuple(d.gripper.pad_links)
    if pads_touch and pad_pair not in out and pad_pair[::-1] not in out:
        out.append(pad_pair)  # type: ignore[arg-type]
    return out


#: where ``ready`` puts the TCP, as fractions of the arm's reach: (ahead of the base, above it),
#: tried in order (the first, 0.34 and 0.54, is the Panda's ready: 0.307 m ahead, 0.485 m up)
READY_TARGETS = ((0.34, 0.54), (0.4, 0.4), (0.45, 0.3), (0.3, 0.3), (0.5, 0.5), (0.25, 0.6))


def _named_configurations(d: Any, allowed: Sequence[tuple[str, str]]) -> tuple[dict[str, list[float]], dict[str, str]]:
    """``ready`` (hand down in front of the base) and, when reachable, ``forward`` (hand level,
    pointing forward), each free of self-collision and above the base's plane; and the reasons."""
    from ..bullet.robots import LoadedRobot
    from .ik import solve_ik

    c = pb.connect(pb.DIRECT)
    named: dict[str, list[float]] = {}
    why: dict[str, str] = {}
    try:
        body = pb.loadURDF(d.urdf, useFixedBase=True, physicsClientId=c)
        r = LoadedRobot(c, body, d)
        r.reset_fingers(d.max_gap_m / 2)
        n = pb.getNumJoints(body, physicsClientId=c)
        parent = {j: pb.getJointInfo(body, j, physicsClientId=c)[16] for j in range(n)}
        names = {j: pb.getJointInfo(body, j, physicsClientId=c)[12].decode() for j in range(n)}
        names[-1] = pb.getBodyInfo(body, physicsClientId=c)[0].decode()
        ok_pairs = {frozenset(p) for p in allowed}
        links = [j for j in [-1, *range(n)] if pb.getCollisionShapeData(body, j, physicsClientId=c)]
        arm_moving = set()
        for j in range(n):
            k = j
            while k != -1:
                if k in r.arm_joints:
                    arm_moving.add(j)
                    break
                k = parent[k]
        base_z = r.link_pose(-1)[2, 3]

        def clear(q: np.ndarray) -> bool:
            r.reset_arm(q)
            for j in arm_moving:
                if pb.getAABB(body, j, physicsClientId=c)[0][2] < base_z - 0.005 and j in links:
                    return False
            for i, a in enumerate(links):
                for b in links[i + 1:]:
                    if parent.get(b) == a or parent.get(a) == b or frozenset((names[a], names[b])) in ok_pairs:
                        continue
                    if a not in arm_moving and b not in arm_moving:
                        continue
                    pts = pb.getClosestPoints(body, body, 0.0, linkIndexA=a, linkIndexB=b, physicsClientId=c)
                    if pts and min(p[8] for p in pts) < -PENETRATION_M:
                        return False
            return True

        rng = np.random.default_rng(0)
        lo, hi = np.clip(r.lower, -np.pi, np.pi), np.clip(r.upper, -np.pi, np.pi)
        mid = 0.5 * (lo + hi)
        seeds = [mid, np.zeros_like(mid).clip(lo, hi)] + [rng.uniform(lo, hi) for _ in range(60)]
        reach = max(d.reach_m, 0.3)

        def refine(T: np.ndarray, q0: np.ndarray) -> tuple[np.ndarray, float, float]:
            """Least squares on the TCP pose error (position, and 0.1 m per radian of rotation)
            within the joint limits: where PyBullet's IK stalls on the orientation."""
            from scipy.optimize import least_squares

            def residual(q: np.ndarray) -> np.ndarray:
                r.reset_arm(q)
                F = r.tcp_pose()
                dR = F[:3, :3].T @ T[:3, :3]
                rot = 0.5 * np.array([dR[2, 1] - dR[1, 2], dR[0, 2] - dR[2, 0], dR[1, 0] - dR[0, 1]])
                return np.concatenate([F[:3, 3] - T[:3, 3], 0.1 * (F[:3, :3] @ rot)])

            res = least_squares(residual, np.clip(q0, lo, hi), bounds=(lo, hi), xtol=1e-10, ftol=1e-12, max_nfev=200)
            r.reset_arm(res.x)
            e = r.tcp_errors(T)
            return res.x, e[0], e[1]

        def solve(T: np.ndarray) -> Optional[np.ndarray]:
            sols = []
            for s in seeds:
                sol = solve_ik(r, T, [s])
                q, ep, eo = sol.q, sol.position_error_m, sol.orientation_error_rad
                if not (ep < 1e-4 and eo < 1e-3) and ep < 0.05:
                    q, ep, eo = refine(T, q)
                if ep < 1e-4 and eo < 1e-3 and clear(q):
                    sols.append(q)
                if len(sols) >= 8:
                    break
            if not sols:
                return None
            # the most central posture, the first joint (the base's turn) nearest its middle
            span = np.maximum(hi - lo, 1e-3)
            return min(sols, key=lambda q: float(np.sum(np.abs(q - mid) / span) + 2.0 * abs(q[0] - mid[0]) / span[0]))

        base = r.link_pose(-1)
        # fingers down, finger travel along the base's y axis: either way round (a wrist whose last
        # joint turns less than a full turn reaches one of them)
        downs = (np.array([[1.0, 0, 0], [0, -1, 0], [0, 0, -1]]), np.array([[-1.0, 0, 0], [0, 1, 0], [0, 0, -1]]))

        def first_reached(rotations: Sequence[np.ndarray], position: Sequence[float]) -> Optional[np.ndarray]:
            """The :func:`solve` of the first TCP pose (each of ``rotations`` at ``position``, base
            frame, metres) that has one, or None."""
            for R in rotations:
                T = np.eye(4)
                T[:3, :3] = R
                T[:3, 3] = position
                q = solve(base @ T)
                if q is not None:
                    return q
            return None

        for fx, fz in READY_TARGETS:
            q = first_reached(downs, [fx * reach, 0.0, fz * reach])
            if q is not None:
                named["ready"] = [round(float(v), 4) for v in q]
                why["ready"] = (f"by IK: the TCP {fx * reach:.3f} m ahead of the base and {fz * reach:.3f} m above it, "
                                "fingers down, finger travel along the base's y axis, free of self-collision")
                break
        if "ready" not in named:
            raise RobotSetupError("no 'ready' configuration found: inverse kinematics put the hand down in front of "
                                  "the base nowhere free of self-collision",
                                  "check the arm joints' limits; give named_configurations.ready by hand")
        q = first_reached((np.array([[0.0, 0, 1], [1, 0, 0], [0, 1, 0]]), np.array([[0.0, 0, 1], [-1, 0, 0], [0, -1, 0]])),
                          [0.5 * reach, 0.0, 0.55 * reach])
        if q is not None:
            named["forward"] = [round(float(v), 4) for v in q]
            why["forward"] = (f"by IK: the TCP {0.5 * reach:.3f} m ahead, {0.55 * reach:.3f} m up, pointing forward, "
                              "finger travel vertical (open_door and open_drawer start there)")
    finally:
        pb.disconnect(c)
    return named, why


def _yaml(dr: Draft, pad_rpy: Sequence[Sequence[float]], urdf_value: Optional[str] = None,
          packages: Optional[Mapping[str, str]] = None) -> str:
    """The description file's text, every guess commented (``urdf_value``, ``packages``: written
    instead of the draft's, for a scratch copy)."""
    n = dr.notes
    urdf_value = dr.urdf_value if urdf_value is None else urdf_value
    packages = dr.packages if packages is None else packages
    lines = [f"# {dr.name}: drafted by 'ptm robots init' from {os.path.basename(dr.urdf_value)}.",
             "# Every value below is a guess from the URDF, with its reason. Check them, replace the GUESS ones by",
             "# your robot's data sheet, then run 'ptm robots check THIS_FILE'.",
             f"name: {dr.name}",
             f"description: {dr.name} ({len(dr.arm)} joints), drafted by ptm robots init",
             f"urdf: {urdf_value}"]
    if packages:
        lines.append("packages:                       # package:// folders, found next to or above the URDF")
        lines += [f"  {k}: {v}" for k, v in sorted(packages.items())]
    lines += ["arm:",
              f"  # {n.get('arm', '')}",
              f"  joints: [{', '.join(dr.arm)}]",
              "  # velocity_limits, effort_limits: the URDF's; acceleration_limits: 5 x the velocity limits",
              "tcp:",
              f"  # {n.get('tcp', '')}",
              f"  link: {dr.palm}",
              f"  pose: {{position: {_vec(dr.tcp[0])}, rpy_deg: {_vec(dr.tcp[1], 2)}}}",
              "gripper:"]
    if dr.driver:
        lines += [f"  # {n.get('driver', '')}", f"  driver: {dr.driver}"]
    else:
        lines += [f"  # {n.get('joints', '')}", f"  joints: [{', '.join(dr.joints)}]"]
    lines += [f"  palm_link: {dr.palm}              # the link the fingers hang from",
              "  # opening_m: the fingers' full travel (from the URDF's kinematics)",
              f"  default_force_n: {_fmt(dr.default_force_n, 1)}             # {n.get('force', '')}",
              "  pads:",
              f"    # {n.get('pads', '')}",
              f"    width_m: {_fmt(dr.pad_size[0])}",
              f"    length_m: {_fmt(dr.pad_size[1])}",
              "    fingers:"]
    for p, rpy in zip(dr.pads, pad_rpy):
        lines.append(f"      - {{link: {p.link}, pose: {{position: {_vec(p.position)}, rpy_deg: {_vec(rpy, 2)}}}}}")
    lines.append("named_configurations:")
    for k, v in dr.named.items():
        if k in n:
            lines.append(f"  # {n[k]}")
        lines.append(f"  {k}: {_vec(v)}")
    if dr.allowed:
        lines.append(f"# in contact in every one of {ALWAYS_SAMPLES} random configurations (or the pads, closed on nothing)")
        lines.append("allowed_collision_pairs:")
        lines += [f"  - [{a}, {b}]" for a, b in dr.allowed]
    return "\n".join(lines) + "\n"
