"""A URDF read with ``xml.etree``: link and joint names, the kinematic tree, limits, mesh files.

What the robot description checks need without a physics engine: which links and joints exist
(with their type, parent and child), the joint origins and axes (forward kinematics for the reach
and for named configurations), the joint limits, ``<mimic>`` tags, and the mesh files the URDF
names. ``package://`` mesh URIs are resolved with a ``{package: folder}`` map
(``pybullet_data`` is always known); :func:`loadable_urdf` writes a copy with every mesh path made
absolute, which PyBullet loads from anywhere.

Frames and units as in the URDF specification (http://wiki.ros.org/urdf/XML): metres, radians;
a joint's ``origin`` is the child frame in the parent frame, ``rpy`` fixed-axis x-y-z.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from typing import Mapping, Optional, Sequence

import numpy as np

__all__ = ["UrdfError", "UrdfJoint", "UrdfGeometry", "UrdfLinkInfo", "UrdfModel", "parse_urdf", "pybullet_data_path", "resolve_mesh",
           "loadable_urdf", "JOINT_TYPES"]

JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")


class UrdfError(ValueError):
    """A URDF that cannot be read. ``line`` (1-based, 0 when unknown) points into the URDF."""

    def __init__(self, path: str, message: str, line: int = 0):
        self.path = path
        self.line = line
        self.message = message
        super().__init__(f"{path}{':' + str(line) if line else ''}: {message}")


@dataclass(frozen=True)
class UrdfJoint:
    """One ``<joint>``.

    Attributes:
        name, type: as in the URDF (type one of :data:`JOINT_TYPES`).
        parent, child: link names.
        origin: (4, 4) child joint frame in the parent link frame.
        axis: unit axis in the joint frame, shape (3,).
        lower, upper: position limits (m or rad); ``-inf``/``inf`` when absent (continuous).
        effort: effort limit (N or N m), velocity: velocity limit (m/s or rad/s); 0 when absent.
        mimic: ``(joint, multiplier, offset)`` of a ``<mimic>`` tag, or None.
    """

    name: str
    type: str
    parent: str
    child: str
    origin: np.ndarray = field(repr=False, compare=False)
    axis: tuple[float, float, float] = (1.0, 0.0, 0.0)
    lower: float = -np.inf
    upper: float = np.inf
    effort: float = 0.0
    velocity: float = 0.0
    mimic: Optional[tuple[str, float, float]] = None

    @property
    def movable(self) -> bool:
        return self.type not in ("fixed",)

    def motion(self, q: float) -> np.ndarray:
        """(4, 4) motion of the child frame at joint position ``q`` (m or rad), joint frame."""
        T = np.eye(4)
        a = np.array(self.axis, dtype=float)
        if self.type in ("revolute", "continuous"):
            T[:3, :3] = _axis_angle(a, q)
        elif self.type == "prismatic":
            T[:3, 3] = a * q
        return T


def _axis_angle(axis: np.ndarray, angle: float) -> np.ndarray:
    n = float(np.linalg.norm(axis))
    if n == 0.0:
        return np.eye(3)
    x, y, z = axis / n
    c, s = np.cos(angle), np.sin(angle)
    C = 1.0 - c
    return np.array([[c + x * x * C, x * y * C - z * s, x * z * C + y * s],
                     [y * x * C + z * s, c + y * y * C, y * z * C - x * s],
                     [z * x * C - y * s, z * y * C + x * s, c + z * z * C]])


def _rpy_matrix(r: float, p: float, y: float) -> np.ndarray:
    """URDF ``rpy``: fixed-axis roll about x, then pitch about y, then yaw about z (R = Rz Ry Rx)."""
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


@dataclass(frozen=True)
class UrdfGeometry:
    """One ``<collision>`` (or ``<visual>``) geometry of a link.

    Attributes:
        kind: ``"box"``, ``"cylinder"``, ``"sphere"`` or ``"mesh"``.
        origin: (4, 4) geometry frame in the link frame.
        size: box ``(x, y, z)``; cylinder ``(radius, length)``; sphere ``(radius,)``; mesh ``scale``
            ``(sx, sy, sz)``; metres.
        filename: the mesh's ``filename`` as written (``""`` for primitives).
        path: the mesh file resolved (None when it cannot be, or for primitives).
    """

    kind: str
    origin: np.ndarray = field(repr=False, compare=False)
    size: tuple[float, ...] = ()
    filename: str = ""
    path: Optional[str] = None


@dataclass(frozen=True)
class UrdfLinkInfo:
    """What a link declares besides its name.

    Attributes:
        mass: ``<inertial><mass value>``, kg (None: no ``<inertial>``).
        collisions: its ``<collision>`` geometries.
        contact: the ``<contact>`` values PyBullet reads (``stiffness``, ``damping``,
            ``lateral_friction``, ...) by tag name; empty when the link has none.
    """

    mass: Optional[float] = None
    collisions: tuple[UrdfGeometry, ...] = ()
    contact: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, eq=False)
class UrdfModel:
    """A parsed URDF.

    Attributes:
        path: absolute path of the URDF file.
        name: the ``<robot name>``.
        links: link names, file order.
        joints: joints by name, file order.
        root: the link that is no joint's child (the base link).
        meshes: ``(filename as written, resolved absolute path or None)`` of every ``<mesh>``.
        joint_lines: 1-based line of each ``<joint>`` element (for messages), by name.
        link_info: mass, collision geometry and contact values of each link, by name.
        link_lines: 1-based line of each ``<link>`` element, by name.
    """

    path: str
    name: str
    links: tuple[str, ...]
    joints: dict[str, UrdfJoint]
    root: str
    meshes: tuple[tuple[str, Optional[str]], ...] = ()
    joint_lines: dict[str, int] = field(default_factory=dict)
    link_info: dict[str, UrdfLinkInfo] = field(default_factory=dict)
    link_lines: dict[str, int] = field(default_factory=dict)

    # ---- the tree -------------------------------------------------------------------------------
    @functools.cached_property
    def parent_joint(self) -> dict[str, UrdfJoint]:
        """The joint whose child is each link (the root has none), by link name."""
        return {j.child: j for j in self.joints.values()}

    def ancestors(self, link: str) -> list[str]:
        """Links from ``link``'s parent up to the root, nearest first."""
        out = []
        while link in self.parent_joint:
            link = self.parent_joint[link].parent
            out.append(link)
        return out

    def is_descendant(self, link: str, ancestor: str) -> bool:
        """True when ``link`` is ``ancestor`` or lies below it in the kinematic tree."""
        return link == ancestor or ancestor in self.ancestors(link)

    def chain(self, link: str, base: Optional[str] = None) -> list[UrdfJoint]:
        """Joints from ``base`` (default: the root) down to ``link``, base first.

        Raises:
            ValueError: ``link`` is not below ``base``.
        """
        base = self.root if base is None else base
        out: list[UrdfJoint] = []
        cur = link
        while cur != base:
            j = self.parent_joint.get(cur)
            if j is None:
                raise ValueError(f"link {link!r} is not below {base!r}")
            out.append(j)
            cur = j.parent
        return out[::-1]

    def link_pose(self, link: str, positions: Optional[Mapping[str, float]] = None, base: Optional[str] = None) -> np.ndarray:
        """(4, 4) pose of ``link``'s frame in ``base``'s frame (default: the root) with the joints at
        ``positions`` (by name, m or rad; others at 0; a ``<mimic>`` joint not given follows its
        leader, which may itself be a mimic joint: see :meth:`joint_value`)."""
        q = dict(positions or {})
        T = np.eye(4)
        for j in self.chain(link, base):
            T = T @ j.origin @ j.motion(self.joint_value(j.name, q))
        return T

    def joint_value(self, name: str, positions: Mapping[str, float]) -> float:
        """Position of joint ``name`` (m or rad) given ``positions``: its own entry, else (a
        ``<mimic>`` joint) ``multiplier x leader + offset`` with the leader resolved the same way
        (mimics of mimics), else 0. A mimic cycle or a leader the URDF lacks counts as 0."""
        v = positions.get(name)
        if v is not None:
            return float(v)
        scale, offset, seen = 1.0, 0.0, {name}
        j = self.joints.get(name)
        while j is not None and j.mimic is not None:
            leader, m, off = j.mimic
            offset += scale * off
            scale *= m
            if leader in positions:
                return scale * float(positions[leader]) + offset
            if leader in seen:
                break
            seen.add(leader)
            j = self.joints.get(leader)
        return offset if j is not None and j.mimic is None else 0.0

    def mimic_root(self, name: str) -> tuple[str, float, float]:
        """``(root, multiplier, offset)``: the joint that ``name`` follows through its chain of
        ``<mimic>`` tags (``name`` itself, 1, 0 for a joint that mimics none), such that
        ``q[name] = multiplier x q[root] + offset``.

        Raises:
            ValueError: the mimic chain names a joint the URDF lacks, or loops.
        """
        scale, offset, seen = 1.0, 0.0, [name]
        j = self.joints[name]
        while j.mimic is not None:
            leader, m, off = j.mimic
            if leader not in self.joints:
                raise ValueError(f"joint {j.name!r} mimics {leader!r}, which the URDF does not have")
            if leader in seen:
                raise ValueError("the <mimic> tags loop: " + " -> ".join(seen + [leader]))
            offset += scale * off
            scale *= m
            seen.append(leader)
            j = self.joints[leader]
        return j.name, scale, offset

    def mimic_followers(self, leader: str) -> list[UrdfJoint]:
        """Every joint that follows ``leader`` through ``<mimic>`` tags, directly or through other
        mimic joints, each after its own leader (file order otherwise). Joints whose chain is broken
        (an unknown leader, a loop) are left out."""
        out: list[UrdfJoint] = []
        known = {leader}
        pending = [j for j in self.joints.values() if j.mimic is not None and j.name != leader]
        while True:
            ready = [j for j in pending if j.mimic is not None and j.mimic[0] in known]
            if not ready:
                return out
            for j in ready:
                out.append(j)
                known.add(j.name)
            pending = [j for j in pending if j.name not in known]

    def joints_of_kind(self, movable: Optional[bool] = None) -> list[str]:
        """Joint names (file order); ``movable=True`` only non-fixed ones, ``False`` only fixed ones."""
        return [n for n, j in self.joints.items() if movable is None or j.movable == movable]


# ------------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def pybullet_data_path() -> str:
    """The folder of the ``pybullet_data`` package (found without importing pybullet)."""
    import importlib.util

    spec = importlib.util.find_spec("pybullet_data")
    if spec is None or not spec.submodule_search_locations:
        raise UrdfError("pybullet_data", "the pybullet_data package is not installed")
    return os.path.abspath(list(spec.submodule_search_locations)[0])


_PACKAGE_RE = re.compile(r"^package://([^/]+)/(.*)$")


def resolve_mesh(filename: str, urdf_dir: str, packages: Mapping[str, str]) -> tuple[Optional[str], str]:
    """(absolute path or None, reason) of a ``<mesh filename>``.

    ``package://NAME/rest`` is looked up in ``packages`` (``pybullet_data`` is always known); an
    unknown ``NAME`` is tried as a folder next to the URDF, as PyBullet does (pybullet_data's
    ``panda.urdf`` writes ``package://meshes/...``); ``file://`` and absolute paths are taken as they
    are; other paths are relative to the URDF's folder. The reason says why a path could not be
    resolved (unknown package, no such file).
    """
    m = _PACKAGE_RE.match(filename)
    if m:
        pkg, rest = m.group(1), m.group(2)
        roots = dict(packages)
        roots.setdefault("pybullet_data", pybullet_data_path())
        if pkg in roots:
            path = os.path.join(roots[pkg], rest)
        elif os.path.isfile(os.path.join(urdf_dir, pkg, rest)):
            path = os.path.join(urdf_dir, pkg, rest)
        else:
            return None, f"unknown package {pkg!r} (known: {', '.join(sorted(roots))}; add it under 'packages:')"
    elif filename.startswith("file://"):
        path = filename[len("file://"):]
    else:
        path = filename if os.path.isabs(filename) else os.path.join(urdf_dir, filename)
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        return None, f"no such file {path}"
    return path, ""


def _floats(text: Optional[str], n: int, default: Sequence[float], path: str, line: int, what: str) -> list[float]:
    if text is None:
        return list(default)
    try:
        v = [float(x) for x in text.split()]
    except ValueError:
        raise UrdfError(path, f"{what} must be {n} numbers, got {text!r}", line) from None
    if len(v) != n:
        raise UrdfError(path, f"{what} must be {n} numbers, got {text!r}", line)
    return v


def _element_lines(text: str, tag: str) -> dict[str, int]:
    """1-based line of each ``<tag name="...">`` (ElementTree keeps no line numbers)."""
    out: dict[str, int] = {}
    for m in re.finditer(rf"<{tag}\b[^>]*\bname\s*=\s*[\"']([^\"']*)[\"']", text):
        out.setdefault(m.group(1), text.count("\n", 0, m.start()) + 1)
    return out


@functools.lru_cache(maxsize=32)
def _parse_cached(path: str, mtime: float, packages: tuple[tuple[str, str], ...]) -> UrdfModel:
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        root = ET.fromstring(text)
    except ET.ParseError as e:
        raise UrdfError(path, f"malformed XML: {e}", getattr(e, "position", (0, 0))[0]) from None
    if root.tag != "robot":
        raise UrdfError(path, f"the root element is <{root.tag}>, not <robot>", 1)
    joint_lines = _element_lines(text, "joint")
    links = tuple(str(el.get("name")) for el in root.findall("link"))
    if not links:
        raise UrdfError(path, "the URDF has no <link>", 1)
    joints: dict[str, UrdfJoint] = {}
    for el in root.findall("joint"):
        name = str(el.get("name"))
        line = joint_lines.get(name, 0)
        typ = str(el.get("type"))
        parent, child = el.find("parent"), el.find("child")
        if parent is None or child is None:
            raise UrdfError(path, f"joint {name!r} needs <parent link=...> and <child link=...>", line)
        o = el.find("origin")
        xyz = _floats(o.get("xyz") if o is not None else None, 3, (0, 0, 0), path, line, f"joint {name!r} origin xyz")
        rpy = _floats(o.get("rpy") if o is not None else None, 3, (0, 0, 0), path, line, f"joint {name!r} origin rpy")
        T = np.eye(4)
        T[:3, :3] = _rpy_matrix(*rpy)
        T[:3, 3] = xyz
        a = el.find("axis")
        axis = _floats(a.get("xyz") if a is not None else None, 3, (1, 0, 0), path, line, f"joint {name!r} axis")
        lim = el.find("limit")
        lower, upper, effort, velocity = -np.inf, np.inf, 0.0, 0.0
        if lim is not None:
            try:
                effort = float(lim.get("effort", 0.0))
                velocity = float(lim.get("velocity", 0.0))
                if typ != "continuous":
                    lower = float(lim.get("lower", 0.0))
                    upper = float(lim.get("upper", 0.0))
            except ValueError:
                raise UrdfError(path, f"joint {name!r}: <limit> values must be numbers", line) from None
        mim = el.find("mimic")
        mimic = None
        if mim is not None:
            try:
                mimic = (str(mim.get("joint")), float(mim.get("multiplier", 1.0)), float(mim.get("offset", 0.0)))
            except ValueError:
                raise UrdfError(path, f"joint {name!r}: <mimic> multiplier and offset must be numbers", line) from None
        joints[name] = UrdfJoint(name, typ, str(parent.get("link")), str(child.get("link")), T,
                                 (axis[0], axis[1], axis[2]), lower, upper, effort, velocity, mimic)
    children = {j.child for j in joints.values()}
    roots = [ln for ln in links if ln not in children]
    if len(roots) != 1:
        raise UrdfError(path, f"the URDF must have one root link, found {roots or 'none (a loop)'}")
    folder = os.path.dirname(path)
    pk = dict(packages)
    meshes = tuple((str(m.get("filename")), resolve_mesh(str(m.get("filename")), folder, pk)[0])
                   for m in root.iter("mesh"))
    link_lines = _element_lines(text, "link")
    info = {str(el.get("name")): _link_info(el, path, link_lines.get(str(el.get("name")), 0), folder, pk)
            for el in root.findall("link")}
    return UrdfModel(path=path, name=str(root.get("name", "")), links=links, joints=joints, root=roots[0],
                     meshes=meshes, joint_lines=joint_lines, link_info=info, link_lines=link_lines)


def _origin(el: Optional[ET.Element], path: str, line: int, what: str) -> np.ndarray:
    o = el.find("origin") if el is not None else None
    xyz = _floats(o.get("xyz") if o is not None else None, 3, (0, 0, 0), path, line, f"{what} origin xyz")
    rpy = _floats(o.get("rpy") if o is not None else None, 3, (0, 0, 0), path, line, f"{what} origin rpy")
    T = np.eye(4)
    T[:3, :3] = _rpy_matrix(*rpy)
    T[:3, 3] = xyz
    return T


def _link_info(el: ET.Element, path: str, line: int, folder: str, packages: Mapping[str, str]) -> UrdfLinkInfo:
    name = str(el.get("name"))
    mass = None
    inertial = el.find("inertial")
    if inertial is not None and inertial.find("mass") is not None:
        try:
            mass = float(inertial.find("mass").get("value", "0"))  # type: ignore[union-attr]
        except ValueError:
            raise UrdfError(path, f"link {name!r}: <mass value> must be a number", line) from None
    geoms = []
    for col in el.findall("collision"):
        g = col.find("geometry")
        if g is None or not len(g):
            continue
        shape = g[0]
        T = _origin(col, path, line, f"link {name!r} collision")
        what = f"link {name!r} collision {shape.tag}"
        if shape.tag == "box":
            geoms.append(UrdfGeometry("box", T, tuple(_floats(shape.get("size"), 3, (0, 0, 0), path, line, what + " size"))))
        elif shape.tag in ("cylinder", "capsule"):
            r = _floats(shape.get("radius"), 1, (0,), path, line, what + " radius")[0]
            ln = _floats(shape.get("length"), 1, (0,), path, line, what + " length")[0]
            geoms.append(UrdfGeometry("cylinder", T, (r, ln)))
        elif shape.tag == "sphere":
            geoms.append(UrdfGeometry("sphere", T, tuple(_floats(shape.get("radius"), 1, (0,), path, line, what + " radius"))))
        elif shape.tag == "mesh":
            fn = str(shape.get("filename", ""))
            sc = shape.get("scale")
            scale = _floats(sc, 3, (1, 1, 1), path, line, what + " scale") if sc is None or len(sc.split()) == 3 else \
                [_floats(sc, 1, (1,), path, line, what + " scale")[0]] * 3
            geoms.append(UrdfGeometry("mesh", T, tuple(scale), fn, resolve_mesh(fn, folder, packages)[0]))
    contact: dict[str, float] = {}
    c = el.find("contact")
    if c is not None:
        for sub in c:
            try:
                contact[sub.tag] = float(sub.get("value", "nan"))
            except ValueError:
                raise UrdfError(path, f"link {name!r}: <contact><{sub.tag} value> must be a number", line) from None
    return UrdfLinkInfo(mass=mass, collisions=tuple(geoms), contact=contact)


def parse_urdf(path: str, packages: Optional[Mapping[str, str]] = None) -> UrdfModel:
    """Read a URDF file (cached by path and modification time).

    Args:
        path: the URDF file.
        packages: ``{package name: folder}`` for ``package://`` mesh URIs (``pybullet_data`` is known).

    Raises:
        UrdfError: unreadable file, malformed XML, not a ``<robot>``, a joint without parent or child,
            non-numeric attributes, no single root link.
    """
    path = os.path.abspath(path)
    try:
        mtime = os.path.getmtime(path)
    except OSError as e:
        raise UrdfError(path, f"cannot read the URDF: {e.strerror or e}") from None
    return _parse_cached(path, mtime, tuple(sorted((packages or {}).items())))


_MESH_ATTR_RE = re.compile(r"(<mesh\b[^>]*\bfilename\s*=\s*)([\"'])([^\"']*)\2")


def loadable_urdf(path: str, packages: Optional[Mapping[str, str]] = None, cache_dir: Optional[str] = None) -> str:
    """A URDF file PyBullet can load from any working directory: ``path`` itself when it names no
    ``package://`` mesh, else a copy (in ``cache_dir``, default a per-user temporary folder) with
    every mesh filename replaced by its absolute path.

    The copy is named after a hash of the source text and the package folders, written atomically
    (several processes may load the same robot at once) and reused while it is current.

    Raises:
        UrdfError: the file cannot be read, or a ``package://`` URI names an unknown package.
    """
    path = os.path.abspath(path)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except OSError as e:
        raise UrdfError(path, f"cannot read the URDF: {e.strerror or e}") from None
    if "package://" not in text:
        return path
    pk = dict(packages or {})
    pk.setdefault("pybullet_data", pybullet_data_path())
    folder = os.path.dirname(path)

    def repl(m: "re.Match[str]") -> str:
        resolved, why = resolve_mesh(m.group(3), folder, pk)
        if resolved is None:
            line = text.count("\n", 0, m.start()) + 1
            raise UrdfError(path, f"mesh {m.group(3)!r}: {why}", line)
        return f"{m.group(1)}{m.group(2)}{resolved}{m.group(2)}"

    out = _MESH_ATTR_RE.sub(repl, text)
    digest = hashlib.sha1((out + repr(sorted(pk.items()))).encode("utf-8")).hexdigest()[:12]
    cache = cache_dir or os.path.join(tempfile.gettempdir(), f"py_trees_manipulation-{os.getuid() if hasattr(os, 'getuid') else 'user'}", "urdf")
    os.makedirs(cache, exist_ok=True)
    target = os.path.join(cache, f"{os.path.splitext(os.path.basename(path))[0]}-{digest}.urdf")
    if not os.path.isfile(target):
        fd, tmp = tempfile.mkstemp(dir=cache, suffix=".urdf.tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(out)
        os.replace(tmp, target)
    return target
