"""A grammar of ``ptm`` command lines for property tests (issue 36): random numeric options and
``--set`` values written in the task format (numbers in every YAML spelling, units, blackboard
references, lists and mappings, anchors and aliases up to bombs, deep nesting, broken YAML), each
command run in a process of its own under limits.

Used by ``tests/unit/test_cli_property.py`` (a handful of examples per suite run) and
``benchmarks/bench_cli_property.py`` (as many as asked, with figures).
"""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]
#: what a case may take: seconds of CPU (a case that spins is killed when it has used them), and
#: peak resident memory
TIME_LIMIT_S = 10.0
MEMORY_LIMIT_MB = 500.0
#: wall-clock seconds after which a case is killed whatever it did (a case that waits for ever). The
#: suite's default is generous: on 2 busy cores a case may wait long for one; the benchmark, run on
#: a quiet machine, uses TIME_LIMIT_S
WALL_LIMIT_S = 60.0
#: address-space cap of a case (a safety net that keeps a runaway case from taking the machine; the
#: property is checked on the resident peak)
ADDRESS_SPACE_CAP = 3 * 2**30

TASKS = {
    "examples/pick_and_lift.yaml": {"params": ["object", "lift_m"], "nodes": {"lift": ["delta", "speed_mps"],
                                                                            "ready": ["configuration"],
                                                                            "settle": ["duration_s"]}},
    "examples/open_door.yaml": {"params": [], "nodes": {}},
    "examples/pick_and_place.yaml": {"params": [], "nodes": {}},
}

# ---- values in the task format ---------------------------------------------------------------------------------
_numbers = st.one_of(
    st.integers(-10**6, 10**6).map(str),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.sampled_from(["1e300", "1.0e300", "-1e-300", "1e999", "-1e999", ".nan", ".NaN", ".inf", "-.inf", "0", "-0",
                     "0.0", "1_000", "0x1F", "0o17", "+12", ".5", "5.", "1e3", "2.5E-3", "1.7976931348623157e308"]),
)
_words = st.sampled_from(["mug", "table", "ready", "open", "closed", "panda", "", "~", "null", "true", "no", "yes",
                          "10 cm", "5 N", "30 deg", "2 s", "0.1 m/s", "1e3 mm", "nan cm", "{mug_pose}", "{object_pose}",
                          "${object}", "${nosuch}", "$", "{", "}", "'quoted'", '"dq"', "a: b", "# comment", "é ü 漢",
                          "\t", "- x", "? k", "!!str 5", "!!float inf", "!!python/object:os.system", "&", "*", "|"])
_scalar = st.one_of(_numbers, _words)


def _flow(inner: st.SearchStrategy) -> st.SearchStrategy:
    return st.one_of(
        st.lists(inner, max_size=4).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.lists(st.tuples(st.sampled_from(["position", "orientation", "rpy_deg", "x", "mass_kg", "k", "1"]), inner),
                 max_size=3).map(lambda kv: "{" + ", ".join(f"{k}: {v}" for k, v in kv) + "}"),
    )


_plain = st.recursive(_scalar, _flow, max_leaves=10)


@st.composite
def _bomb(draw) -> str:
    levels, width = draw(st.sampled_from([8, 6, 4, 2])), draw(st.sampled_from([9, 5, 2]))
    parts = [f"&l0 [{', '.join(['x'] * width)}]"]
    parts += [f"&l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels)]
    return "[" + ", ".join(parts) + "]"


_deep = st.integers(1, 90).map(lambda n: "[" * n + "1" + "]" * n)
_broken = st.sampled_from(["[1, 2", "{a: ", "a: b: c", "[*undefined]", "&a", "- [", "\"unterminated", "'", "{a: 1, a: 2}",
                           "%YAML 1.2\n---\n1", "--- 1\n--- 2", "\x01", "\x7f", "[1]\n  bad indent"])
#: a ``--set`` value
values = st.one_of(_bomb(), _plain, _deep, _broken, _plain)


@st.composite
def set_exprs(draw, task: str) -> str:
    """``KEY=VALUE`` of ``--set``: keys the task has (parameters, scene, blackboard, tree nodes) and some
    it does not."""
    meta = TASKS[task]
    keys = ["scene.seed", "scene.physics_hz", "scene.gravity", "scene.settle_s", "scene.objects.0.mass_kg",
            "scene.objects.0.pose", "scene.objects.0.pose.position", "scene.objects.0.scale",
            "scene.robots.0.base_pose", "scene.robots.0.initial_configuration", "scene.task.target_object",
            "blackboard.extra", "blackboard.object_pose", "scene.nosuch", "nosuch", "tree.nosuch.x", "parameters",
            "scene.objects.99.mass_kg", "scene..x", "=", ""]
    keys += [f"parameters.{p}" for p in meta["params"]]
    keys += [f"tree.{n}.{p}" for n, ps in meta["nodes"].items() for p in ps]
    return f"{draw(st.sampled_from(keys))}={draw(values)}"


def _option(valid: st.SearchStrategy) -> st.SearchStrategy:
    bad = st.sampled_from(["nan", "-nan", "inf", "-inf", "1e999", "-1", "0", "", "abc", "1e300", "1e-300", "-0", "1,5",
                           "0x10"])
    return st.one_of(bad, valid)


@st.composite
def command_lines(draw, commands=("run", "validate", "render")) -> list[str]:
    """A ``ptm`` command line (without the program) from the grammar. ``run`` keeps a valid timeout
    under 0.5 s of sim time and a tick rate under 100 Hz, so a case that is accepted ends in seconds."""
    command = draw(st.sampled_from(list(commands)))
    task = draw(st.sampled_from(sorted(TASKS)))
    argv = [command, task]
    for expr in draw(st.lists(set_exprs(task), max_size=3)):
        argv.append(f"--set={expr}")
    if command == "run":
        argv += ["--no-log", "-q"]
        argv.append(f"--timeout={draw(_option(st.floats(0.02, 0.5).map(lambda x: f'{x:.3f}')))}")
        argv.append(f"--tick-hz={draw(_option(st.floats(1.0, 100.0).map(lambda x: f'{x:.2f}')))}")
        if draw(st.booleans()):
            argv.append(f"--seed={draw(_option(st.integers(0, 2**32 - 1).map(str)))}")
    elif command == "render":
        argv += ["--format", draw(st.sampled_from(["ascii", "unicode"]))]
    return argv


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) the live process ``pid`` has used, from /proc (0 when unreadable)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


@dataclass
class Outcome:
    """How a case ended: exit code (None: killed), wall and CPU seconds, peak resident MB, stderr,
    and the wall limit it ran under."""

    argv: list[str]
    code: int | None
    wall_s: float
    cpu_s: float
    max_rss_mb: float
    stderr: str
    wall_limit_s: float = TIME_LIMIT_S

    def problems(self) -> list[str]:
        """What breaks the property: a traceback, a hang (killed at the wall limit, or more than
        :data:`TIME_LIMIT_S` of CPU), too much memory, an exit code outside 0/1/2."""
        out = []
        if self.cpu_s > TIME_LIMIT_S:
            out.append(f"{self.cpu_s:.1f} s of CPU (limit {TIME_LIMIT_S:g} s)" + (" (killed)" if self.code is None else ""))
        elif self.code is None:
            out.append(f"still running after {self.wall_limit_s:g} s (killed)")
        if self.code is not None and self.code not in (0, 1, 2):
            out.append(f"exit code {self.code}")
        if "Traceback (most recent call last)" in self.stderr:
            out.append("a traceback on stderr")
        if self.max_rss_mb > MEMORY_LIMIT_MB:
            out.append(f"{self.max_rss_mb:.0f} MB resident (limit {MEMORY_LIMIT_MB:g} MB)")
        return out


def _limits() -> None:  # in the child, before exec
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_CAP, ADDRESS_SPACE_CAP))
    os.setsid()


def run_case(argv: list[str], cwd: Path = ROOT, wall_limit: float = WALL_LIMIT_S) -> Outcome:
    """Run ``python -m py_trees_manipulation *argv`` in its own process (session, address-space cap),
    kill it once it has used more than :data:`TIME_LIMIT_S` of CPU or ``wall_limit`` seconds have
    passed, and measure its CPU time and peak resident memory (``wait4``)."""
    limit = wall_limit
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
        env.pop("DISPLAY", None)
        t0 = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "py_trees_manipulation", *argv], cwd=cwd, stdout=out,
                                stderr=err, stdin=subprocess.DEVNULL, env=env, preexec_fn=_limits)
        code, rusage = None, None
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid == proc.pid:
                code, rusage = os.waitstatus_to_exitcode(status), ru
                break
            if time.monotonic() - t0 > limit or _cpu_s(proc.pid) > TIME_LIMIT_S + 0.5:
                os.killpg(proc.pid, signal.SIGKILL)
                _, status, rusage = os.wait4(proc.pid, 0)
                break
            time.sleep(0.02)
        proc.returncode = code if code is not None else -9  # reaped here: keep Popen from waiting again
        wall = time.monotonic() - t0
        err.seek(0)
        stderr = err.read().decode("utf-8", "replace")
    return Outcome(argv, code, wall, rusage.ru_utime + rusage.ru_stime, rusage.ru_maxrss / 1024.0, stderr, limit)
