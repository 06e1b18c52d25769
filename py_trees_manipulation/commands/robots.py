"""``ptm robots``: list the robot models, show one, draft a description from a URDF, check one.

- ``ptm robots [MODEL|FILE] [--json]``: the stock models, or one model or description file in full
  (read with ``xml.etree``, no simulator).
- ``ptm robots init URDF [-o FILE]``: a description drafted from a URDF, every guess commented
  (:mod:`py_trees_manipulation.collision.robot_setup`).
- ``ptm robots check FILE``: the robot in the simulator: gripper, test box, reach
  (:mod:`.robot_check`).

Registered through :data:`py_trees_manipulation.cli.COMMAND_MODULES`. Exit codes: 0 done, 1 a
check failed, 2 invalid input (an unknown model, a description file with problems, each
``FILE:LINE:COL: problem; fix``, a URDF init cannot read).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover  (ptm --help must not load the robots' stack)
    from ..robots.description import RobotDescription


def _summary_row(d: RobotDescription) -> dict[str, Any]:
    g = d.gripper
    return {"model": d.name, "arm_joints": d.dof, "reach_m": d.reach_m, "opening_m": list(g.opening_m),
            "default_force_n": g.default_force_n, "max_force_n": g.max_force_n,
            "payload_kg": d.payload_kg, "gripper_mass_kg": g.mass_kg, "lift_limit_kg": d.max_object_kg,
            "description": d.summary, "file": d.file}


def _payload_text(r: dict[str, Any]) -> str:
    """``"3.0 kg (lifts 2.27)"``: the rated payload, gripper included, and what the hand may lift (the
    payload less the gripper's mass: the limit the payload checks use); ``"unknown"``."""
    if r.get("payload_kg") is None:
        return "unknown"
    return f"{r['payload_kg']:g} kg (lifts {r['lift_limit_kg']:.2f} kg)"


def _details(d: RobotDescription) -> dict[str, Any]:
    g = d.gripper
    vel = list(d.velocity_limits) or [lim[3] for lim in d.arm_urdf_limits]
    acc = list(d.acceleration_limits) or [5.0 * v for v in vel]
    eff = list(d.effort_limits) or [lim[2] for lim in d.arm_urdf_limits]
    out = _summary_row(d)
    out.update({
        "urdf": d.urdf_path,
        "arm": [{"joint": n, "lower": lim[0], "upper": lim[1], "velocity_limit": v, "acceleration_limit": a,
                 "effort_limit": e} for n, lim, v, a, e in zip(d.arm_joint_names, d.arm_urdf_limits, vel, acc, eff)],
        "tcp": {"link": d.tcp_link_name, "position": list(d.tcp_position), "orientation": list(d.tcp_orientation)},
        "wrist_force_torque_joint": d.wrist_ft_joint,
        "gripper": {"joints": list(g.joints), "driver": g.driver, "palm_link": g.palm_link, "coupling": g.coupling,
                    "mimic_multiplier": g.mimic_multiplier, "finger_speed_mps": g.finger_speed_mps,
                    "finger_friction": g.finger_friction,
                    "pad_travel_per_unit": list(g.travel_per_unit), "closed_positions": list(g.closed_positions),
                    "pads": [{"link": p.link, "position": list(p.position), "orientation": list(p.orientation)}
                             for p in g.pads],
                    "pad": {"width_m": g.pad.width_m, "length_m": g.pad.length_m}},
        "named_configurations": {k: list(v) for k, v in d.named_configurations.items()},
        "allowed_collision_pairs": [list(p) for p in d.allowed_collision_pairs],
    })
    return out


def _fmt_list(v: Any, digits: int = 3) -> str:
    return "[" + ", ".join(f"{x:.{digits}f}" for x in v) + "]"


def _print_table(rows: list[dict[str, Any]]) -> None:
    head = ("model", "joints", "reach", "payload", "opening", "grip force", "description")
    lines = [head]
    for r in rows:
        lo, hi = r["opening_m"]
        lines.append((r["model"], str(r["arm_joints"]), f"{r['reach_m']:.2f} m", _payload_text(r),
                      f"{lo * 1000:.0f}-{hi * 1000:.0f} mm", f"{r['default_force_n']:g} N (max {r['max_force_n']:g} N)",
                      r["description"]))
    widths = [max(len(line[i]) for line in lines) for i in range(len(head) - 1)]
    for line in lines:
        print("  ".join(c.ljust(w) for c, w in zip(line, widths)) + "  " + line[-1])


def _print_details(info: dict[str, Any]) -> None:
    print(f"{info['model']}: {info['description']}")
    print(f"  file: {info['file']}")
    print(f"  URDF: {info['urdf']}")
    print(f"  reach: {info['reach_m']:.2f} m (TCP from the first joint's axis)")
    if info.get("payload_kg") is not None:
        print(f"  payload: {info['payload_kg']:g} kg rated, gripper included; the hand may lift "
              f"{info['lift_limit_kg']:.2f} kg (less the gripper's {info['gripper_mass_kg']:g} kg): the limit the "
              "payload checks use (a scene's robots[].payload_kg overrides the rating)")
    else:
        print("  payload: unknown (no payload_kg: lifts are not checked against it)")
    print("  arm joints, base to wrist:")
    w = max(len(j["joint"]) for j in info["arm"])
    for j in info["arm"]:
        rng = (f"[{j['lower']:.3f}, {j['upper']:.3f}]" if math.isfinite(j["lower"]) else "continuous")
        print(f"    {j['joint'].ljust(w)}  {rng}  {j['velocity_limit']:.3f}/s  {j['acceleration_limit']:.2f}/s^2  "
              f"effort {j['effort_limit']:g}")
    t = info["tcp"]
    print(f"  TCP: {t['link']} + position {_fmt_list(t['position'])} m, orientation (w, x, y, z) "
          f"{_fmt_list(t['orientation'])}")
    print(f"  wrist force-torque joint: {info['wrist_force_torque_joint']}")
    g = info["gripper"]
    lo, hi = info["opening_m"]
    if g["driver"]:
        t = g["pad_travel_per_unit"]
        print(f"  gripper: one driver, {g['driver']} (a linkage: every finger joint follows it); palm {g['palm_link']}")
        print(f"    pads travel {abs(t[0]) * 1000:.1f} / {abs(t[1]) * 1000:.1f} mm per unit of the driver at its closing "
              f"limit {g['closed_positions'][0]:g}")
    else:
        print(f"  gripper: joints {', '.join(g['joints'])} ({g['coupling']} coupling, x{g['mimic_multiplier']:g}); palm "
              f"{g['palm_link']}")
    print(f"    opening {lo:.3f} .. {hi:.3f} m; force {info['default_force_n']:g} N (max {info['max_force_n']:g} N); "
          f"finger speed {g['finger_speed_mps']:g} m/s; friction {g['finger_friction']:g}")
    print(f"    pads {g['pad']['width_m'] * 1000:.1f} x {g['pad']['length_m'] * 1000:.1f} mm on "
          f"{', '.join(p['link'] for p in g['pads'])}")
    print("  named configurations:")
    for k, v in info["named_configurations"].items():
        print(f"    {k}: {_fmt_list(v, 4)}")
    if info["allowed_collision_pairs"]:
        print(f"  allowed collision pairs: {', '.join('/'.join(p) for p in info['allowed_collision_pairs'])}")


def _packages(items: list[str]) -> dict[str, str]:
    out = {}
    for it in items or []:
        name, sep, folder = it.partition("=")
        if not sep or not name or not folder:
            raise ValueError(f"--package {it!r}: write NAME=FOLDER")
        out[name] = os.path.abspath(folder)
    return out


def _model_error(e: Exception) -> int:
    """Exit code 2 for a robot model that does not load, with why on stderr: an unknown model's
    name and the stock ones, or a description file's problems as FILE:LINE:COL lines."""
    from ..located.errors import TreeLoadError

    print(str(e) if isinstance(e, TreeLoadError) else f"ptm: {e}", file=sys.stderr)
    return 2


def cmd_init(args: argparse.Namespace) -> int:
    """``ptm robots init URDF [-o FILE]``."""
    if not args.file:
        print("ptm robots init: give the URDF (ptm robots init my_robot.urdf -o my_robot.yaml)", file=sys.stderr)
        return 2
    from ..collision.robot_setup import RobotSetupError, draft_description

    out = args.output or os.path.splitext(os.path.basename(args.file))[0] + ".yaml"
    if out != "-" and os.path.exists(out) and not args.force:
        print(f"ptm robots init: {out} exists; give another -o FILE, or --force to overwrite it", file=sys.stderr)
        return 2
    out_dir = os.path.dirname(os.path.abspath(out)) if out != "-" else os.getcwd()
    try:
        packages = _packages(args.package)
        draft = draft_description(args.file, packages, out_dir=out_dir,
                                  progress=lambda msg: print(f"  {msg} ...", file=sys.stderr))
    except (RobotSetupError, ValueError) as e:
        print(f"ptm robots init: {e}", file=sys.stderr)
        return 2
    if out == "-":
        sys.stdout.write(draft.text)
        return 0
    with open(out, "w", encoding="utf-8") as f:
        f.write(draft.text)
    grip = (f"one driver, {draft.driver} (a linkage)" if draft.driver else f"finger joints {', '.join(draft.joints)}")
    print(f"{draft.name}: {len(draft.arm)} arm joints, {draft.arm[0]} .. {draft.arm[-1]}; hand {draft.palm}")
    print(f"  gripper: {grip}; pads on {draft.pads[0].link} / {draft.pads[1].link}, "
          f"{draft.pad_size[0] * 1000:.1f} x {draft.pad_size[1] * 1000:.1f} mm")
    print(f"  TCP: {draft.palm} + {[round(v, 4) for v in draft.tcp[0]]} m")
    for k in draft.named:
        print(f"  {k}: {draft.notes.get(k, '')}")
    print(f"  allowed collision pairs: {len(draft.allowed)} (in contact in every sampled configuration)")
    print(f"  GUESS: default_force_n {draft.default_force_n:g} N: put your gripper's data sheet figure")
    print(f"wrote {out}; next: ptm robots check {out}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """``ptm robots check FILE``."""
    if not args.file:
        print("ptm robots check: give a robot description file or a stock model (ptm robots check my_robot.yaml)",
              file=sys.stderr)
        return 2
    from ..located.errors import TreeLoadError
    from ..robots.loader import UnknownModelError, resolve_model
    from .robot_check import check_robot

    try:
        d = resolve_model(args.file)
    except (UnknownModelError, TreeLoadError) as e:
        return _model_error(e)
    report = check_robot(d, progress=lambda msg: print(f"  {msg} ...", file=sys.stderr))
    if args.json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        print(report.text())
    return 0 if report.ok else 1


def cmd_robots(args: argparse.Namespace) -> int:
    """List the stock robot models (arm joints, reach, gripper opening and force), or show one model or robot
    description file in full: joints with limits, TCP, gripper, pads, named configurations. A description file
    is checked against its URDF first (every problem as FILE:LINE:COL). 'init URDF' drafts a description from
    a URDF (arm chain, gripper driver or finger joints, pads from the fingers' collision geometry, TCP, ready
    by inverse kinematics, self-collision pairs by sampling; every guess commented in the file). 'check FILE'
    runs the robot in the simulator: opens and closes the gripper, closes it on a test box, reaches a grid in
    front of the base, and names the key and the fix of whatever fails. A task's scene uses a model with
    'model: NAME' or 'model: my_robot.yaml'.

    Examples:
      ptm robots
      ptm robots kuka_iiwa_wsg50
      ptm robots my_robot.yaml     # read it against its URDF
      ptm robots init my_robot.urdf -o my_robot.yaml
      ptm robots check my_robot.yaml
      ptm robots --json
    Exit codes: 0 done, 1 a check failed, 2 unknown model, invalid description or unreadable URDF.
    """
    from ..located.errors import TreeLoadError
    from ..robots.loader import UnknownModelError, resolve_model, stock_models

    if args.model == "init":
        return cmd_init(args)
    if args.model == "check":
        return cmd_check(args)
    if any(getattr(args, k, None) for k in ("file", "output", "package", "force")):
        print("ptm robots: FILE, -o, --package and --force go with 'init' or 'check' (ptm robots init URDF -o FILE)",
              file=sys.stderr)
        return 2
    try:
        if args.model:
            d = resolve_model(args.model)
            info = _details(d)
            if args.json:
                print(json.dumps(info, indent=2))
            else:
                _print_details(info)
            return 0
        rows = [_summary_row(resolve_model(name)) for name in stock_models()]
    except (UnknownModelError, TreeLoadError) as e:
        return _model_error(e)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        _print_table(rows)
    return 0


def register(subparsers: Any) -> None:
    """Add ``robots`` to the ``ptm`` parser."""
    from .subcommands import add_command

    p = add_command(subparsers, "robots", cmd_robots,
                    "list the robot models; show, draft (init) or check (check) a robot description")
    p.add_argument("model", nargs="?", help="a stock model name or a robot description file (.yaml); or 'init', "
                   "or 'check'")
    p.add_argument("file", nargs="?", help="with init: the URDF; with check: the description file (or a stock model)")
    p.add_argument("-o", "--output", help="init: the description file to write ('-': stdout; default: the URDF's "
                   "name with .yaml, in the current folder)")
    p.add_argument("--package", action="append", metavar="NAME=FOLDER",
                   help="init: the folder of a package:// package the URDF names (repeatable; default: found next "
                   "to or above the URDF)")
    p.add_argument("--force", action="store_true", help="init: overwrite the output file")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
