"""``ptm robots check FILE``: a robot description tried in the simulator, each failure with its key and fix.

:func:`check_robot` loads the robot in a headless :class:`~py_trees_manipulation.sim.SimBackend`
(gravity off: the arm holds its configuration, nothing falls) and runs, in about ten seconds of
wall time:

1. **ready**: free of self-collision (the planner's collision world, :mod:`py_trees_manipulation.collision.world`);
2. **the gripper** opens and closes: the gap it reads against ``gripper.opening_m``, and the gap
   between the pad frames (the description's pads, from the links' poses) against both: a pad
   frame off its finger's face shows as a constant difference, a driver or finger joint that does
   not move the fingers as none;
3. **the pads face each other** and **the TCP is between them** (across, along the travel and along
   the approach, in the pads' own frames);
4. **a test box** between the pads (half the opening wide, the pads' size around them; free,
   gravity off), closed on with the description's ``default_force_n``: both pads must touch it, squeeze it
   with forces within 20 % of each other and of the command, and the 22-cell pressure arrays must
   see the contact on their pad cells;
5. **a grid in front of the base** (fingers down: 3 x 3 x 2 points from a third to 0.6 of the
   reach, a quarter of the reach to either side, 0.1 and 0.3 m above the base): inverse kinematics,
   verified by forward kinematics, for each.

Every finding is a :class:`Finding` (ok or not, what was measured, the description key it points
to and the fix); :class:`CheckReport` prints them (``text``) or gives them as JSON (``as_dict``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

__all__ = ["Finding", "CheckReport", "check_robot"]


@dataclass
class Finding:
    """One check: ``ok``, what was measured (``text``), and when it failed the description key it
    points to and the fix."""

    name: str
    ok: bool
    text: str
    key: str = ""
    fix: str = ""


@dataclass
class CheckReport:
    """The findings of :func:`check_robot` for one robot description."""

    model: str
    file: str
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(f.ok for f in self.findings)

    def add(self, name: str, ok: bool, text: str, key: str = "", fix: str = "") -> Finding:
        f = Finding(name, bool(ok), text, "" if ok else key, "" if ok else fix)
        self.findings.append(f)
        return f

    def text(self) -> str:
        rel = os.path.relpath(self.file)
        lines = [f"{self.model}: {rel if not rel.startswith('..') else self.file}"]
        for f in self.findings:
            lines.append(f"  {'ok  ' if f.ok else 'FAIL'}  {f.name}: {f.text}")
            if not f.ok:
                if f.key:
                    lines.append(f"        key: {f.key}")
                if f.fix:
                    lines.append(f"        fix: {f.fix}")
        bad = sum(not f.ok for f in self.findings)
        lines.append(f"{len(self.findings) - bad} of {len(self.findings)} checks passed" +
                     ("" if not bad else f"; {bad} failed"))
        return "\n".join(lines)

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "file": self.file, "ok": self.ok,
                "findings": [vars(f) for f in self.findings]}


def _pads(robot: Any) -> list[np.ndarray]:
    """World poses of the two pad frames."""
    return [robot.link_pose(link) @ p.pose for link, p in zip(robot.finger_links, robot.model.gripper.pads)]


def _pad_gap(pads: list[np.ndarray]) -> float:
    d = pads[0][:3, 3] - pads[1][:3, 3]
    return float(0.5 * (d @ pads[0][:3, 1] - d @ pads[1][:3, 1]))


def _wait(sim: Any, handle: Any, timeout_s: float = 5.0) -> Any:
    t0 = sim.now()
    while not handle.done and sim.now() - t0 < timeout_s:
        sim.advance(1 / 30)
    return handle


def check_robot(d: Any, progress: Optional[Callable[[str], None]] = None) -> CheckReport:
    """Run the checks of the module docstring on description ``d`` (a
    :class:`~py_trees_manipulation.robots.RobotDescription`)."""
    from ..geometry.poses import pose_from_spec
    from ..msgs.motion import Pr2GripperCommand
    from ..sim import SimBackend

    say = progress or (lambda _m: None)
    rep = CheckReport(d.name, d.file)
    g = d.gripper
    name = "robot"
    say("loading the robot in the simulator")
    scene = {"robots": [{"name": name, "model": d.file, "initial_gap_m": g.opening_m[1]}], "gravity": [0, 0, 0]}
    try:
        sim = SimBackend(scene)
    except Exception as e:  # a URDF PyBullet cannot load, a mesh it cannot read
        rep.add("loads", False, f"the simulator cannot load it: {e}", "urdf",
                "check the URDF and its meshes (.obj, .stl, .dae) with 'ptm robots FILE'")
        return rep
    with sim:
        arm, gripper = sim.arms[name], sim.grippers[name]
        robot = arm.robot
        kind = (f"one driver, {g.driver}, {len(robot.mimics)} <mimic> joints following their leaders"
                if g.is_linkage else f"finger joints {g.joints[0]}, {g.joints[1]}")
        rep.add("loads", True, f"{d.dof} arm joints; gripper: {kind}")
        _check_ready(rep, sim, d, name)
        say("opening and closing the gripper")
        _check_gripper(rep, sim, d, gripper, robot)
        say("closing on a test box")
    _check_box(rep, d, say)
    say("reaching a grid in front of the base")
    _check_grid(rep, d)
    return rep


def _check_ready(rep: CheckReport, sim: Any, d: Any, name: str) -> None:
    try:
        world = sim.motion_planning().world if hasattr(sim.motion_planning(), "world") else None
    except Exception:  # pragma: no cover - no planning extension
        world = None
    if world is None:
        from ..collision.world import CollisionWorld

        world = CollisionWorld.from_scene(sim.scene, {name: d})
    for conf, q in d.named_configurations.items():
        ck = world.checker(name, padding_m=0.0)
        hit = ck.explain(list(q))
        if conf != "ready" and hit is None:
            continue
        if hit is None:
            rep.add("ready", True, "free of self-collision")
        else:
            rep.add(conf, False, f"{hit.link} is in collision with {hit.body_link} ({hit.distance_m * 1000:.1f} mm)",
                    f"named_configurations.{conf}",
                    "choose another configuration (ptm robots init finds one by inverse kinematics), or, if these "
                    f"two links always touch, add [{hit.link}, {hit.body_link}] to allowed_collision_pairs")


def _check_gripper(rep: CheckReport, sim: Any, d: Any, gripper: Any, robot: Any) -> None:
    from ..msgs.motion import Pr2GripperCommand

    g = d.gripper
    lo, hi = g.opening_m
    measured = {}
    for label, gap in (("open", hi), ("closed", lo), ("half", 0.5 * (lo + hi))):
        _wait(sim, gripper.send_goal("gripper_action", Pr2GripperCommand(position=gap, max_effort=g.default_force_n)))
        sim.advance(0.3)
        measured[label] = (gap, gripper.gap_m(), _pad_gap(_pads(robot)), _pads(robot))
    (o_cmd, o_read, o_pad, _), (c_cmd, c_read, c_pad, _) = measured["open"], measured["closed"]
    moved = abs(o_pad - c_pad)
    if moved < 0.2 * (hi - lo):
        key = "gripper.driver" if g.is_linkage else "gripper.joints"
        rep.add("gripper", False, f"the pads moved {moved * 1000:.1f} mm between open and closed, the gap "
                f"should change by {(hi - lo) * 1000:.1f} mm", key,
                "name the joint(s) that open the fingers; check the pads' links")
        return
    off = [measured[k][2] - measured[k][0] for k in ("open", "closed", "half")]
    read = [measured[k][1] - measured[k][0] for k in ("open", "closed", "half")]
    worst_read = max(abs(v) for v in read)
    text = (f"opens to {o_read * 1000:.1f} mm (opening_m {hi * 1000:.1f}), closes to {c_read * 1000:.1f} mm "
            f"(opening_m {lo * 1000:.1f}); the pad frames are {o_pad * 1000:.1f} and {c_pad * 1000:.1f} mm apart")
    if worst_read > 0.002:
        rep.add("gripper", False, text + f": the gap read is {worst_read * 1000:.1f} mm off the command",
                "gripper.opening_m", "keep opening_m within the fingers' travel; check the finger joints' limits")
    elif max(abs(v) for v in off) > 0.002:
        spread = max(off) - min(off)
        if spread < 0.002:
            rep.add("gripper", False, text + f": the pad frames are {np.mean(off) * 1000:+.1f} mm off the gap at "
                    "every opening", "gripper.pads.fingers[].pose",
                    "move each pad frame onto its finger's inner face (pad y out of the back: a pad too far "
                    f"inside or outside by {abs(np.mean(off)) / 2 * 1000:.1f} mm each)")
        else:
            rep.add("gripper", False, text + f": the pad frames' distance differs from the gap by "
                    f"{min(off) * 1000:+.1f} .. {max(off) * 1000:+.1f} mm over the opening",
                    "gripper.pads.fingers[].pose", "put each pad frame on its finger's inner face, at its centre")
    else:
        rep.add("gripper", True, text)
    # the pads face each other; the TCP is between them (at half the opening)
    pads = measured["half"][3]
    facing = float(-(pads[0][:3, 1] @ pads[1][:3, 1]))
    d01 = pads[1][:3, 3] - pads[0][:3, 3]
    if facing < np.cos(np.radians(20.0)) or d01 @ pads[0][:3, 1] > 0:
        rep.add("pads face each other", False, f"the pads' inner faces are {np.degrees(np.arccos(np.clip(facing, -1, 1))):.0f} "
                "deg from facing each other" + ("" if d01 @ pads[0][:3, 1] <= 0 else ", each turned away from the other"),
                "gripper.pads.fingers[].pose", "pad y points out of the back of its finger, away from the other "
                "finger; the right pad is usually turned half a turn about z (rpy_deg: [0, 0, 180])")
        return
    rep.add("pads face each other", True, f"their normals are {np.degrees(np.arccos(np.clip(facing, -1, 1))):.1f} deg "
            "from opposite")
    tcp = robot.tcp_pose()
    mid = 0.5 * (pads[0][:3, 3] + pads[1][:3, 3])
    off_v = tcp[:3, 3] - mid
    along = float(off_v @ pads[0][:3, 1])            # along the travel
    approach = float(off_v @ pads[0][:3, 2])         # along the finger (pad z)
    across = float(off_v @ pads[0][:3, 0])
    half_gap = 0.5 * measured["half"][2]
    inside = abs(along) < 0.25 * half_gap + 0.002 and abs(approach) <= 0.5 * g.pad.length_m and \
        abs(across) <= 0.5 * g.pad.width_m
    axes = abs(float(tcp[:3, 1] @ pads[0][:3, 1]))
    text = (f"{along * 1000:+.1f} mm along the travel, {approach * 1000:+.1f} mm along the fingers, {across * 1000:+.1f} "
            "mm across, from the pads' midpoint")
    if not inside:
        rep.add("TCP between the pads", False, "the TCP is " + text, "tcp.pose",
                f"move the TCP by {-along * 1000:+.1f}, {-approach * 1000:+.1f}, {-across * 1000:+.1f} mm (travel, "
                "fingers, across) onto the pads' midpoint")
    elif axes < 0.98:
        rep.add("TCP between the pads", False, f"the TCP's y axis is {np.degrees(np.arccos(min(1.0, axes))):.0f} deg from "
                "the finger travel", "tcp.pose", "turn the TCP so that z points out of the fingers and y along the travel")
    else:
        rep.add("TCP between the pads", True, text)


def _check_box(rep: CheckReport, d: Any, say: Callable[[str], None]) -> None:
    """Close on a fixed box between the pads (a second scene: the box where the TCP is at ready)."""
    from ..msgs.motion import Pr2GripperCommand
    from ..sim import SimBackend
    from ..bullet.robots import LoadedRobot  # noqa: F401  (type of arm.robot)

    g = d.gripper
    lo, hi = g.opening_m
    width = 0.5 * (lo + hi)
    name = "robot"
    probe = {"robots": [{"name": name, "model": d.file, "initial_gap_m": hi}], "gravity": [0, 0, 0]}
    with SimBackend(probe) as sim:
        tcp = sim.arms[name].tcp_pose()
        pads = _pads(sim.arms[name].robot)
    # the box in the TCP frame: width along y (the travel), the pads' length along z, their width + 1 cm along x
    size = [g.pad.width_m + 0.01, width, g.pad.length_m]
    from ..geometry.poses import pq_from_pose

    # centred on the pads' midpoint (not the TCP: that is checked above), turned as the TCP
    T = tcp.copy()
    T[:3, 3] = 0.5 * (pads[0][:3, 3] + pads[1][:3, 3]) + tcp[:3, 2] * (g.pad_advance_m(width) if g.is_linkage else 0.0)
    p, q = pq_from_pose(T)
    # free (gravity off): a linkage's pads slide along the approach as they close, and a fixed box
    # would hold them back by friction
    scene = {"robots": [{"name": name, "model": d.file, "initial_gap_m": hi}], "gravity": [0, 0, 0],
             "objects": [{"name": "test_box", "primitive": {"shape": "box", "size": size}, "mass_kg": 0.05,
                          "pose": {"position": [float(v) for v in p], "orientation": [float(v) for v in q]}}]}
    with SimBackend(scene) as sim:
        gripper = sim.grippers[name]
        force = float(g.default_force_n)
        _wait(sim, gripper.send_goal("gripper_action", Pr2GripperCommand(position=lo, max_effort=force)))
        sim.advance(0.5)
        touch = [0.0, 0.0]
        robot = sim.arms[name].robot
        for c in sim.world.contacts(name, "test_box"):
            for k, link in enumerate(g.pad_links):
                if c.link_a == link:
                    touch[k] += c.normal_force_n
        tact = sim.extensions.get("tactile")
        cells = tact.grippers[name].cell_forces if tact is not None else None
        gap = gripper.gap_m()
    what = f"closing on a {width * 1000:.0f} mm box with {force:g} N"
    names = ("the first pad", "the second pad")
    missing = [names[k] + f" ({g.pad_links[k]})" for k in (0, 1) if touch[k] < 0.05 * force]
    if missing:
        rep.add("test box", False, f"{what}: {' and '.join(missing)} do not touch it (the gap stopped at "
                f"{gap * 1000:.1f} mm)", "gripper.pads.fingers[].link",
                "the pad link must be the finger link that touches the object; check the TCP and the pads' poses")
        return
    f0, f1 = touch
    text = f"{what}: both pads touch it ({f0:.1f} N / {f1:.1f} N)"
    if abs(f0 - f1) > 0.2 * max(f0, f1) or max(f0, f1) > 1.3 * force or min(f0, f1) < 0.5 * force:
        rep.add("test box", False, text + " : the squeeze is not the command on both sides",
                "gripper.default_force_n" if max(f0, f1) > 1.3 * force else "tcp.pose",
                "check the force limits and that the fingers close symmetrically about the TCP")
        return
    if cells is not None:
        pad_cells = cells[:, 7:].sum(axis=1)
        if min(pad_cells) < 0.5 * min(f0, f1):
            rep.add("test box", False, text + f"; the 22-cell arrays see {pad_cells[0]:.1f} / {pad_cells[1]:.1f} N on their "
                    "pad cells", "gripper.pads.fingers[].pose",
                    "the pad frames are not where the fingers touch: put each on its finger's inner face")
            return
        text += f"; the 22-cell arrays see it ({pad_cells[0]:.1f} / {pad_cells[1]:.1f} N on the pad cells)"
    rep.add("test box", True, text)


def _check_grid(rep: CheckReport, d: Any) -> None:
    """Inverse kinematics to 3 x 3 x 2 points in front of the base, fingers down."""
    from ..sim import SimBackend

    name = "robot"
    reach = max(0.3, float(d.reach_m))
    xs = np.linspace(0.35, 0.6, 3) * reach
    ys = np.array([-0.25, 0.0, 0.25]) * reach
    zs = [0.1, 0.3]
    ok = 0
    miss = []
    with SimBackend({"robots": [{"name": name, "model": d.file}], "gravity": [0, 0, 0]}) as sim:
        arm = sim.arms[name]
        for x in xs:
            for y in ys:
                for z in zs:
                    T = np.eye(4)
                    T[:3, :3] = [[1, 0, 0], [0, -1, 0], [0, 0, -1]]
                    T[:3, 3] = [x, y, z]
                    sol = arm.solve_ik(T)
                    if sol.position_error_m < 1e-3 and sol.orientation_error_rad < 0.01:
                        ok += 1
                    else:
                        miss.append(f"({x:.2f}, {y:+.2f}, {z:.2f})")
    n = len(xs) * len(ys) * len(zs)
    text = (f"reaches {ok} of {n} points, fingers down, {xs[0]:.2f}-{xs[-1]:.2f} m ahead, +-{ys[-1]:.2f} m, "
            f"{zs[0]}-{zs[-1]} m up")
    if ok * 2 < n:
        rep.add("reach", False, text + f" (not: {', '.join(miss[:6])}{' ...' if len(miss) > 6 else ''})", "arm.joints",
                "check the arm joints (base to wrist) and their limits in the URDF, and the TCP pose")
    else:
        rep.add("reach", True, text)
