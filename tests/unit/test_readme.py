"""The README's two commands exist, .ci/run runs exactly the README's test command, and its links
and examples lead somewhere."""

import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _readme_commands():
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        text = f.read()
    return re.findall(r"```sh\n(.+?)\n```", text)[:2]


def test_readme_opens_with_the_main_job_and_the_test_command():
    run_cmd, test_cmd = _readme_commands()
    assert "ptm run examples/pick_and_lift.yaml" in run_cmd
    assert "pytest" in test_cmd


def test_ci_runs_the_readme_test_command():
    _, test_cmd = _readme_commands()
    with open(os.path.join(REPO, ".ci", "run"), encoding="utf-8") as f:
        ci = f.read()
    assert test_cmd in ci.splitlines()


def test_examples_named_in_the_readme_exist():
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        text = f.read()
    for path in set(re.findall(r"examples/[a-z_/]+\.yaml", text)):
        assert os.path.exists(os.path.join(REPO, path)), path


def test_examples_named_in_the_docs_exist():
    for page in sorted(os.listdir(os.path.join(REPO, "docs"))):
        if page.endswith(".md"):
            with open(os.path.join(REPO, "docs", page), encoding="utf-8") as f:
                text = f.read()
            for path in set(re.findall(r"examples/[a-z_/]+\.yaml", text)):
                assert os.path.exists(os.path.join(REPO, path)), f"docs/{page}: {path}"


def _slugs(markdown_text):
    """The anchors MkDocs gives the headings of a page (Python-Markdown's toc slugify)."""
    from markdown.extensions.toc import slugify

    return {slugify(re.sub(r"[`*]", "", h), "-") for h in re.findall(r"^#+ (.+)$", markdown_text, flags=re.M)}


def test_every_relative_link_in_the_readme_resolves():
    """A link to a file names one that exists; a link to a heading of a Markdown file names one it has."""
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        text = f.read()
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    relative = [link for link in links if not re.match(r"[a-z]+://|mailto:", link)]
    assert len(relative) >= 15
    for link in relative:
        path, _, anchor = link.partition("#")
        target = os.path.join(REPO, path) if path else os.path.join(REPO, "README.md")
        assert os.path.exists(target), f"README.md links to {link}: no such file"
        if anchor and target.endswith(".md"):
            with open(target, encoding="utf-8") as f:
                assert anchor in _slugs(f.read()), f"README.md links to {link}: no such heading"


def test_the_readme_stays_a_ten_minute_read_that_points_to_every_page():
    """The README is the newcomer's page (install, tour, examples, where to go next); reference text
    goes into docs/. Every page of the site is one link away from it."""
    with open(os.path.join(REPO, "README.md"), encoding="utf-8") as f:
        text = f.read()
    assert len(text.splitlines()) <= 200, "README.md over 200 lines: move reference text into a page of docs/"
    for page in sorted(os.listdir(os.path.join(REPO, "docs"))):
        if page.endswith(".md"):
            assert f"(docs/{page})" in text, f"README.md does not link docs/{page}"


def test_the_readme_examples_table_is_the_sites():
    """The examples table is in the README and on docs/examples.md, the same."""
    def table(path):
        with open(os.path.join(REPO, path), encoding="utf-8") as f:
            text = f.read()
        return [row for row in text.splitlines() if row.startswith("| `examples/")]

    assert len(table("README.md")) >= 13 and table("README.md") == table("docs/examples.md")
