"""Pure layers (msgs, geometry, control, planning, robots, motion, located) and the scene layer import neither pybullet, py_trees nor roslibpy."""

import subprocess
import sys

import pytest

PURE = ["msgs", "geometry", "control", "planning", "robots", "motion", "located", "scene"]


@pytest.mark.parametrize("layer", PURE)
def test_pure_layer_imports_no_simulator_tree_or_ros_library(layer):
    code = (
        "import importlib, pkgutil, sys\n"
        f"pkg = importlib.import_module('py_trees_manipulation.{layer}')\n"
        "for m in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + '.'):\n"
        "    importlib.import_module(m.name)\n"
        "bad = sorted(n for n in ('pybullet', 'py_trees', 'roslibpy') if n in sys.modules)\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "", f"py_trees_manipulation.{layer} imports {out}"
