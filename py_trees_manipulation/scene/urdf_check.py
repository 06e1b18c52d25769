"""A static check that a file is a URDF PyBullet can load, done when the task file is validated.

PyBullet's URDF importer (``examples/Importers/ImportURDFDemo/UrdfParser.cpp``) refuses a file
whose XML does not parse, whose root is not ``<robot>``, that has no ``<link>``, whose joints name
a parent or child link that does not exist, whose ``<inertial>`` lacks ``<mass value>`` or
``<inertia>``, or whose mesh file cannot be found ("failed to parse link"); ``loadURDF`` then
raises a bare ``pybullet.error: Cannot load URDF file.`` at run time. :func:`urdf_problem` finds
these with the standard library's XML parser (no simulator import), so ``ptm validate`` reports
them at the ``urdf:`` line.

Mesh files are looked up the way PyBullet does, leniently: as given (absolute), relative to the
URDF's folder and up to three folders above it, with a ``package://`` or ``file://`` prefix
stripped, and under ``pybullet_data``; a mesh found nowhere is a problem.
"""

from __future__ import annotations

import os
import xml.parsers.expat as expat
from typing import Optional
from xml.etree import ElementTree as ET

#: larger files are not URDFs a task file should load (the Panda's is 25 kB)
MAX_URDF_BYTES = 20_000_000


def _find_mesh(filename: str, urdf_dir: str) -> bool:
    name = filename
    for prefix in ("package://", "file://"):
        if name.startswith(prefix):
            name = name[len(prefix):]
    if os.path.isabs(name):
        return os.path.isfile(name)
    roots = [urdf_dir]
    d = urdf_dir
    for _ in range(3):
        d = os.path.dirname(d)
        roots.append(d)
    try:
        import pybullet_data

        roots.append(pybullet_data.getDataPath())
    except ImportError:  # pragma: no cover - pybullet is a dependency
        pass
    candidates = [name]
    if filename.startswith("package://") and "/" in name:
        candidates.append(name.split("/", 1)[1])  # package://PKG/meshes/x.stl -> meshes/x.stl
    return any(os.path.isfile(os.path.join(r, c)) for r in roots for c in candidates)


def urdf_problem(path: str) -> Optional[str]:
    """What makes ``path`` not a URDF that PyBullet loads, or ``None`` when it looks loadable.

    Args:
        path: an existing file.

    Returns:
        one sentence naming the problem (``"not XML: syntax error at line 1, column 0"``,
        ``"the root element is <foo>, not <robot>"``, ``"joint 'j' names child link 'b', which the
        file does not define"``...), or ``None``.
    """
    try:
        size = os.path.getsize(path)
        if size > MAX_URDF_BYTES:
            return f"{size / 1e6:.0f} MB is too large for a URDF"
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        return f"cannot read it: {e.strerror or e}"
    if b"<!DOCTYPE" in raw or b"<!ENTITY" in raw:
        return "DOCTYPE and entity declarations are not allowed in a URDF"
    # PyBullet's tinyxml2 tolerates blank lines before the XML declaration and trailing NUL bytes
    raw = raw.strip(b"\x00 \t\r\n")
    try:
        root = ET.fromstring(raw)
    except (ET.ParseError, expat.ExpatError) as e:
        return f"not XML ({e})" if str(e) else "not XML"
    except (ValueError, RecursionError):
        return "not XML"
    tag = root.tag
    if tag != "robot":
        return f"the root element is <{tag}>, not <robot>: not a URDF"
    links = [el.get("name") for el in root.findall("link")]
    if not links:
        return "it defines no <link>"
    if any(not n for n in links):
        return "a <link> has no name"
    known = set(links)
    for j in root.findall("joint"):
        jname = j.get("name", "?")
        for end in ("parent", "child"):
            el = j.find(end)
            ref = el.get("link") if el is not None else None
            if not ref:
                return f"joint {jname!r} has no <{end} link=...>"
            if ref not in known:
                return f"joint {jname!r} names {end} link {ref!r}, which the file does not define"
    for link in root.findall("link"):
        lname = link.get("name")
        inertial = link.find("inertial")
        if inertial is not None:
            mass = inertial.find("mass")
            try:
                float((mass.get("value") if mass is not None else None) or "")
            except ValueError:
                return f"link {lname!r}: <inertial> needs <mass value=\"kg\"> with a number"
            if inertial.find("inertia") is None:
                return f"link {lname!r}: <inertial> needs an <inertia> element"
        for mesh in link.iter("mesh"):
            fn = mesh.get("filename")
            if not fn:
                return f"link {lname!r}: a <mesh> has no filename"
            if not _find_mesh(fn, os.path.dirname(os.path.abspath(path))):
                return f"link {lname!r}: mesh file {fn!r} not found (relative to the URDF's folder)"
    return None
