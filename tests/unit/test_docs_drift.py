"""The generated tables of the documentation site (docs/behaviours.md, the key tables of docs/robots.md
and docs/task_file.md) come from the registries and must not drift from them."""

from __future__ import annotations

import os

import pytest

from py_trees_manipulation.behaviors import registry
from py_trees_manipulation.interop import docs

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PAGE = os.path.join(ROOT, "docs", "behaviours.md")


def test_behaviour_page_matches_the_registry():
    """Fails when the markers are missing or the table is stale: run 'ptm docs --update docs/behaviours.md'."""
    assert os.path.exists(PAGE), "docs/behaviours.md is missing"
    try:
        current = docs.readme_is_current(PAGE)
    except docs.MarkersMissing as e:
        pytest.fail(f"docs/behaviours.md: {e}")
    assert current, "docs/behaviours.md's behaviour table is out of date: run 'ptm docs --update docs/behaviours.md'"


def test_every_generated_table_of_the_site_is_current():
    """Each block where it belongs, and none stale: run 'ptm docs --update docs/*.md'."""
    where = {"behaviours": "behaviours.md", "robot-keys": "robots.md", "scene-keys": "task_file.md",
             "metrics": "task_file.md"}
    assert set(where) == set(docs.BLOCKS)
    for block, page in where.items():
        path = os.path.join(ROOT, "docs", page)
        assert docs.stale_blocks(path) == [], f"docs/{page}: run 'ptm docs --update docs/{page}'"
        with open(path, encoding="utf-8") as f:
            assert block in docs.blocks_in(f.read()), f"docs/{page} lacks the {block} markers"


def test_a_changed_parameter_makes_the_page_stale(tmp_path, monkeypatch):
    """The drift check is real: a behaviour whose parameters change no longer matches the page."""
    from py_trees_manipulation.behaviors.params import Param

    page = tmp_path / "behaviours.md"
    with open(PAGE, encoding="utf-8") as f:
        page.write_text(f.read())
    assert docs.stale_blocks(str(page)) == []
    cls = registry.behaviours()["Wait"]
    monkeypatch.setattr(cls, "PARAMS", {**cls.PARAMS, "extra_s": Param("float", 1.0, "a parameter the page lacks", unit="s")})
    assert docs.stale_blocks(str(page)) == ["behaviours"]
    assert docs.update_page(str(page)) == ["behaviours"]
    assert "`extra_s` (number in s, default `1.0`)" in page.read_text()


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
