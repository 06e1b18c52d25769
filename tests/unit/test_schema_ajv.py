"""The task-file JSON Schema in ajv's strict mode (every strict option on), against every example.

ajv (npm ``ajv`` and ``ajv-formats``, installed in ``tests/js/`` by ``.ci/run``) is what VS Code
extensions and many CI schema checks use; its strict mode refuses unknown keywords (``x-unit``),
type unions and ``required`` without ``type: object`` and the keys declared beside it. The
validation itself (``tests/js/check_schema.mjs``) runs in Node.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess

import pytest
import yaml

from py_trees_manipulation.interop import schema

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
JS = os.path.join(ROOT, "tests", "js")
EXAMPLES = sorted(glob.glob(os.path.join(ROOT, "examples", "*.yaml")) +
                  glob.glob(os.path.join(ROOT, "examples", "subtrees", "*.yaml")))
NODE = shutil.which("node")

pytestmark = [
    pytest.mark.skipif(NODE is None, reason="node is not installed (apt-get install nodejs): ajv runs in Node"),
]


def _ajv(schema_path, docs):
    if not os.path.isdir(os.path.join(JS, "node_modules", "ajv")):
        why = "ajv is not installed: run `npm ci --prefix tests/js` (.ci/run does)"
        if os.environ.get("PTM_REQUIRE_AJV"):  # .ci/run installs it and sets this: a failure there
            pytest.fail(why)
        pytest.skip(why)
    proc = subprocess.run([NODE, os.path.join(JS, "check_schema.mjs"), str(schema_path), *map(str, docs)],
                          capture_output=True, text=True, timeout=120)
    assert proc.stdout, proc.stderr
    return json.loads(proc.stdout.splitlines()[-1])


def test_ajv_strict_accepts_the_schema_and_every_example(tmp_path):
    schema_path = tmp_path / "task.schema.json"
    schema_path.write_text(schema.schema_json())
    docs = []
    for path in EXAMPLES:
        with open(path) as f:
            doc = yaml.safe_load(f)
        out = tmp_path / (os.path.relpath(path, ROOT).replace(os.sep, "__") + ".json")
        out.write_text(json.dumps(doc))
        docs.append(out)
    result = _ajv(schema_path, docs)
    assert result["compiled"], result["error"]
    bad = {os.path.basename(k): v for k, v in result["results"].items() if v}
    assert bad == {}
    assert len(result["results"]) == len(EXAMPLES) >= 10


def test_ajv_strict_refuses_what_the_schema_refuses(tmp_path):
    """Not a schema that accepts everything: a unit of the wrong dimension and an unknown key fail."""
    schema_path = tmp_path / "task.schema.json"
    schema_path.write_text(schema.schema_json())
    bad_unit = tmp_path / "bad_unit.json"
    bad_unit.write_text(json.dumps({"tree": {"GripperCommand": {"position": "5 N"}}}))
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps({"tree": {"Wait": {"duration_s": 1.0}}, "sceen": {}}))
    good = tmp_path / "good.json"
    good.write_text(json.dumps({"tree": {"GripperCommand": {"position": "4 cm"}}}))
    result = _ajv(schema_path, [bad_unit, unknown, good])
    assert result["compiled"], result["error"]
    assert result["results"][str(bad_unit)] and result["results"][str(unknown)]
    assert result["results"][str(good)] == []
