"""The README's behaviour table is generated from the registry and must not drift from it."""

from __future__ import annotations

import os

import pytest

from py_trees_manipulation.behaviors import registry
from py_trees_manipulation.interop import docs

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
README = os.path.join(ROOT, "README.md")


def test_readme_behaviour_table_matches_the_registry():
    """Fails when the markers are missing or the table is stale: run 'ptm docs --update-readme README.md'."""
    assert os.path.exists(README), "README.md is missing"
    try:
        current = docs.readme_is_current(README)
    except docs.MarkersMissing as e:
        pytest.fail(f"README.md: {e}")
    assert current, "README.md's behaviour table is out of date: run 'ptm docs --update-readme README.md'"


def test_table_lists_every_behaviour_with_parameters_and_units():
    md = docs.behaviours_markdown()
    for name in registry.behaviours():
        assert f"| `{name}` |" in md
    assert "`position` (number in m or 'open' / 'closed', **required**, 0 ... 0.2)" in md
    assert "writes the keys named by `output_key`" in md
    assert "| `Timeout` (decorator) |" in md


def test_update_readme_rewrites_only_between_markers(tmp_path):
    f = tmp_path / "README.md"
    f.write_text(f"# T\nbefore\n{docs.START}\nold table\n{docs.END}\nafter\n")
    assert docs.update_readme(str(f)) is True
    text = f.read_text()
    assert text.startswith("# T\nbefore\n") and text.endswith(f"{docs.END}\nafter\n") and "old table" not in text
    assert docs.readme_is_current(str(f)) and docs.update_readme(str(f)) is False
    f.write_text("no markers\n")
    with pytest.raises(docs.MarkersMissing):
        docs.readme_is_current(str(f))
