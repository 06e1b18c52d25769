"""Parameter declarations: one per behaviour parameter, read by the loader, the schema and the docs.

A behaviour declares ``PARAMS = {"distance_m": Param("float", 0.1, unit="m", min=0.0, doc=...)}``.
That single declaration validates and coerces YAML values (with units: ``"10 cm"`` for a parameter
in metres), resolves blackboard references (``"{mug_pose}"``), and feeds the generated JSON Schema
and behaviour reference.

Kinds: ``float``, ``int``, ``bool``, ``str``, ``choice`` (one of ``choices``), ``pose`` (see
:func:`~py_trees_manipulation.geometry.poses.pose_from_spec`: quaternions ``(w, x, y, z)``),
``vector3`` (three numbers), ``float_list``, ``key`` (the name of a blackboard key the behaviour
writes), ``any``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ..geometry.poses import pose_from_spec


class _Required:
    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()

KINDS = ("float", "int", "bool", "str", "choice", "pose", "vector3", "float_list", "key", "any")

#: unit -> (dimension, factor to the SI unit of that dimension)
UNITS: dict[str, tuple[str, float]] = {
    "m": ("length", 1.0), "cm": ("length", 0.01), "mm": ("length", 0.001),
    "rad": ("angle", 1.0), "deg": ("angle", math.pi / 180.0),
    "N": ("force", 1.0), "kN": ("force", 1000.0),
    "s": ("time", 1.0), "ms": ("time", 0.001), "min": ("time", 60.0),
    "kg": ("mass", 1.0), "g": ("mass", 0.001),
    "m/s": ("speed", 1.0), "cm/s": ("speed", 0.01), "mm/s": ("speed", 0.001),
    "rad/s": ("angular speed", 1.0), "deg/s": ("angular speed", math.pi / 180.0),
    "Hz": ("frequency", 1.0),
    "m/s^2": ("acceleration", 1.0),
    "N/m": ("stiffness", 1.0),
    "N/(m/s^2)": ("hardness gain", 1.0),
    "N*m": ("torque", 1.0), "Nm": ("torque", 1.0),
}

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
#: a number followed by a unit (every unit starts with a letter: ``"1e308"`` is a number, not 1e30 of unit 8)
_QUANTITY = re.compile(r"^\s*(" + _NUMBER + r")\s*([A-Za-z][A-Za-z/^*()0-9]*)\s*$")
#: a number written as text: YAML 1.1 (PyYAML) reads an exponent without a dot (``1e308``) as a string
_NUMBER_TEXT = re.compile(r"^\s*" + _NUMBER + r"\s*$")
_REF = re.compile(r"^\{([A-Za-z_][A-Za-z0-9_/.\-]*)\}$")
_KEY = re.compile(r"^/?[A-Za-z_][A-Za-z0-9_/.\-]*$")


def _finite(v: float, text: str) -> float:
    if not math.isfinite(v):
        raise ParamError(f"expected a finite number, got {text!r}", "the number is too large for a float (|x| < 1.8e308)")
    return v


class ParamError(ValueError):
    """A parameter value does not fit its declaration. ``hint`` suggests the fix (may be empty)."""

    def __init__(self, message: str, hint: str = ""):
        super().__init__(message)
        self.hint = hint


class BlackboardReadError(ParamError, KeyError):
    """A ``"{key}"`` parameter cannot be read at run time: the key has no value yet, or its value
    does not fit the parameter. A ParamError (ValueError) and a KeyError, so code that catches
    either keeps working; a behaviour that lets it escape fails with its text as the feedback
    message (``ManipulationBehaviour.tick``), it does not crash the run."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class BlackboardRef:
    """A ``"{key}"`` parameter value: read the blackboard key at run time."""

    key: str

    def __str__(self) -> str:
        return "{" + self.key + "}"


@dataclass(frozen=True)
class Param:
    """Declaration of one behaviour parameter.

    Args:
        kind: one of :data:`KINDS`.
        default: the value when the file does not give one; :data:`REQUIRED` if it must.
        doc: one line for the docs and the schema.
        unit: the unit the behaviour receives the value in (``"m"``, ``"N"``, ``"deg"``...); a YAML
            string such as ``"10 cm"`` is converted to it, a unit of another dimension is an error.
        min, max: inclusive range, in ``unit``.
        choices: allowed values for ``choice``.
        length: required length of a ``float_list``.
        blackboard: the value may be a ``"{key}"`` blackboard reference.
        frame: for poses and vectors, the frame the value is expressed in (for docs).
        refers_to: a literal value names something in the scene, checked when the file is loaded:
            ``"object"``, ``"robot"`` (an arm or gripper), ``"configuration"`` (a named arm
            configuration), ``"door"``, ``"cabinet"``.
        names: for a ``float`` or a ``pose``: words accepted instead of a value, passed on as they
            are (the behaviour resolves them, e.g. ``"open"``: the gripper's full opening; ``"none"``).
    """

    kind: str
    default: Any = REQUIRED
    doc: str = ""
    unit: Optional[str] = None
    min: Optional[float] = None
    max: Optional[float] = None
    choices: Optional[tuple[Any, ...]] = None
    length: Optional[int] = None
    blackboard: bool = True
    frame: Optional[str] = None
    refers_to: Optional[str] = None
    names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown parameter kind {self.kind!r}; one of {KINDS}")
        if self.unit is not None and self.unit not in UNITS:
            raise ValueError(f"unknown unit {self.unit!r}")

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def describe_type(self) -> str:
        if self.kind == "choice":
            return "one of " + ", ".join(repr(c) for c in (self.choices or ()))
        text = {"float": "number", "int": "integer", "bool": "true/false", "str": "text",
                "pose": "pose", "vector3": "[x, y, z]", "float_list": "list of numbers",
                "key": "blackboard key", "any": "any value"}[self.kind]
        if self.unit:
            text += f" in {self.unit}"
        if self.names:
            text += " or " + " / ".join(repr(n) for n in self.names)
        return text

    # ------------------------------------------------------------------------------------------
    def coerce(self, value: Any) -> Any:
        """Validate and convert a YAML value; a ``"{key}"`` string becomes a :class:`BlackboardRef`.

        Raises:
            ParamError: the value does not fit (type, range, unit, choice).
        """
        if isinstance(value, str) and self.kind != "key":
            m = _REF.match(value.strip())
            if m:
                if not self.blackboard:
                    raise ParamError("this parameter cannot come from the blackboard", "give a literal value")
                return BlackboardRef(m.group(1))
        return self.coerce_value(value)

    def coerce_value(self, value: Any) -> Any:
        """Like :meth:`coerce` for a literal value (also used on values read off the blackboard)."""
        k = self.kind
        if value is None and not self.required and self.default is None:
            return None
        if k == "any":
            return value
        if k == "bool":
            if not isinstance(value, bool):
                raise ParamError(f"expected true or false, got {value!r}")
            return value
        if k == "int":
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
                raise ParamError(f"expected an integer, got {value!r}")
            self._check_range(int(value))
            return int(value)
        if k == "float":
            if self.names and isinstance(value, str) and value.strip() in self.names:
                return value.strip()
            v = self._number(value)
            self._check_range(v)
            return v
        if k == "str":
            if not isinstance(value, str):
                raise ParamError(f"expected text, got {value!r}", "quote it")
            return value
        if k == "choice":
            choices = self.choices or ()
            if value not in choices:
                import difflib

                close = difflib.get_close_matches(str(value), [str(c) for c in choices], n=1, cutoff=0.4)
                raise ParamError(
                    f"{value!r} is not one of {', '.join(repr(c) for c in choices)}",
                    f"did you mean {close[0]!r}?" if close else "",
                )
            return value
        if k == "key":
            if not isinstance(value, str) or not _KEY.match(value.strip("{}")):
                raise ParamError(f"expected a blackboard key name, got {value!r}", "use letters, digits and _ (e.g. mug_pose)")
            return value.strip("{}").lstrip("/")  # every key lives in the root namespace: "/x" is "x"
        if k == "pose":
            if self.names and isinstance(value, str) and value.strip() in self.names:
                return value.strip()
            try:
                return pose_from_spec(value)
            except ValueError as e:
                raise ParamError(str(e)) from None
        if k in ("vector3", "float_list"):
            if isinstance(value, (str, bytes, dict)) or not hasattr(value, "__len__"):
                raise ParamError(f"expected a list of numbers, got {value!r}")
            out = [self._number(v) for v in value]
            n = 3 if k == "vector3" else self.length
            if n is not None and len(out) != n:
                raise ParamError(f"expected {n} numbers, got {len(out)}")
            for v in out:
                self._check_range(v)
            return out
        raise ParamError(f"cannot handle kind {k}")  # pragma: no cover

    def _number(self, value: Any) -> float:
        if isinstance(value, bool):
            raise ParamError(f"expected a number, got {value!r}")
        if isinstance(value, (int, float, np.integer, np.floating)):
            v = float(value)
            if not math.isfinite(v):
                raise ParamError(f"expected a finite number, got {value!r}")
            return v
        if isinstance(value, str):
            if _NUMBER_TEXT.match(value):
                return _finite(float(value), value)
            m = _QUANTITY.match(value)
            if m:
                number, unit = _finite(float(m.group(1)), value), m.group(2)
                if unit not in UNITS:
                    raise ParamError(f"unknown unit {unit!r} in {value!r}", f"known units: {', '.join(UNITS)}")
                if self.unit is None:
                    raise ParamError(f"this parameter takes a plain number, got {value!r}", f"write {number:g}")
                dim_v, f_v = UNITS[unit]
                dim_p, f_p = UNITS[self.unit]
                if dim_v != dim_p:
                    raise ParamError(
                        f"unit {unit!r} ({dim_v}) does not fit this parameter ({dim_p}, in {self.unit})",
                        f"give a {dim_p} such as '1 {self.unit}'",
                    )
                return _finite(number * f_v / f_p, value)
        raise ParamError(f"expected a number{' in ' + self.unit if self.unit else ''}, got {value!r}")

    def _check_range(self, v: float) -> None:
        u = f" {self.unit}" if self.unit else ""
        if self.min is not None and v < self.min:
            raise ParamError(f"{v:g}{u} is below the minimum {self.min:g}{u}")
        if self.max is not None and v > self.max:
            raise ParamError(f"{v:g}{u} is above the maximum {self.max:g}{u}")

    def to_json_default(self) -> Any:
        if self.required:
            return None
        d = self.default
        if isinstance(d, np.ndarray):
            return d.tolist()
        return d
