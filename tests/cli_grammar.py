"""A grammar of ``ptm`` command lines for property tests (issue 36): random numeric options and
``--set`` values written in the task format (numbers in every YAML spelling, units, blackboard
references, lists and mappings, anchors and aliases up to bombs, deep nesting, broken YAML), each
command run in a process of its own under limits.

Used by ``tests/unit/test_cli_property.py`` (a handful of examples per suite run) and
``benchmarks/bench_cli_property.py`` (as many as asked, with figures).
"""

from __future__ import annotations

import json
import os
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


#: the small process that starts each case: a process forked from a big one (a test worker) counts
#: that one's resident pages in its own peak (ru_maxrss keeps the high-water mark of the memory it had
#: before exec), so the case is forked from this launcher (~10 MB) and its rusage read by it
_LAUNCHER = """
import json, os, resource, subprocess, sys
result, cap, cpu = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
def limits():
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))  # SIGXCPU once it has used them
proc = subprocess.Popen(sys.argv[4:], preexec_fn=limits)
_, status, ru = os.wait4(proc.pid, 0)
proc.returncode = 0
with open(result, "w") as f:
    json.dump({"code": os.waitstatus_to_exitcode(status), "cpu_s": ru.ru_utime + ru.ru_stime,
               "max_rss_mb": ru.ru_maxrss / 1024.0}, f)
"""


def run_case(argv: list[str], cwd: Path = ROOT, wall_limit: float = WALL_LIMIT_S) -> Outcome:
    """Run ``python -m py_trees_manipulation *argv`` in a session of its own under an address-space cap
    and a CPU limit of :data:`TIME_LIMIT_S` (RLIMIT_CPU: killed by SIGXCPU when it has used them),
    kill the session after ``wall_limit`` seconds, and read the case's exit code, CPU time and peak
    resident memory (``wait4``, in the launcher that forked it)."""
    with tempfile.TemporaryDirectory() as tmp:
        result = Path(tmp) / "result.json"
        out, err = Path(tmp) / "out", Path(tmp) / "err"
        env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
        env.pop("DISPLAY", None)
        cmd = [sys.executable, "-c", _LAUNCHER, str(result), str(ADDRESS_SPACE_CAP), str(int(TIME_LIMIT_S)),
               sys.executable, "-m", "py_trees_manipulation", *argv]
        t0 = time.monotonic()
        with open(out, "wb") as fo, open(err, "wb") as fe:
            proc = subprocess.Popen(cmd, cwd=cwd, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL, env=env,
                                    start_new_session=True)
            try:
                proc.wait(timeout=wall_limit)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        wall = time.monotonic() - t0
        stderr = err.read_bytes().decode("utf-8", "replace")
        data = json.loads(result.read_text()) if result.exists() else {"code": None, "cpu_s": 0.0, "max_rss_mb": 0.0}
    code = data["code"]
    if code == -signal.SIGXCPU:  # the CPU limit ended it
        code, data["cpu_s"] = None, max(data["cpu_s"], TIME_LIMIT_S + 0.01)
    return Outcome(argv, code, wall, data["cpu_s"], data["max_rss_mb"], stderr, wall_limit)
