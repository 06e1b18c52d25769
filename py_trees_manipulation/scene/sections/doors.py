"""The ``doors:`` and ``cabinets:`` scene sections, parsed without a physics client (each door's and
cabinet's URDF is generated here). The keys are documented in :mod:`py_trees_manipulation.sim.doors`,
the simulator side; this module imports no PyBullet, so ``ptm validate`` checks a scene without
loading the simulator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from ...geometry.poses import Pose
from ..assets import BarHandle, CabinetAsset, DoorAsset, LeverHandle, cabinet_asset, door_asset
from ..spec import SceneError, _list, _mapping, _number, _pose, _string, _suggest, register_section

__all__ = ["DoorSpec", "CabinetSpec", "parse_doors", "parse_cabinets"]

PathT = tuple


# ================================================================================================
# Scene sections
# ================================================================================================
@dataclass(frozen=True)
class DoorSpec:
    """A parsed ``scene.doors[]`` entry: name, (4, 4) world pose of the model frame, the asset."""

    name: str
    pose: Pose
    asset: DoorAsset


@dataclass(frozen=True)
class CabinetSpec:
    """A parsed ``scene.cabinets[]`` entry: name, (4, 4) world pose of the model frame, the asset."""

    name: str
    pose: Pose
    asset: CabinetAsset


_DOOR_NUMBERS = {  # key -> (door_asset kwarg, bounds)
    "width_m": ("width_m", dict(gt=0.0, le=2.0, unit="m")),
    "height_m": ("height_m", dict(gt=0.0, le=3.0, unit="m")),
    "thickness_m": ("thickness_m", dict(gt=0.0, le=0.2, unit="m")),
    "hinge_damping": ("hinge_damping", dict(ge=0.0, unit="N*m*s/rad")),
    "hinge_friction": ("hinge_friction", dict(ge=0.0, unit="N*m")),
    "leaf_mass_kg": ("leaf_mass_kg", dict(gt=0.0, unit="kg")),
    "max_opening_deg": ("max_opening_deg", dict(gt=0.0, le=179.0, unit="deg")),
    "latch_release_deg": ("latch_release_deg", dict(gt=0.0, unit="deg")),
    "latch_holding_torque_nm": ("latch_holding_torque_nm", dict(ge=0.0, unit="N*m")),
}
_DOOR_BOOLS = ("latch", "locked")
_DOOR_KEYS = ("name", "pose", "hinge_side", "opening", "handle", *_DOOR_NUMBERS, *_DOOR_BOOLS)
_LEVER_KEYS = tuple(LeverHandle.__dataclass_fields__)

_CABINET_NUMBERS = {
    "width_m": ("width_m", dict(gt=0.0, le=3.0, unit="m")),
    "depth_m": ("depth_m", dict(gt=0.0, le=2.0, unit="m")),
    "height_m": ("height_m", dict(gt=0.0, le=3.0, unit="m")),
    "drawer_height_m": ("drawer_height_m", dict(gt=0.0, unit="m")),
    "drawer_travel_m": ("drawer_travel_m", dict(gt=0.0, unit="m")),
    "damping": ("drawer_damping", dict(ge=0.0, unit="N*s/m")),
    "friction": ("drawer_friction", dict(ge=0.0, unit="N")),
    "drawer_mass_kg": ("drawer_mass_kg", dict(gt=0.0, unit="kg")),
}
_CABINET_KEYS = ("name", "pose", "handle", *_CABINET_NUMBERS)
_BAR_KEYS = tuple(BarHandle.__dataclass_fields__)


def _check(d: Any, keys: tuple, path: PathT, what: str) -> None:
    for k in d:
        if k not in keys:
            raise SceneError(path + (k,), f"unknown key {k!r} in {what}; {_suggest(str(k), list(keys))}")


def _asset_error(e: ValueError, path: PathT, keys: tuple) -> SceneError:
    """Map a generator's ValueError (which names the parameter) to the scene key it came from."""
    msg = str(e)
    for k in sorted(keys, key=len, reverse=True):
        if msg.startswith(k) or f".{k}" in msg.split(" ")[0]:
            return SceneError(path + (k,), msg)
    return SceneError(path, msg)


def _name(d: Any, path: PathT, seen: dict) -> str:
    name = _string(d, "name", path)
    if name is None:
        raise SceneError(path, "missing required key 'name'")
    if not all(c.isalnum() or c in "_-" for c in name):
        raise SceneError(path + ("name",), f"name must be letters, digits, '_' or '-', got {name!r}")
    if name in seen:
        raise SceneError(path + ("name",), f"duplicate name {name!r} (also used by another door or cabinet)")
    seen[name] = path
    return name


def _parse_handle(v: Any, path: PathT, cls: type, keys: tuple) -> Any:
    d = _mapping(v, path, "a handle")
    _check(d, keys, path, "handle")
    kw = {}
    for k in keys:
        if k in d:
            kw[k] = _number(d, k, path)
    try:
        return cls(**kw)
    except ValueError as e:
        raise _asset_error(e, path, keys) from None


def _entries(value: Any, path: PathT, section: str, what: str, keys: tuple) -> Iterator[tuple[PathT, Any, str]]:
    """Each entry of the list section ``section``: ``(its path, its mapping, its name)``, its keys
    checked against ``keys`` and its name unique in the section (SceneError otherwise)."""
    seen: dict = {}
    for i, item in enumerate(_list(value, path, section)):
        p = path + (i,)
        d = _mapping(item, p, what)
        _check(d, keys, p, what)
        yield p, d, _name(d, p, seen)


def _numbers(d: Any, table: dict, path: PathT) -> dict[str, Any]:
    """The numbers ``d`` gives of ``table`` (scene key -> (generator argument, bounds)), checked
    against their bounds, by generator argument."""
    kw: dict[str, Any] = {}
    for key, (arg, bounds) in table.items():
        v = _number(d, key, path, **bounds)
        if v is not None:
            kw[arg] = v
    return kw


def parse_doors(value: Any, path: PathT) -> list[DoorSpec]:
    """Parse ``scene.doors`` (a list; keys in the module docs) and generate each door's URDF.

    Raises:
        SceneError: a bad key or value, with the path to it (e.g. ``doors[0].hinge_side``).
    """
    out = []
    for p, d, name in _entries(value, path, "doors", "a door", _DOOR_KEYS):
        kw = _numbers(d, _DOOR_NUMBERS, p)
        for key in _DOOR_BOOLS:
            if key in d:
                if not isinstance(d[key], bool):
                    raise SceneError(p + (key,), f"{key} must be true or false, got {d[key]!r}")
                kw[key] = d[key]
        for key, choices in (("hinge_side", ("left", "right")), ("opening", ("pull", "push"))):
            v = _string(d, key, p)
            if v is not None:
                if v not in choices:
                    raise SceneError(p + (key,), f"{key} must be {' or '.join(map(repr, choices))}, got {v!r}; "
                                     f"{_suggest(v, list(choices))}")
                kw[key] = v
        if "handle" in d:
            kw["handle"] = None if d["handle"] is None else _parse_handle(d["handle"], p + ("handle",), LeverHandle, _LEVER_KEYS)
            if kw["handle"] is None and "latch" not in kw:
                kw["latch"] = False
        pose = _pose(d, "pose", p, required=True)
        try:
            asset = door_asset(name=name, **kw)
        except ValueError as e:
            raise _asset_error(e, p, _DOOR_KEYS) from None
        out.append(DoorSpec(name, pose, asset))
    return out


def parse_cabinets(value: Any, path: PathT) -> list[CabinetSpec]:
    """Parse ``scene.cabinets`` (a list; keys in the module docs) and generate each URDF.

    Raises:
        SceneError: a bad key or value, with the path to it.
    """
    out = []
    for p, d, name in _entries(value, path, "cabinets", "a cabinet", _CABINET_KEYS):
        kw = _numbers(d, _CABINET_NUMBERS, p)
        if "handle" in d:
            kw["handle"] = _parse_handle(d["handle"], p + ("handle",), BarHandle, _BAR_KEYS)
        pose = _pose(d, "pose", p, required=True)
        try:
            asset = cabinet_asset(name=name, **kw)
        except ValueError as e:
            msg = str(e)
            for key, (arg, _) in _CABINET_NUMBERS.items():
                if msg.startswith(arg):
                    raise SceneError(p + (key,), msg) from None
            raise SceneError(p, msg) from None
        out.append(CabinetSpec(name, pose, asset))
    return out


register_section("doors", parse_doors, "hinged doors with a lever handle and a latch (list; see `sim/doors.py`)")
register_section("cabinets", parse_cabinets, "cabinets with a drawer (list; see `sim/doors.py`)")
