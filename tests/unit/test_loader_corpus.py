"""Every broken task file in tests/data/broken gives exit code 2 and FILE:LINE with the right message.

Each file's first line says what it expects: ``# expect: LINE substring | substring ...``.
"""

import glob
import os
import subprocess
import sys

import pytest

from py_trees_manipulation import cli

BROKEN = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "data", "broken"))


def _cases():
    out = []
    for path in sorted(glob.glob(os.path.join(BROKEN, "*.yaml"))):
        with open(path, encoding="utf-8") as f:
            first = f.readline()
        if first.startswith("# expect:"):
            where, _, rest = first[len("# expect:"):].strip().partition(" ")
            # "LINE" (in this file) or "OTHER.yaml:LINE" (an error inside a file it includes)
            file, _, line = where.rpartition(":")
            where_path = os.path.join(os.path.dirname(path), file) if file else path
            out.append(pytest.param(path, f"{os.path.normpath(where_path) if file else path}:{line}:",
                                    [s.strip() for s in rest.split("|")], id=os.path.basename(path)))
    return out


CASES = _cases()


def test_corpus_has_at_least_20_broken_files():
    assert len(CASES) >= 20


@pytest.mark.parametrize("path,where,needles", CASES)
def test_validate_reports_file_line_and_fix(path, where, needles, capsys):
    code = cli.main(["validate", path])
    err = capsys.readouterr().err
    assert code == 2, err
    assert where in err, err
    for needle in needles:
        assert needle in err, f"{needle!r} not in {err!r}"
    assert "Traceback" not in err


@pytest.mark.parametrize("name", ["unknown_behaviour.yaml", "unit_does_not_fit.yaml", "circular_a.yaml", "python_tag.yaml"])
def test_ptm_run_exits_2_without_traceback(name):
    path = os.path.join(BROKEN, name)
    proc = subprocess.run([sys.executable, "-m", "py_trees_manipulation", "run", path],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert f"{os.path.dirname(path)}/" in proc.stderr and ".yaml:" in proc.stderr
    assert "Traceback" not in proc.stderr
