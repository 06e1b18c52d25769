"""The generated JSON Schema accepts every example and rejects the schema-level broken files."""

from __future__ import annotations

import glob
import os
import re

import jsonschema
import pytest
import yaml

from py_trees_manipulation.interop import schema
from py_trees_manipulation.trees.loader import TOP_KEYS

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
#: task files and the subtrees they include (examples/robots/ holds hardware robot files, not tasks)
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "examples", "*.yaml")) +
                  glob.glob(os.path.join(ROOT, "examples", "subtrees", "*.yaml")))
BROKEN = os.path.join(ROOT, "tests", "data", "broken")

#: broken files whose mistake is visible to a JSON Schema
SCHEMA_LEVEL = [
    "bad_choice", "bad_pose", "bad_set_target", "blackboard_not_mapping", "decorator_children", "empty_composite",
    "missing_parameter", "missing_tree", "mistyped_parameter", "not_a_bool", "out_of_range", "scene_negative_mass",
    "scene_unknown_key", "two_types_in_node", "unit_does_not_fit", "unknown_behaviour", "unknown_decorator",
    "unknown_parameter", "unknown_top_key", "unknown_unit", "overflow_number", "substitution_literal",
]
#: mistakes only the loader can see: other files (includes), names across the tree, ${...}
#: declarations, or YAML the parser rejects before any schema sees it
NOT_SCHEMA_LEVEL = [
    "circular_a", "circular_b", "duplicate_key", "duplicate_names", "include_unknown_parameter", "missing_include",
    "parallel_selected", "unknown_substitution",
    # data flow through the tree, one parameter against another, a URDF's contents, a float's range
    "blackboard_misspelt", "blackboard_selector_branch", "blackboard_value_mismatch", "cartesian_target_and_delta",
    "overflow_quantity", "parallel_selected_unused", "parameter_value_substitution", "scene_not_a_urdf",
]
YAML_LEVEL = ["malformed_yaml", "python_tag", "tab_indent"]


@pytest.fixture(scope="module")
def validator():
    return schema.validator()


def test_schema_is_valid_draft_2020_12_and_matches_the_loader_keys():
    s = schema.task_schema()
    jsonschema.Draft202012Validator.check_schema(s)
    assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert set(s["properties"]) == set(TOP_KEYS)
    types = s["$defs"]["typed_node"]["properties"]
    for name in ("Sequence", "Selector", "Parallel", "Retry", "Timeout", "MoveToPose", "GripperCommand", "Wait"):
        assert name in types


def test_parameter_declarations_reach_the_schema():
    body = schema.task_schema()["$defs"]["typed_node"]["properties"]["GripperCommand"]
    pos = body["properties"]["position"]
    number = next(a for a in pos["anyOf"] if a.get("type") == "number")
    assert (number["minimum"], number["maximum"]) == (0.0, 0.2)
    # units and frames are in the description (what editors show on hover): no x- keywords,
    # which ajv's strict mode refuses
    assert "number in m" in pos["description"] and not any(k.startswith("x-") for k in pos)
    target = schema.task_schema()["$defs"]["typed_node"]["properties"]["MoveToPose"]["properties"]
    assert any("frame" in p["description"] for p in target.values())
    assert body["required"] == ["position"]
    assert body["additionalProperties"] is False
    eff = body["properties"]["max_effort"]
    assert eff["default"] == -1.0 and "effort limit" in eff["description"]


@pytest.mark.parametrize("text,ok", [("10 cm", True), ("0.5 m", True), ("3mm", True), ("-2e-3 m", True),
                                     ("5 N", False), ("3 fortnights", False), ("cm", False), ("1 0 cm", False)])
def test_quantity_pattern_takes_units_of_the_parameters_dimension(text, ok):
    assert bool(re.search(schema.quantity_pattern("m"), text)) is ok


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: os.path.relpath(p, ROOT))
def test_every_example_validates(path, validator):
    with open(path) as f:
        doc = yaml.safe_load(f)
    errors = sorted(validator.iter_errors(doc), key=str)
    assert not errors, "\n".join(e.message for e in errors[:5])


def _broken(name: str) -> str:
    path = os.path.join(BROKEN, name + ".yaml")
    if not os.path.exists(path):
        pytest.skip(f"{name}.yaml is not in the broken corpus")
    return path


@pytest.mark.parametrize("name", SCHEMA_LEVEL)
def test_schema_rejects_schema_level_mistakes(name, validator):
    with open(_broken(name)) as f:
        doc = yaml.safe_load(f)
    assert not validator.is_valid(doc)


@pytest.mark.parametrize("name", NOT_SCHEMA_LEVEL)
def test_loader_only_mistakes_are_documented_as_such(name, validator):
    """These files are schema-valid: the schema cannot know other files, tree-wide names or ${...}."""
    with open(_broken(name)) as f:
        doc = yaml.safe_load(f)
    assert validator.is_valid(doc)


@pytest.mark.parametrize("name", YAML_LEVEL)
def test_yaml_level_mistakes_never_reach_a_schema(name):
    with pytest.raises(yaml.YAMLError):
        with open(_broken(name)) as f:
            yaml.safe_load(f)


def test_broken_corpus_is_fully_classified():
    if not os.path.isdir(BROKEN):
        pytest.skip("no broken corpus")
    names = {os.path.splitext(f)[0] for f in os.listdir(BROKEN) if f.endswith(".yaml")}
    helpers = {"grasp"}  # included by other broken files, valid on its own
    unclassified = names - set(SCHEMA_LEVEL) - set(NOT_SCHEMA_LEVEL) - set(YAML_LEVEL) - helpers
    assert not unclassified, f"classify these broken files in test_schema.py: {sorted(unclassified)}"


@pytest.mark.parametrize("doc,ok", [
    ({"tree": {"MoveCartesian": {"delta": [0, 0, "${lift_m}"]}}}, True),          # substitution in a list
    ({"tree": {"MoveToPose": {"target": "{${pose_key}}"}}}, True),                 # key from a substitution
    ({"tree": {"MoveToPose": {"target": "{mug_pose}"}}}, True),                    # blackboard reference
    ({"tree": {"MoveToPose": {"target": {"position": [0.4, 0, 0.3], "rpy_deg": [180, 0, 0]}}}}, True),
    ({"tree": {"MoveToPose": {"target": {"position": [0.4, 0, 0.3], "rpy_deg": [180, 0, 0], "rpy": [0, 0, 0]}}}}, False),
    ({"tree": {"Wait": {"duration_s": "{wait_s}"}}}, True),
    ({"tree": {"Timeout": {"duration_s": "{t}", "child": {"Success": None}}}}, False),  # blackboard=False
    ({"tree": {"Wait": {"duration_s": "500 ms"}}}, True),
    ({"tree": {"Wait": {"duration_s": -1}}}, False),
    ({"tree": {"Success": None}}, True),
    ({"tree": {"include": "sub.yaml", "with": {"a": 1}, "name": "s"}}, True),
    ({"tree": {"include": "sub.yaml", "whith": {"a": 1}}}, False),
    ({"tree": {"Parallel": {"policy": "success_on_selected", "children": [{"Success": None}]}}}, False),
])
def test_value_rules(doc, ok, validator):
    assert validator.is_valid(doc) is ok
