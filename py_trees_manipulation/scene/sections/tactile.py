"""The ``tactile:`` scene section (simulated PR2 fingertip arrays, palm accelerometer, controller
settings), parsed without a physics client. The keys are documented in
:mod:`py_trees_manipulation.sim.tactile_sensor`, the simulator side; this module imports no
PyBullet, so ``ptm validate`` checks a scene without loading the simulator.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Optional

from ...control.gripper_controller import ControllerParams
from ..spec import SceneError, register_section

__all__ = ["SECTION", "FAULT_KINDS", "FAULT_FINGERS", "SensorFault", "TactileConfig", "parse_tactile"]

SECTION = "tactile"
FAULT_KINDS = ("dropout", "frozen", "noise", "stopped")
FAULT_FINGERS = ("left", "right", "both")


@dataclass(frozen=True)
class SensorFault:
    """One ``tactile.faults[]`` entry: a fingertip array fault injected at sim time ``at_s``.

    Attributes:
        at_s: sim time the fault begins, s.
        finger: ``left``, ``right`` or ``both``.
        kind: ``dropout`` (every cell reads 0: jsk_robot#977), ``frozen`` (the last frame before
            the fault, repeated), ``noise`` (Gaussian noise of ``amplitude_n`` per cell added to the
            signal: a degraded sensor that still works) or ``stopped`` (no more frames).
        duration_s: how long it lasts, s (None: to the end of the run).
        amplitude_n: ``noise`` only: standard deviation per cell, N.
        gripper: the gripper it applies to (None: every gripper).
    """

    at_s: float
    finger: str
    kind: str
    duration_s: Optional[float] = None
    amplitude_n: float = 0.05
    gripper: Optional[str] = None

    def active(self, t: float) -> bool:
        """The fault is on at sim time ``t``."""
        return t >= self.at_s - 1e-9 and (self.duration_s is None or t < self.at_s + self.duration_s - 1e-9)

    def fingers(self) -> tuple[int, ...]:
        """Finger indices (0 left, 1 right) it affects."""
        return (0, 1) if self.finger == "both" else ((0,) if self.finger == "left" else (1,))


@dataclass(frozen=True)
class TactileConfig:
    """The ``tactile:`` scene section (see the module docstring for the meaning of each key)."""

    enabled: bool = True
    frame_period_s: float = 0.041
    sample_period_s: float = 0.005
    noise_n: float = 0.002
    baseline_n: float = 0.02
    slip_gain_n_per_mps: float = 10.0
    slip_vibration_max_n: float = 0.5
    stick_slip_fraction: float = 0.03
    slip_event_speed_mps: float = 0.005
    crush_time_s: float = 0.05
    velocity_gain: float = 5000.0
    friction_effort: float = 0.0
    max_effort_n: Optional[float] = None
    max_finger_speed_mps: float = 0.1
    finger_contact_stiffness: Optional[float] = None
    finger_contact_damping: Optional[float] = None
    wrist_mode_hz: float = 30.0
    wrist_mode_damping_ratio: float = 0.05
    controller: dict[str, Any] = field(default_factory=dict)
    faults: tuple[SensorFault, ...] = ()

    def controller_params(self, max_gap_m: float, min_gap_m: float = 0.0) -> ControllerParams:
        """``ControllerParams.for_gripper(max_gap_m, min_gap_m)`` (Grab and Release open to the
        gripper's full opening) with the simulation gains, the frame period, the sensor-loss
        checks (``sensor_timeout`` five frame periods, at least 0.2 s; ``sensor_frozen_time``
        0.25 s when the cells carry noise, whose frames never repeat) and the overrides."""
        values: dict[str, Any] = {"velocity_gain": self.velocity_gain, "friction_effort": self.friction_effort,
                                  "pressure_frame_period": self.frame_period_s,
                                  "sensor_timeout": max(0.2, 5.0 * self.frame_period_s),
                                  "sensor_frozen_time": max(0.25, 6.0 * self.frame_period_s) if self.noise_n > 0 else 0.0}
        values.update(self.controller)
        return ControllerParams.for_gripper(max_gap_m, min_gap_m, **values)


_LIMITS = {"frame_period_s": (0.001, 1.0), "sample_period_s": (0.0005, 0.1), "noise_n": (0.0, 1.0),
           "baseline_n": (0.0, 10.0), "slip_gain_n_per_mps": (0.0, 1e4), "slip_vibration_max_n": (0.0, 100.0),
           "stick_slip_fraction": (0.0, 1.0),
           "slip_event_speed_mps": (0.0, 10.0), "crush_time_s": (0.0, 10.0), "velocity_gain": (0.0, 1e5),
           "friction_effort": (0.0, 100.0), "max_effort_n": (0.1, 1000.0), "max_finger_speed_mps": (0.001, 10.0),
           "finger_contact_stiffness": (1.0, 1e9), "finger_contact_damping": (0.0, 1e6),
           "wrist_mode_hz": (0.0, 1000.0), "wrist_mode_damping_ratio": (0.0, 1.0)}


def parse_tactile(value: Any, path: tuple) -> TactileConfig:
    """Validate the ``tactile:`` section. Raises SceneError with the path of the bad key."""
    if value is None:
        return TactileConfig()
    if not isinstance(value, dict):
        raise SceneError(path, f"tactile must be a mapping of settings, got {type(value).__name__}")
    known = {f.name for f in dataclasses.fields(TactileConfig)}
    out: dict[str, Any] = {}
    for key, v in value.items():
        if key not in known:
            import difflib

            close = difflib.get_close_matches(str(key), sorted(known), n=1)
            hint = f"did you mean {close[0]!r}?" if close else f"keys: {', '.join(sorted(known))}"
            raise SceneError(path + (key,), f"unknown tactile key {key!r}; {hint}")
        if key == "enabled":
            if not isinstance(v, bool):
                raise SceneError(path + (key,), f"enabled must be true or false, got {v!r}")
            out[key] = v
        elif key == "faults":
            out[key] = _parse_faults(v, path + (key,))
        elif key == "controller":
            if not isinstance(v, dict):
                raise SceneError(path + (key,), "controller must be a mapping of ControllerParams names")
            try:
                ControllerParams(**v)
            except (TypeError, ValueError) as e:
                raise SceneError(path + (key,), f"invalid controller parameters: {e}") from None
            out[key] = dict(v)
        else:
            lo, hi = _LIMITS[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= float(v) <= hi:
                raise SceneError(path + (key,), f"{key} must be a number in {lo:g} ... {hi:g}, got {v!r}")
            out[key] = float(v)
    cfg = TactileConfig(**out)
    if cfg.sample_period_s > cfg.frame_period_s:
        raise SceneError(path + ("sample_period_s",), "sample_period_s must not exceed frame_period_s")
    return cfg


def _parse_faults(value: Any, path: tuple) -> tuple[SensorFault, ...]:
    """``tactile.faults``: a list of ``{at_s, finger, kind[, duration_s, amplitude_n, gripper]}``."""
    if not isinstance(value, list):
        raise SceneError(path, "faults must be a list of {at_s: <s>, finger: left|right|both, "
                               "kind: dropout|frozen|noise|stopped}")
    known = [f.name for f in dataclasses.fields(SensorFault)]
    out = []
    for i, item in enumerate(value):
        here = path + (i,)
        if not isinstance(item, dict):
            raise SceneError(here, f"a fault must be a mapping like {{at_s: 5.0, finger: left, kind: dropout}}, "
                                   f"got {type(item).__name__}")
        for key in item:
            if key not in known:
                import difflib

                close = difflib.get_close_matches(str(key), known, n=1)
                hint = f"did you mean {close[0]!r}?" if close else f"keys: {', '.join(known)}"
                raise SceneError(here + (key,), f"unknown fault key {key!r}; {hint}")
        for key in ("at_s", "finger", "kind"):
            if key not in item:
                raise SceneError(here, f"a fault needs {key!r} (at_s: sim time in s; finger: left, right or both; "
                                       f"kind: {', '.join(FAULT_KINDS)})")
        spec: dict[str, Any] = {}
        for key, lo, hi, required in (("at_s", 0.0, 1e6, True), ("duration_s", 1e-6, 1e6, False),
                                      ("amplitude_n", 1e-6, 100.0, False)):
            if key not in item or (not required and item[key] is None):
                continue
            v = item[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not lo <= float(v) <= hi:
                raise SceneError(here + (key,), f"{key} must be a number in {lo:g} ... {hi:g}, got {v!r}")
            spec[key] = float(v)
        for key, choices in (("finger", FAULT_FINGERS), ("kind", FAULT_KINDS)):
            if item[key] not in choices:
                raise SceneError(here + (key,), f"{key} must be one of {', '.join(choices)}; got {item[key]!r}")
            spec[key] = item[key]
        if "amplitude_n" in spec and spec["kind"] != "noise":
            raise SceneError(here + ("amplitude_n",), f"amplitude_n applies to kind noise only, not {spec['kind']}")
        if "gripper" in item and item["gripper"] is not None:
            if not isinstance(item["gripper"], str) or not item["gripper"]:
                raise SceneError(here + ("gripper",), f"gripper must be a gripper (robot) name, got {item['gripper']!r}")
            spec["gripper"] = item["gripper"]
        out.append(SensorFault(**spec))
    return tuple(out)


register_section(SECTION, parse_tactile, "simulated PR2 fingertip arrays, palm accelerometer and tactile "
                                         "controller settings (sim/tactile_sensor.py)")
