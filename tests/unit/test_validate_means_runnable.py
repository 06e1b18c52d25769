"""Validate means runnable: every tree the loader accepts builds (property test over mutated examples).

Mutations change whole sections (as tests/unit/test_loader_fuzz.py does) and, more often, set one
parameter of one node to a value drawn from the shapes users write (numbers, quantities with units,
``{key}`` references, ``${...}`` substitutions, poses, lists, null). Whatever ``load_task`` accepts
must then build with ``build_tree`` and set up without a backend: a ``ParamError`` (or anything
else) there is a class of input that ``ptm validate`` passes and ``ptm run`` crashes on.
"""

from __future__ import annotations

import copy
import glob
import os
import shutil
import warnings

import py_trees
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from py_trees_manipulation.behaviors import registry
from py_trees_manipulation.interop import btxml
from py_trees_manipulation.located.errors import TreeLoadError
from py_trees_manipulation.trees.factory import build_tree
from py_trees_manipulation.trees.loader import load_task
from py_trees_manipulation.trees.nodes import COMPOSITES, DECORATORS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "examples", "*.yaml")))
# bounded: ~80 mutants in a few seconds; derandomized so a failure reproduces
PROPERTY = settings(max_examples=80, deadline=5000, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    d = tmp_path_factory.mktemp("runnable")
    shutil.copytree(os.path.join(ROOT, "examples"), d / "examples")
    return d / "examples"


_scalar = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.integers(-10**9, 10**9),
    st.floats(allow_nan=True, allow_infinity=True), st.floats(-2.0, 2.0),
    st.sampled_from(["${", "${x}", "${object}", "{", "}", "{}", "{object_pose}", "{place_pose}", "{/abs/key}",
                     "{a.b-c}", "{${x}}", "10 cm", "5 N", "1e999 s", "1e308", "-1e308 m", "0.5 s", "3 kg",
                     "90 deg", "1 rad", "ready", "panda", "mug", "on_completion", "SUCCESS", "success_on_one",
                     "", " ", "nan", ".inf", "-0", "0x10", "1_000", "==", "<", "a b", "/x", "x/"]),
    st.text(max_size=6),
)
_value = st.recursive(_scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.fixed_dictionaries({}, optional={"position": inner, "orientation": inner, "rpy_deg": inner}),
    st.dictionaries(st.sampled_from(["position", "orientation", "rpy_deg", "x", "panda/hand"]), inner, max_size=3)),
    max_leaves=8)


#: values at the edges of each parameter kind (the loader's coercion is where bugs hide)
_BY_KIND = {
    "float": st.one_of(st.floats(-1e3, 1e3), st.sampled_from(["1e308", "-1e308", "1e-320", "0 m", "1e2 cm", "1 min",
                                                               "0.001 ms", "360 deg", "1e3 kN", "-0.0"])),
    "int": st.sampled_from([-1, 0, 1, 2, 10, 2**31, -(2**63), 10**20]),
    "bool": st.booleans(),
    "str": st.sampled_from(["", " ", "x", "{x}", "${", "a/b", "ready", "panda", "mug", "/x"]),
    "key": st.sampled_from(["x", "/x", "a/b", "a.b", "a-b", "_", "a//b", "a/", "x.", "/a/b/c", "{x}", "{/x}",
                            "metrics/x", "/metrics", "regrasp"]),
    "pose": st.one_of(st.sampled_from([[0, 0, 0], [1e308, 0, 0], [0, 0, 0, 1, 0, 0, 0], {"position": [0, 0, 0]},
                                       {"position": [0, 0, 0], "orientation": [0, 0, 0, 0]},
                                       {"position": [0, 0, 0], "orientation": [2, 0, 0, 0]},
                                       {"position": [0, 0, 0], "rpy_deg": [1e308, 0, 0]},
                                       {"position": ["1 m", "2 cm", 0]}, [[1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]]])),
    "vector3": st.lists(st.one_of(st.floats(-10, 10), st.just("1e308"), st.just("3 cm")), min_size=3, max_size=3),
    "float_list": st.lists(st.one_of(st.floats(-3, 3), st.just("90 deg")), min_size=0, max_size=8),
}


def _nodes(node, out):
    """Every node mapping ``{Type: body}`` of a plain YAML tree (includes too)."""
    if isinstance(node, dict) and len(node) == 1:
        (kind, body), = node.items()
        if isinstance(body, dict):
            out.append((kind, body))
            for c in body.get("children", []) if isinstance(body.get("children"), list) else []:
                _nodes(c, out)
            if "child" in body:
                _nodes(body["child"], out)
    return out


def _declarations(kind):
    if kind in COMPOSITES:
        return COMPOSITES[kind]
    if kind in DECORATORS:
        return DECORATORS[kind]
    cls = registry.lookup(kind)
    return cls.all_params() if cls is not None else {}


def _declared(kind):
    return list(_declarations(kind))


@st.composite
def mutant(draw):
    with open(draw(st.sampled_from(EXAMPLES))) as f:
        doc = yaml.safe_load(f)
    for _ in range(draw(st.integers(1, 3))):
        nodes = _nodes(doc.get("tree"), [])
        what = draw(st.sampled_from(["param", "param", "param", "drop", "parameters", "blackboard"]))
        if what in ("param", "drop") and nodes:
            kind, body = draw(st.sampled_from(nodes))
            keys = _declared(kind) + [k for k in body if k not in ("children", "child", "name")]
            if not keys:
                continue
            key = draw(st.sampled_from(sorted(set(keys))))
            decl = _declarations(kind).get(key)
            if what == "drop":
                body.pop(key, None)
            elif decl is not None and decl.kind == "choice" and draw(st.booleans()):
                body[key] = draw(st.sampled_from(list(decl.choices or ())))
            elif decl is not None and decl.kind in _BY_KIND and draw(st.booleans()):
                body[key] = draw(_BY_KIND[decl.kind])
            else:
                body[key] = draw(_value)
        elif what == "parameters" and isinstance(doc.get("parameters"), dict) and doc["parameters"]:
            key = draw(st.sampled_from(sorted(doc["parameters"])))
            doc["parameters"][key] = draw(_value)
        elif what == "blackboard":
            doc.setdefault("blackboard", {})
            if isinstance(doc["blackboard"], dict):
                doc["blackboard"][draw(st.sampled_from(["place_pose", "object_pose", "x", "regrasp"]))] = draw(_value)
    return doc


def _builds(path, out_dir=None):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            task = load_task(path)
    except TreeLoadError as e:
        assert e.problems and all(p.message for p in e.problems)
        return
    py_trees.blackboard.Blackboard.clear()
    tree = build_tree(task)  # must not raise: the loader accepted it
    tree.setup(timeout=py_trees.common.Duration.INFINITE)
    py_trees.display.unicode_tree(tree.root)  # ptm render
    try:  # ptm convert: an export refusal is a TreeLoadError naming the node, never a traceback
        xml = btxml.export_xml(task)
    except TreeLoadError as e:
        assert "cannot export" in str(e)
        return
    # the export goes beside the file only for mutants (already in a scratch folder), never into examples/
    path_xml = os.path.join(out_dir or os.path.dirname(path), os.path.splitext(os.path.basename(path))[0] + ".xml")
    with open(path_xml, "w") as f:
        f.write(xml)
    back = btxml.load_tree_from_xml(path_xml)  # what we write, we read
    diff = btxml.tree_differences(task.tree, back.tree)
    assert diff == [], diff


@PROPERTY
@given(doc=mutant())
def test_every_tree_the_loader_accepts_builds(doc, workdir):
    path = workdir / "mutant.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False, allow_unicode=True))
    _builds(str(path))


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_every_example_builds(path, tmp_path):
    _builds(path, out_dir=str(tmp_path))
