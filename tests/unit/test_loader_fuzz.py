"""Property-based robustness: random and mutated task files only ever raise TreeLoadError.

The loader promises one documented error (``TreeLoadError`` with FILE:LINE) for any input, and
bounded work: ``locyaml.MAX_FILE_BYTES``, ``MAX_DEPTH``, ``MAX_EXPANDED_VALUES`` and
``loader.MAX_NODES``, ``MAX_INCLUDE_DEPTH``. Hypothesis' per-example deadline turns a hang into a
failure.
"""

from __future__ import annotations

import copy
import glob
import os
import shutil

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from py_trees_manipulation.interop import btxml
from py_trees_manipulation.located import locyaml
from py_trees_manipulation.located.errors import TreeLoadError
from py_trees_manipulation.trees.loader import MAX_INCLUDE_DEPTH, MAX_NODES, load_task

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "examples", "*.yaml")))
FUZZ = settings(max_examples=60, deadline=3000, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                          HealthCheck.too_slow], derandomize=True)


def _only_load_errors(fn, *args):
    try:
        fn(*args)
    except TreeLoadError as e:
        assert e.problems and all(p.message for p in e.problems)


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """A copy of examples/ (includes resolve relative to the task file)."""
    d = tmp_path_factory.mktemp("fuzz")
    shutil.copytree(os.path.join(ROOT, "examples"), d / "examples")
    return d / "examples"


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6), st.floats(allow_nan=True),
                     st.text(max_size=12), st.sampled_from(["{mug_pose}", "${object}", "10 cm", "5 N", "ready",
                                                            "include", "children", "Sequence", "{", "}"]))
_values = st.recursive(_scalars, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                         st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                       max_leaves=12)


def _paths(doc, prefix=()):
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, prefix + (k,))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, prefix + (i,))


@st.composite
def mutated_example(draw):
    with open(draw(st.sampled_from(EXAMPLES))) as f:
        doc = yaml.safe_load(f)
    for _ in range(draw(st.integers(1, 4))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        last = path[-1]
        op = draw(st.sampled_from(["delete", "rename", "replace", "wrap", "duplicate"]))
        if op == "delete":
            del parent[last]
        elif op == "rename" and isinstance(parent, dict):
            parent[draw(st.text(max_size=10))] = parent.pop(last)
        elif op == "replace":
            parent[last] = draw(_values)
        elif op == "wrap":
            parent[last] = draw(st.sampled_from([[parent[last]], {"Inverter": {"child": parent[last]}},
                                                 {"Sequence": {"children": [parent[last]]}}]))
        elif op == "duplicate" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[last]))
    return doc


@FUZZ
@given(doc=mutated_example())
def test_mutated_examples_raise_only_load_errors(doc, workdir):
    path = workdir / "mutant.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    _only_load_errors(load_task, str(path))


@FUZZ
@given(text=st.one_of(st.text(max_size=400),
                      st.lists(st.sampled_from(["tree:", "  Sequence:", "    children:", "      - Success: {}",
                                                "- ", "{", "[", "&a", "*a", "!!python/name:os.system", "\t", ": ",
                                                "include: mutant.yaml", "? [a]", "%YAML 1.1", "---", "\"", "'"]),
                               max_size=20).map("\n".join)))
def test_random_yaml_text_raises_only_load_errors(text, workdir):
    _only_load_errors(locyaml.loads, text)
    path = workdir / "random.yaml"
    path.write_text(text)
    _only_load_errors(load_task, str(path))


@FUZZ
@given(text=st.lists(st.sampled_from(['<root BTCPP_format="4">', "</root>", '<BehaviorTree ID="T">', "</BehaviorTree>",
                                      "<Sequence>", "</Sequence>", "<AlwaysSuccess/>", '<SubTree ID="T"/>',
                                      '<Wait duration_s="{x}"/>', '<Timeout msec="-3">', "</Timeout>", "&amp;", "<",
                                      '<MoveToPose target="{"/>', '<Parallel success_count="x">', "</Parallel>"]),
                     max_size=16).map("".join))
def test_random_xml_raises_only_load_errors(text, workdir):
    path = workdir / "random.xml"
    path.write_text(text)
    _only_load_errors(btxml.load_tree_from_xml, str(path))


def test_limits_give_clear_errors(workdir):
    deep = "tree: " + "[" * 200 + "]" * 200
    with pytest.raises(TreeLoadError, match="nested"):
        locyaml.loads(deep)
    bomb = ["a0: &a0 [x, x, x, x, x, x, x, x, x]"] + [
        f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 9)]
    with pytest.raises(TreeLoadError, match="expands to more than"):
        locyaml.loads("\n".join(bomb))
    with pytest.raises(TreeLoadError, match="larger than"):
        locyaml.loads("a: " + "x" * (locyaml.MAX_FILE_BYTES + 1))
    # an include chain deeper than MAX_INCLUDE_DEPTH
    chain = workdir / "chain"
    chain.mkdir(exist_ok=True)
    n = MAX_INCLUDE_DEPTH + 3
    for i in range(n):
        (chain / f"c{i}.yaml").write_text(f"tree:\n  include: c{i + 1}.yaml\n" if i < n - 1 else "tree: {Success: {}}\n")
    with pytest.raises(TreeLoadError, match=f"deeper than {MAX_INCLUDE_DEPTH}"):
        load_task(str(chain / "c0.yaml"))
    # a huge fan-out of includes stops at MAX_NODES
    (chain / "leaf.yaml").write_text("tree:\n  Sequence:\n    children:\n" + "      - Success: {}\n" * 100)
    (chain / "fan.yaml").write_text("tree:\n  Sequence:\n    children:\n" + "      - include: leaf.yaml\n" * 100)
    with pytest.raises(TreeLoadError, match=f"more than {MAX_NODES} nodes"):
        load_task(str(chain / "fan.yaml"))
