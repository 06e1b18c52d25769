"""Every broken task file in tests/data/broken gives exit code 2 and FILE:LINE with the right message,
from both ``ptm validate`` and ``ptm run``, and never a traceback.

Each file's first line says what it expects: ``# expect: LINE substring | substring ...`` (YAML) or
``<!-- expect: LINE substring | ... -->`` (BehaviorTree.CPP XML, run with ``--scene
tests/data/xml_scene.yaml``). ``ptm run`` is called in-process through ``cli.main`` (one process
for the whole corpus keeps it to seconds); one subprocess run checks the installed entry point.
"""

import glob
import os
import subprocess
import sys

import pytest

from py_trees_manipulation import cli

BROKEN = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "data", "broken"))
XML_SCENE = os.path.normpath(os.path.join(BROKEN, "..", "xml_scene.yaml"))


def _cases():
    out = []
    for path in sorted(glob.glob(os.path.join(BROKEN, "*.yaml")) + glob.glob(os.path.join(BROKEN, "*.xml"))):
        with open(path, encoding="utf-8") as f:
            first = f.readline()
        for head in ("# expect:", "<!-- expect:"):
            if first.startswith(head):
                spec = first[len(head):].strip()
                spec = spec[:-3].strip() if spec.endswith("-->") else spec
                where, _, rest = spec.partition(" ")
                # "LINE" (in this file) or "OTHER.yaml:LINE" (an error inside a file it includes)
                file, _, line = where.rpartition(":")
                where_path = os.path.join(os.path.dirname(path), file) if file else path
                out.append(pytest.param(path, f"{os.path.normpath(where_path) if file else path}:{line}:",
                                        [s.strip() for s in rest.split("|")], id=os.path.basename(path)))
    return out


CASES = _cases()


def test_corpus_has_every_class_of_broken_input():
    assert len(CASES) >= 40
    assert sum(1 for c in CASES if c.values[0].endswith(".xml")) >= 5


@pytest.mark.parametrize("path,where,needles", CASES)
def test_validate_reports_file_line_and_fix(path, where, needles, capsys):
    code = cli.main(["validate", path])
    err = capsys.readouterr().err
    assert code == 2, err
    assert where in err, err
    for needle in needles:
        assert needle in err, f"{needle!r} not in {err!r}"
    assert "Traceback" not in err


@pytest.mark.parametrize("path,where,needles", CASES)
def test_run_reports_file_line_and_fix_without_traceback(path, where, needles, capsys, tmp_path):
    extra = ["--scene", XML_SCENE] if path.endswith(".xml") else []
    code = cli.main(["run", path, "-q", "--log", str(tmp_path / "run.mcap")] + extra)
    out = capsys.readouterr()
    assert code == 2, out.err
    assert where in out.err, out.err
    for needle in needles:
        assert needle in out.err, f"{needle!r} not in {out.err!r}"
    assert "Traceback" not in out.err + out.out


def test_ptm_run_entry_point_exits_2_without_traceback():
    path = os.path.join(BROKEN, "unit_does_not_fit.yaml")
    proc = subprocess.run([sys.executable, "-m", "py_trees_manipulation", "run", path],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert f"{os.path.dirname(path)}/" in proc.stderr and ".yaml:" in proc.stderr
    assert "Traceback" not in proc.stderr
