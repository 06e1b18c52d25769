"""Start-up cost: the commands that only read files import nothing heavy.

``ptm --help`` and ``ptm validate`` run in a fresh interpreter (a subprocess, as a user runs them);
afterwards its ``sys.modules`` must hold neither the simulator (PyBullet), SciPy, Matplotlib, the
planners (OMPL, ruckig, toppra), Foxglove, the MCAP run log nor the viewer's modules. What is
imported, not how long it takes: timings are the benchmarks' business (benchmarks/bench_process.py).
"""

from __future__ import annotations

import glob
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

#: top-level packages none of these commands may import
HEAVY = ("pybullet", "scipy", "matplotlib", "ompl", "ruckig", "toppra", "foxglove", "mcap", "roslibpy", "websockets")
#: our modules that load the simulator, the run log or the viewer
HEAVY_OURS = ("py_trees_manipulation.sim.backend", "py_trees_manipulation.viewer.runlog",
              "py_trees_manipulation.viewer.server", "py_trees_manipulation.viewer.snapshot",
              "py_trees_manipulation.viewer.report", "py_trees_manipulation.viewer.foxglove",
              "py_trees_manipulation.collision.world", "py_trees_manipulation.hardware.rosbridge",
              "py_trees_manipulation.hardware.connection", "py_trees_manipulation.hardware.actions",
              "py_trees_manipulation.hardware.goals", "py_trees_manipulation.hardware.resources")

_PROBE = """
import json, sys
from py_trees_manipulation.cli import main
try:
    code = main(sys.argv[1:])
except SystemExit as e:
    code = e.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


def _modules_after(*argv: str) -> tuple[int, set[str]]:
    proc = subprocess.run([sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    last = proc.stderr.strip().splitlines()[-1]
    out = json.loads(last)
    return out["code"], set(out["modules"])


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if m.split(".")[0] in HEAVY or m in HEAVY_OURS)


@pytest.mark.parametrize("argv", [("--help",), ("run", "--help"), ("sweep", "--help"), ("robots", "--help")],
                         ids=lambda a: " ".join(a))
def test_help_imports_nothing_heavy(argv):
    code, modules = _modules_after(*argv)
    assert code in (0, None)
    assert _heavy(modules) == []
    # the help does not even need NumPy or the robots' loader
    assert "numpy" not in modules and "py_trees_manipulation.robots.loader" not in modules


def test_validate_every_example_imports_nothing_heavy():
    """Every example (their scenes use every built-in section: grasp_fix, doors, cabinets, tactile,
    motion_planning, robot description files) validates without the simulator."""
    files = sorted(glob.glob(os.path.join("examples", "*.yaml")))
    assert len(files) >= 10
    code, modules = _modules_after("validate", *files)
    assert code == 0
    assert _heavy(modules) == []
    # what validating did load: the scene parser and its sections
    assert {"py_trees_manipulation.scene.spec", "py_trees_manipulation.scene.sections.doors"} <= modules


def test_validate_reports_a_bad_section_key_without_the_simulator(tmp_path):
    """The extra sections are parsed (not skipped) without PyBullet: a typo in one is still an error."""
    src = open(os.path.join(ROOT, "examples", "open_drawer.yaml")).read()
    assert "cabinets:" in src
    bad = tmp_path / "bad.yaml"
    bad.write_text(src.replace("cabinets:", "motion_planning: {padding: 0.02}\n  cabinets:", 1))
    code, modules = _modules_after("validate", str(bad))
    assert code == 2
    assert _heavy(modules) == []


def test_the_simulator_names_load_on_first_use():
    """``py_trees_manipulation.sim`` still offers SimBackend and friends (PEP 562), with the built-in
    extensions registered, and the sections' names stay importable from the simulator modules."""
    code = ("import sys, py_trees_manipulation.sim as s\n"
            "assert 'pybullet' not in sys.modules\n"
            "B = s.SimBackend\n"
            "from py_trees_manipulation.sim.backend import _EXTENSIONS\n"
            "from py_trees_manipulation.sim.doors import DoorSpec, parse_doors\n"
            "from py_trees_manipulation.sim.tactile_sensor import TactileConfig, parse_tactile\n"
            "from py_trees_manipulation.sim.grasp_fix import GraspFixSpec, parse_grasp_fix\n"
            "from py_trees_manipulation.sim.planning import MotionPlanningSettings\n"
            "print(list(_EXTENSIONS))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.split() == ["['grasp_fix',", "'doors',", "'tactile',", "'motion_planning']"]
    assert "pybullet build time" not in out.stderr  # the banner stays hidden


def test_the_builtin_behaviour_index_matches_the_modules():
    """``behaviors.BUILTIN_BEHAVIOURS`` lists, for each module of ``BUILTIN_MODULES``, the names its
    import registers (imported in that order, in a fresh interpreter): what ``registry.lookup``
    imports for a built-in name is the module that defines it."""
    code = ("import importlib, json\n"
            "from py_trees_manipulation.behaviors import BUILTIN_MODULES, registry\n"
            "out = {}\n"
            "for m in BUILTIN_MODULES:\n"
            "    before = set(registry._REGISTRY)\n"
            "    importlib.import_module('py_trees_manipulation.behaviors.' + m)\n"
            "    out[m] = sorted(set(registry._REGISTRY) - before)\n"
            "print(json.dumps(out))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    from py_trees_manipulation.behaviors import BUILTIN_BEHAVIOURS, BUILTIN_MODULES

    assert list(BUILTIN_BEHAVIOURS) == BUILTIN_MODULES
    assert json.loads(out.stdout) == {m: sorted(names) for m, names in BUILTIN_BEHAVIOURS.items()}


def test_a_run_imports_the_behaviour_families_its_tree_uses():
    """Issue 35: ``ptm run`` of pick_and_lift (motion, world, grasping and basic behaviours) imports
    neither the regrasp planner, the door affordances nor the PR2 gripper-sensor behaviours, and no
    ``importlib.metadata`` (no plugin scan: every name of the tree is built in); an unknown name
    still gets its "did you mean" from the whole list. Nor the modules of the subcommands it is not
    (``ptm test``, ``ptm schema``, ``ptm robots``): a built-in command's parser leaves them out; its
    run flags (``--viewer``, ``--robot``) are there."""
    code, modules = _modules_after("run", os.path.join("examples", "pick_and_lift.yaml"), "--no-log", "-q")
    assert code == 0
    assert "py_trees_manipulation.behaviors.motion" in modules
    assert not {"py_trees_manipulation.behaviors.regrasp", "py_trees_manipulation.behaviors.affordances",
                "py_trees_manipulation.behaviors.gripper_sensor", "py_trees_manipulation.planning.regrasp",
                "importlib.metadata"} & modules
    assert not {"py_trees_manipulation.scenarios.cli", "py_trees_manipulation.interop.cli",
                "py_trees_manipulation.commands.robots"} & modules
    assert {"py_trees_manipulation.viewer.cli", "py_trees_manipulation.commands.hardware"} <= modules


def test_every_subcommand_is_still_in_the_full_parser():
    """``ptm --help`` (no command yet) lists the other modules' subcommands; ``ptm run --help`` has
    the run flags they add."""
    from py_trees_manipulation.cli import build_parser

    names = set(build_parser()._subparsers._group_actions[0].choices)
    assert {"run", "validate", "view", "report", "serve", "test", "schema", "convert", "robots"} <= names
    run_only = build_parser("run")._subparsers._group_actions[0].choices
    assert "robots" not in run_only
    assert {"--viewer", "--robot"} <= set(run_only["run"]._option_string_actions)
