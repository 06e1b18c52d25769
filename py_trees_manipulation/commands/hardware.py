"""``ptm`` hooks of the hardware backend: ``ptm serve`` (the robot stand-in) and ``ptm run --robot``."""

from __future__ import annotations

import argparse
import sys
from typing import Any, Optional

from . import options
from .subcommands import add_command


def add_run_arguments(parser: argparse.ArgumentParser) -> None:
    g = parser.add_argument_group("hardware backend")
    g.add_argument("--robot", metavar="ROBOT.yaml", default=None,
                   help="robot file for --backend hardware (rosbridge host/port, action and topic names)")


def load_task_for_robot(path: str, overrides: Optional[list[str]] = None) -> Any:
    """Load a YAML task for ``--backend hardware``: as :func:`~py_trees_manipulation.trees.loader.load_task`.

    The ``scene:`` is kept and validated: the client plans every arm motion against it (fixtures and
    objects from the task file, the robots' URDFs; :mod:`.planning`). A task without one runs its
    motions as the robot's own actions, unchecked.

    Raises:
        TreeLoadError: as load_task.
    """
    from ..trees.loader import load_task

    return load_task(path, list(overrides or []))


def run_observers(args: argparse.Namespace, task: Any = None) -> list[Any]:
    """No observers; checks that --robot goes with --backend hardware.

    Raises:
        ValueError: --robot without --backend hardware, or hardware without --robot.
    """
    if getattr(args, "robot", None) and args.backend != "hardware":
        raise ValueError("--robot is for --backend hardware")
    if args.backend == "hardware" and not getattr(args, "robot", None):
        raise ValueError("--backend hardware needs --robot ROBOT.yaml (see examples/robots/standin.yaml)")
    return []


def cmd_serve(args: argparse.Namespace) -> int:
    """Expose the simulated robot of a task or scene file over the rosbridge v2 protocol (websocket), with PR2
    gripper sensor action names, FollowJointTrajectory and Cartesian arm actions, joint states and object pose
    topics. Ctrl-C to stop.

    Example: ptm serve --backend sim --scene examples/pick_and_lift.yaml --port 9090 &
             ptm run examples/pick_and_lift.yaml --backend hardware --robot examples/robots/standin.yaml
    """
    from ..backend import BackendError
    from ..located.errors import TreeLoadError
    from ..hardware.robot_server import RobotStandIn

    if args.backend != "sim":
        print("ptm: serve only stands in with --backend sim", file=sys.stderr)
        return 2
    faults: dict[str, set[str]] = {}
    for f in args.fault:
        kind, _, action = f.partition(":")
        if kind not in ("reject", "malformed", "sensor_loss") or not action:
            print(f"ptm: --fault {f!r}: use reject:ACTION, malformed:ACTION or sensor_loss:ACTION", file=sys.stderr)
            return 2
        faults.setdefault(kind, set()).add(action)
    try:
        scene, base = load_scene(args.scene)
        from ..sim import SimBackend

        sim = SimBackend(scene, seed=args.seed, base_dir=base)
    except TreeLoadError as e:
        print(str(e), file=sys.stderr)
        return 2
    except (ValueError, BackendError) as e:  # a scene file's mistake, a URDF PyBullet cannot load
        print(f"ptm: {args.scene}: {e}", file=sys.stderr)
        return 2
    # load now what the first goals would load (a client waits a few seconds at most for a goal's
    # acknowledgement): the trajectory follower's spline, the arm motions' collision world
    import scipy.interpolate  # noqa: F401  (follow_joint_trajectory)

    planning = sim.extensions.get("motion_planning")
    if planning is not None:
        planning.world  # noqa: B018  (built from the scene on first use)
    server = RobotStandIn(sim, host=args.host, port=args.port, rate=args.rate, faults=faults, verbose=args.verbose,
                          ros_version=None if args.ros_version == "both" else int(args.ros_version))
    try:
        server.start()
    except OSError as e:
        print(f"ptm: {e}", file=sys.stderr)
        sim.close()
        return 2
    print(f"ptm serve: rosbridge v2 on {server.url} (sim at {args.rate:g}x real time); actions: "
          + ", ".join(sorted(server.servers)), flush=True)
    try:
        server.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0


def register(sub: Any) -> None:
    p = add_command(sub, "serve", cmd_serve,
                    "serve the simulated robot over rosbridge (a stand-in for a real robot)", formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", default="sim", choices=["sim"], help="what stands in for the robot (sim)")
    p.add_argument("--scene", required=True, metavar="FILE", help="task file (its scene:) or scene file")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=options.PORT, default=9090, help="port (default 9090; 0: a free one, printed)")
    p.add_argument("--rate", type=options.real(0.001, 1000.0), default=1.0,
                   help="sim seconds per wall second, 0.001 ... 1000 (default 1: real time)")
    p.add_argument("--seed", type=options.SEED, default=None, metavar="N",
                   help="random seed, 0 ... 4294967295 (overrides scene.seed)")
    p.add_argument("--fault", action="append", default=[], metavar="KIND:ACTION",
                   help="inject a fault for tests: reject:ACTION (reject its goals), malformed:ACTION (malformed results), "
                        "sensor_loss:ACTION (the left fingertip array reads all zeros from 0.5 s after each goal of "
                        "ACTION starts: the robot's gripper controller must abort it)")
    p.add_argument("--ros-version", choices=["1", "2", "both"], default="both",
                   help="the ROS the stand-in plays: 1 (no send_action_goal, as rosbridge for ROS 1), 2, or both "
                        "(default; /rosapi/get_ros_version is then not served, like an older rosapi)")
    p.add_argument("-v", "--verbose", action="store_true", help="print every goal served and every status error sent")


def load_scene(path: str) -> tuple[dict, str]:
    """The scene of a task file (its ``scene:`` after parameter substitution) or of a scene-only
    YAML file, and the folder relative URDF paths resolve against.

    Raises:
        TreeLoadError: unreadable or invalid file; ValueError: no scene in it.
    """
    import os

    from ..located import locyaml

    base = os.path.dirname(os.path.abspath(path))
    doc = locyaml.load(path)
    if isinstance(doc, dict) and "tree" in doc:
        from ..trees.loader import load_task

        task = load_task(path)
        if not task.scene:
            raise ValueError(f"{path}: the task file has no 'scene:' section")
        return task.scene, base
    if isinstance(doc, dict) and "scene" in doc:
        return doc["scene"], base
    if isinstance(doc, dict):
        return doc, base
    raise ValueError(f"{path}: not a scene (a mapping with robots:, objects:...)")
