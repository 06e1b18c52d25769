"""How far a robot can reach at most, from its URDF alone (no simulator): for load-time warnings.

:func:`reach_bound_m` sums the lengths of the joint origins along the kinematic chain from the
URDF's root link to the TCP link (or the flange link plus ``tcp_offset_m``). By the triangle
inequality no configuration puts the TCP farther than that from the base frame's origin, so a
target beyond it is out of reach for certain; the bound is loose (the Panda's is 1.42 m from its base
frame, against a data-sheet reach of 0.855 m from the shoulder axis), which keeps the warning free of false alarms: it is
meant for targets *far* out of reach (a position in millimetres written as metres, a wrong frame).
"""

from __future__ import annotations

import functools
import math
import os
from typing import Any, Optional
from xml.etree import ElementTree as ET


@functools.lru_cache(maxsize=32)
def _chain_length(urdf_path: str, tip: str) -> Optional[float]:
    try:
        root = ET.parse(urdf_path).getroot()
    except (OSError, ET.ParseError):
        return None
    parent_of: dict[str, tuple[str, float]] = {}
    for j in root.findall("joint"):
        p, c = j.find("parent"), j.find("child")
        if p is None or c is None:
            continue
        origin = j.find("origin")
        try:
            xyz = [float(v) for v in (origin.get("xyz", "0 0 0") if origin is not None else "0 0 0").split()]
        except ValueError:
            return None
        parent_of[c.get("link", "")] = (p.get("link", ""), math.sqrt(sum(v * v for v in xyz[:3])))
    total, link, seen = 0.0, tip, set()
    if tip not in parent_of and tip not in {el.get("name") for el in root.findall("link")}:
        return None
    while link in parent_of and link not in seen:
        seen.add(link)
        link, length = parent_of[link]
        total += length
    return total


def reach_bound_m(model: Any) -> Optional[float]:
    """Upper bound of the TCP's distance from the robot's base frame, metres, or None (unknown).

    Args:
        model: a robot model with ``urdf`` (a path, or one under ``pybullet_data``),
            ``tcp_link_name``, ``flange_link_name`` and ``tcp_offset_m`` (sim/robots.py).
    """
    from .spec import resolve_urdf

    # a robot description's own URDF file (its `urdf` property writes a loadable copy: not needed here)
    urdf = getattr(model, "urdf_path", None) or getattr(model, "urdf", None)
    path = resolve_urdf(urdf) if isinstance(urdf, str) else None
    if path is None or not os.path.isfile(path):
        return None
    tcp = _chain_length(path, getattr(model, "tcp_link_name", "") or "")
    if tcp is not None:
        return tcp
    flange = _chain_length(path, getattr(model, "flange_link_name", "") or "")
    return None if flange is None else flange + abs(float(getattr(model, "tcp_offset_m", 0.0) or 0.0))
