"""pytest plugin: every ``*.scenario.yaml`` is a test file, every variant a test item.

Registered through the ``pytest11`` entry point ``ptm_scenarios``, so installing the package is
enough: ``pytest tests/`` collects ``tests/scenarios/pick_and_lift.scenario.yaml`` as the items
``pick_and_lift.scenario.yaml::default``, ``pick_and_lift.scenario.yaml::heavy``, ... (marked
``scenario``: ``-m scenario`` / ``-m "not scenario"``, ``-k heavy`` select them).

Each item loads its variant, runs it headless on the PyBullet sim backend (the ``time_budget_s`` is
the run's timeout) and checks the ``expect:`` section. A failing item reports every expectation that
did not hold (expected vs actual, with units from the metric names), the behaviour the failure is
blamed on with its feedback and location, the run's metrics, and the path of the MCAP run log.
An invalid scenario file is a collection error with ``FILE:LINE:COL`` messages.

Options: ``--ptm-log-dir DIR`` (run logs under ``DIR/<scenario>/<variant>.mcap``; default: pytest's
temporary directory), ``--ptm-no-log``, ``--ptm-seed N`` (override every scene's seed),
``--ptm-tick-hz HZ`` (default 30). JUnit XML (``--junit-xml``) gets the status, sim time and run
log of every item as properties.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator, Optional

import pytest

from ..commands import options

# The task machinery (loader, behaviours, simulator) is imported only when a scenario file is
# collected: this module loads with every pytest session of a project that installs the package.
SUFFIXES = (".scenario.yaml", ".scenario.yml")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ptm", "py_trees_manipulation scenarios (*.scenario.yaml)")
    group.addoption("--ptm-log-dir", default=None, metavar="DIR",
                    help="write each scenario run's MCAP log under DIR/<scenario>/<variant>.mcap "
                         "(default: pytest's temporary directory)")
    group.addoption("--ptm-no-log", action="store_true", default=False, help="do not write run logs")
    group.addoption("--ptm-seed", type=options.SEED, default=None, metavar="N",
                    help="random seed for every scenario, 0 ... 4294967295 (overrides scene.seed)")
    group.addoption("--ptm-tick-hz", type=options.TICK_HZ, default=30.0, metavar="HZ",
                    help="tree tick rate in sim time, 0.01 ... 10000 Hz (default 30)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "scenario: a *.scenario.yaml variant run in the PyBullet simulator")
    config.addinivalue_line("markers", "extended: a variant of the extended set (marks: [extended]): left out by "
                            "the README's test command, run by .ci/run with -m extended")


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> Optional[pytest.Collector]:
    if file_path.name.endswith(SUFFIXES):
        return ScenarioFile.from_parent(parent, path=file_path)
    return None


class ScenarioFailed(AssertionError):
    """A scenario run missed its expectations; ``result`` has the summary and the failures."""

    def __init__(self, result: Any, title: str):
        from .scenario import format_report

        self.result = result
        self.title = title
        super().__init__(format_report(result, title))


def _display_path(path: Path) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:  # another drive (Windows)
        return str(path)
    return rel if not rel.startswith(".." + os.sep + "..") else str(path)


class ScenarioFile(pytest.File):
    """A ``*.scenario.yaml``: validated at collection, one :class:`ScenarioItem` per variant."""

    def collect(self) -> Iterator[pytest.Item]:
        from ..located.errors import TreeLoadError
        from .scenario import load_scenario

        try:
            scenario = load_scenario(_display_path(self.path))
        except TreeLoadError as e:
            raise self.CollectError(f"invalid scenario file:\n{e}") from None
        for name, variant in scenario.variants.items():
            line = variant.loc.line if variant.loc is not None else 1
            item = ScenarioItem.from_parent(self, name=name, scenario=scenario, variant=name, line=line)
            for mark in variant.marks:   # a variant's marks: [extended] (scenario.py)
                item.add_marker(getattr(pytest.mark, mark))
            yield item


class ScenarioItem(pytest.Item):
    """One variant of a scenario: run it in the simulator, check the expectations."""

    def __init__(self, *, scenario: Any, variant: str, line: int = 1, **kwargs: Any):
        super().__init__(**kwargs)
        self.scenario = scenario  # a scenario.Scenario
        self.variant = variant
        self.line = line
        self.result: Any = None  # the scenario.ScenarioResult once run
        self.add_marker(pytest.mark.scenario)

    @property
    def title(self) -> str:
        return f"{os.path.basename(self.scenario.file)}::{self.variant}"

    def _log_path(self) -> Optional[str]:
        cfg = self.config
        if cfg.getoption("ptm_no_log"):
            return None
        stem = os.path.basename(self.scenario.file).split(".scenario.")[0]
        base = cfg.getoption("ptm_log_dir")
        if base:
            root = Path(base)
        else:
            factory = getattr(cfg, "_tmp_path_factory", None)  # pytest's tmp_path_factory, when available
            root = (factory.getbasetemp() if factory is not None else Path(tempfile.gettempdir())) / "ptm-runs"
        return str(root / stem / f"{self.variant}.mcap")

    def runtest(self) -> None:
        from .scenario import invalid_result, run_scenario

        refused = invalid_result(self.scenario, self.variant)
        if refused is not None:  # expect.status INVALID: what `ptm validate` says is the subject
            self.result = refused
            self.user_properties.append(("status", "INVALID"))
            if not refused.passed:
                raise ScenarioFailed(refused, self.title)
            return
        task, expectation = self.scenario.load(self.variant)
        result = run_scenario(
            task, expectation,
            seed=self.config.getoption("ptm_seed"),
            tick_hz=self.config.getoption("ptm_tick_hz"),
            log_path=self._log_path(),
            metadata={"scenario": self.scenario.file, "variant": self.variant},
        )
        self.result = result
        s = result.summary
        self.user_properties.extend([
            ("status", str(s.get("status"))),
            ("sim_time_s", str(s.get("sim_time_s"))),
            ("wall_time_s", str(s.get("wall_time_s"))),
        ])
        for key in ("suggested_base", "suggested_place"):   # or_refused: the refusal's fix, and what it passed
            if s.get(key):
                self.user_properties.append((key, json.dumps(s[key], default=str)))
        if result.log_path:
            self.user_properties.append(("run_log", result.log_path))
        if not result.passed:
            raise ScenarioFailed(result, self.title)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        if isinstance(excinfo.value, ScenarioFailed):
            return str(excinfo.value)
        from ..located.errors import TreeLoadError

        if isinstance(excinfo.value, TreeLoadError):
            return f"{self.title}: invalid scenario:\n{excinfo.value}"
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self) -> tuple[Any, Optional[int], str]:
        return self.path, self.line - 1, f"scenario {self.title}"
