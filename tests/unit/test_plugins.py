"""A third-party behaviour registered through the py_trees_manipulation.behaviours entry point."""

from __future__ import annotations

import sys
import textwrap
import warnings

import pytest

from py_trees_manipulation.behaviors import registry
from py_trees_manipulation.interop import docs, schema
from py_trees_manipulation.located.errors import TreeLoadError
from py_trees_manipulation.trees.loader import load_task

PLUGIN = '''
from py_trees.common import Status
from py_trees_manipulation.behaviors.base import ManipulationBehaviour
from py_trees_manipulation.behaviors.params import REQUIRED, Param


class WaveHello(ManipulationBehaviour):
    """Wave the arm a number of times (a demo plugin behaviour)."""

    ABSTRACT = False
    PARAMS = {"times": Param("int", REQUIRED, "how many waves", min=1, max=10),
              "amplitude_m": Param("float", 0.05, "wave amplitude", unit="m", min=0.0, max=0.3)}

    def update(self):
        return Status.SUCCESS
'''


@pytest.fixture
def installed_plugin(tmp_path, monkeypatch):
    """An installed distribution (dist-info with entry_points.txt on sys.path), as pip would leave it."""
    registry.behaviours()  # built-ins (and real plugins) loaded first, into the real registry
    pkg = tmp_path / "ptm_demo_plugin"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent(PLUGIN))
    info = tmp_path / "ptm_demo_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ptm-demo-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[py_trees_manipulation.behaviours]\nwave = ptm_demo_plugin\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(registry, "_LOADED", False)
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    yield tmp_path
    sys.modules.pop("ptm_demo_plugin", None)


def test_plugin_behaviour_loads_validates_and_appears_in_schema_and_docs(installed_plugin, tmp_path):
    assert "WaveHello" in registry.behaviours()
    task_file = tmp_path / "wave.yaml"
    task_file.write_text("tree:\n  WaveHello: {times: 3, amplitude_m: 8 cm}\n")
    node = load_task(str(task_file)).tree
    assert node.type == "WaveHello" and node.params == {"times": 3, "amplitude_m": pytest.approx(0.08)}
    task_file.write_text("tree:\n  WaveHello: {times: 30}\n")
    with pytest.raises(TreeLoadError, match=r"wave.yaml:2:.*30 is above the maximum 10"):
        load_task(str(task_file))
    body = schema.task_schema()["$defs"]["typed_node"]["properties"]["WaveHello"]
    assert body["required"] == ["times"] and "in m" in body["properties"]["amplitude_m"]["description"]
    v = schema.validator()
    assert v.is_valid({"tree": {"WaveHello": {"times": 2}}})
    assert not v.is_valid({"tree": {"WaveHello": {"times": 0}}})
    assert "| `WaveHello` | Wave the arm a number of times" in docs.behaviours_markdown()


def test_a_broken_plugin_warns_and_does_not_break_the_tool(installed_plugin, monkeypatch):
    (installed_plugin / "ptm_demo_plugin" / "__init__.py").write_text("raise ImportError('missing dependency foo')\n")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        names = registry.behaviours()
    assert "WaveHello" not in names and "MoveToPose" in names
    assert any("missing dependency foo" in str(w.message) for w in caught)
