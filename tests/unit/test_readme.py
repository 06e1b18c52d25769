"""The README's two commands exist, and .ci/run runs exactly the README's test command."""

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
