"""The documentation site (mkdocs.yml, docs/*.md) builds strictly, and documents every metric and
summary key a run reports."""

from __future__ import annotations

import ast
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
PKG = ROOT / "py_trees_manipulation"
TASK_FILE_PAGE = ROOT / "docs" / "task_file.md"


def test_the_site_builds_strictly(tmp_path):
    """`mkdocs build --strict`: a link to a missing page or a missing anchor, a page left out of the
    nav, an unknown config key all fail (mkdocs.yml's `validation`)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(ROOT / "mkdocs.yml"),
                          "-d", str(tmp_path / "site")], cwd=ROOT, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    pages = sorted(p.stem for p in (ROOT / "docs").glob("*.md"))
    for page in pages:
        built = tmp_path / "site" / ("index.html" if page == "index" else f"{page}/index.html")
        assert built.exists(), page
    # the generated behaviour table made it into the HTML
    assert "<code>MoveCartesian</code>" in (tmp_path / "site" / "behaviours" / "index.html").read_text()


def test_a_broken_anchor_fails_the_build(tmp_path):
    """The strict build is a real check: the same site with one link to a missing anchor fails."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for p in (ROOT / "docs").iterdir():
        if p.is_file():
            (docs / p.name).write_bytes(p.read_bytes())
    (docs / "cli.md").write_text((docs / "cli.md").read_text() + "\nSee [nowhere](task_file.md#no-such-heading).\n")
    cfg = (ROOT / "mkdocs.yml").read_text().replace("docs_dir: docs", f"docs_dir: {docs}")
    (tmp_path / "mkdocs.yml").write_text(cfg)
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    out = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(tmp_path / "mkdocs.yml"),
                          "-d", str(tmp_path / "site")], cwd=ROOT, env=env, capture_output=True, text=True)
    assert out.returncode != 0
    assert "no-such-heading" in out.stdout + out.stderr


def _documented_metrics() -> set[str]:
    text = TASK_FILE_PAGE.read_text(encoding="utf-8")
    section = text.split("### Metrics", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for row in section.splitlines():
        if row.startswith("| `"):
            names.update(re.findall(r"`([a-z_]+)`", row.split("|")[1]))
    return names


def _metric_names_in_the_code() -> dict[str, str]:
    """Metric names the package reports: keys of the dicts a class's ``metrics()`` returns (and of the
    private methods it calls), and the behaviours' ``/metrics/<name>`` blackboard keys."""
    found: dict[str, str] = {}
    for path in sorted(PKG.rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("/metrics/") \
                    and node.value.count("/") == 2 and len(node.value) > len("/metrics/"):
                found.setdefault(node.value[len("/metrics/"):], rel)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "_write_metric" \
                    and node.args and isinstance(node.args[0], ast.Constant):
                found.setdefault(node.args[0].value, rel)
            if not isinstance(node, ast.ClassDef):
                continue
            methods = {f.name: f for f in node.body if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))}
            todo, seen = ["metrics"], set()
            while todo:
                name = todo.pop()
                if name in seen or name not in methods:
                    continue
                seen.add(name)
                for n in ast.walk(methods[name]):
                    if isinstance(n, ast.Dict):
                        found.update({k.value: rel for k in n.keys if isinstance(k, ast.Constant)
                                      and isinstance(k.value, str) and k.value not in found})
                    if isinstance(n, ast.Assign):
                        for t in n.targets:
                            if isinstance(t, ast.Subscript) and isinstance(t.slice, ast.Constant) \
                                    and isinstance(t.slice.value, str):
                                found.setdefault(t.slice.value, rel)
                    if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr.startswith("_") \
                            and isinstance(n.func.value, ast.Name) and n.func.value.id == "self":
                        todo.append(n.func.attr)
    return found


def test_every_metric_the_code_reports_is_documented():
    """docs/task_file.md's metrics table names every metric (what, unit, frame): a new one needs a row."""
    in_code = _metric_names_in_the_code()
    assert {"object_lift_m", "max_fingertip_force_n", "grasp_fix_attaches", "door_angle_deg", "min_clearance_m",
            "chosen_grasp", "grasp_changes", "rosbridge_url"} <= set(in_code)  # the scan sees every family
    missing = {k: v for k, v in in_code.items() if k not in _documented_metrics()}
    assert not missing, f"metrics without a row in docs/task_file.md's metrics table: {missing}"


def test_a_runs_summary_and_metrics_are_documented(pick_and_lift_run):
    """Every key of a real run's summary and of its metrics has its row on the task file page."""
    text = TASK_FILE_PAGE.read_text(encoding="utf-8")
    summary_rows = text.split("## Run summary", 1)[1].split("### Metrics", 1)[0]
    summary = pick_and_lift_run.summary
    for key in summary:
        if not key.startswith("_"):
            assert f"`{key}`" in summary_rows, key
    assert set(summary["metrics"]) <= _documented_metrics(), set(summary["metrics"]) - _documented_metrics()
