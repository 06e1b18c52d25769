"""locyaml parses with libyaml's parser when PyYAML has it (issue 35: a run's three YAML files in
about 2 ms instead of 10 ms) and with PyYAML's own parser otherwise, or when a document has a
problem: the same data and the same locations either way, and PyYAML's messages (which the hints
know) for every error."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from py_trees_manipulation.located import locyaml
from py_trees_manipulation.located.errors import TreeLoadError

ROOT = Path(__file__).resolve().parents[2]
#: the examples, robot models, scenarios and the tests' files (some of them broken on purpose)
FILES = sorted({*ROOT.glob("examples/**/*.yaml"), *ROOT.glob("py_trees_manipulation/**/*.yaml"),
                *ROOT.glob("scenarios/**/*.yaml"), *ROOT.glob("tests/**/*.yaml")})

needs_libyaml = pytest.mark.skipif(getattr(yaml, "CSafeLoader", None) is None, reason="PyYAML without libyaml")


def located(x, out):
    """Every mapping's and list's locations, depth first."""
    if isinstance(x, dict):
        out.append((x.loc, sorted(x.key_locs.items(), key=repr), sorted(x.value_locs.items(), key=repr)))
        for v in x.values():
            located(v, out)
    elif isinstance(x, list):
        out.append((x.loc, list(x.item_locs)))
        for v in x:
            located(v, out)
    return out


def parsed(text: str, name: str):
    try:
        return locyaml.loads(text, name)
    except TreeLoadError as e:
        return f"TreeLoadError: {e}"


def both(text: str, name: str, monkeypatch):
    fast = parsed(text, name)
    monkeypatch.setattr(locyaml, "_C_LOADER", None)
    slow = parsed(text, name)
    monkeypatch.undo()
    return fast, slow


@needs_libyaml
def test_every_file_reads_the_same_with_either_parser(monkeypatch):
    assert len(FILES) > 60
    broken = 0
    for path in FILES:
        text = path.read_text(encoding="utf-8")
        fast, slow = both(text, str(path), monkeypatch)
        assert fast == slow, path
        assert type(fast) is type(slow), path
        assert located(fast, []) == located(slow, []), path
        broken += isinstance(fast, str)
    assert broken >= 2   # malformed_yaml.yaml, tab_indent.yaml: PyYAML's messages


@needs_libyaml
def test_non_ascii_text_flow_style_and_yaml_1_2_numbers_read_the_same(monkeypatch):
    text = ('x: {a: "éé€😀", b: 1}\n# ü\nname: "日本語"\nlist: [é, 2, {c: 3}]\n"ключ": 1e5\n'
            "float: 1.0e300\nbig: 1e308\nwhen: 2026-12-07\nnone: ~\nyes_no: [yes, no, on, off]\n")
    fast, slow = both(text, "t.yaml", monkeypatch)
    assert fast == slow
    assert fast["big"] == 1e308 and fast["list"][2] == {"c": 3}
    assert located(fast, []) == located(slow, [])
    assert fast["x"].value_locs["b"].col == 19   # columns count characters, not bytes


@needs_libyaml
@pytest.mark.parametrize("text, line, message, hint", [
    ("a:\n\tb: 1\n", 2, "found character '\\t' that cannot start any token", "indent with spaces, not tabs"),
    ("a:\n  b: 1\n c: 2\n", 3, "expected <block end>", "not indented like the lines above it"),
    ("a: 1\na: 2\n", 2, "duplicate key 'a' (first at line 1)", "remove one of them"),
    ("a: !!python/object:os.system x\n", 1, "unsupported YAML tag", "not allowed in task files"),
])
def test_a_problem_is_reported_with_pyyamls_message_and_the_hint(text, line, message, hint):
    with pytest.raises(TreeLoadError) as e:
        locyaml.loads(text, "bad.yaml")
    p = e.value.problems[0]
    assert message in p.message and hint in p.hint
    assert p.loc.file == "bad.yaml" and p.loc.line == line


@needs_libyaml
def test_brackets_nested_past_libyamls_limit_are_refused_where_the_limit_is_passed():
    """libyaml stops at 1,000 open brackets; PyYAML's own parser, run on the same text for its
    messages, took 6 s (quadratic in the depth) to reach its recursion limit on 3,000."""
    text = "a: " + "[" * 3000 + "]" * 3000 + "\n"
    with pytest.raises(TreeLoadError) as e:
        locyaml.loads(text, "deep.yaml")
    assert str(e.value.problems[0].loc) == "deep.yaml:1:1003"
    assert "nested too deeply" in e.value.problems[0].message
