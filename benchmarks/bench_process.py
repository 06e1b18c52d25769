"""Whole processes as a user runs them (issue 19): what a stopwatch around the command shows.

1. ``ptm run examples/pick_and_lift.yaml --no-log`` against ``bare_pybullet_pick.py`` (the same
   scene and physics written as a bare PyBullet script, stepping the same sim time with per-step motor
   commands and contact reads): throughput ratio = bare wall / ptm wall for the same sim time
   (goal >= 0.95x, issue 35); also the CPU-time ratio (user + sys of each child process), steadier
   on a shared machine. Then the same against ``bare_pybullet_minimal.py`` (the same bodies loaded
   and stepped at PyBullet's defaults, nothing else: no grasp; goal >= 0.75x).
2. ``ptm --help`` against ``python -c "import numpy, yaml"`` (goal <= 1.0x), and ``ptm validate`` of
   every example for scale.

3. ``--only bytecode``: what the bytecode cache is worth to that ``ptm run``: the same command with
   the package's modules compiled from source in every process (a copy of the package without
   ``__pycache__``, run with ``PYTHONDONTWRITEBYTECODE=1``, as this project's sandbox sets it:
   a checkout whose ``.pyc`` files are missing or older than their sources pays it at every run)
   against the cached one. A user's install has the cache: ``pip install`` compiles the modules,
   an editable install writes ``__pycache__`` on the first import. Items 1 and 2 measure that.

Every pair is interleaved ABBA (A B B A A B ...), so a change in the machine's load hits both
alike; the figures are medians of the per-pair ratios, printed with the 1-minute load average
before and after. Each command is a fresh process with the environment a user has: Python's
bytecode cache on (``PYTHONDONTWRITEBYTECODE`` is dropped from the children's environment; one
warm-up run of each command writes the cache first), no display, cwd the repository.

    python benchmarks/bench_process.py [--pairs 6] [--only run|help|bytecode]

The in-process figures (``bench_runner.py``: warm interpreter, backend already built) are a
different quantity: they leave out interpreter start-up, imports and scene loading.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PTM = [sys.executable, "-c", "import sys; from py_trees_manipulation.cli import main; sys.exit(main())"]
ENV = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "DISPLAY", "WAYLAND_DISPLAY")}


def timed(cmd: list[str], env: dict[str, str] = ENV) -> tuple[float, float, str]:
    """(wall s, CPU s of the child: user + sys, stdout) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in (0,):
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def abba(a: list[str], b: list[str], pairs: int) -> tuple[list[tuple], list[tuple]]:
    """``pairs`` measurements of each, in the order A B B A A B B A ..."""
    ra, rb = [], []
    for i in range(pairs):
        order = (a, b) if i % 2 == 0 else (b, a)
        for cmd in order:
            (ra if cmd is a else rb).append(timed(cmd))
    return ra, rb


def load() -> str:
    return f"{os.getloadavg()[0]:.2f}"


def bench_run(pairs: int) -> None:
    example = os.path.join("examples", "pick_and_lift.yaml")
    ptm = PTM + ["run", example, "--no-log", "-q"]
    _, _, out = timed(ptm)  # warm-up: bytecode cache, URDF copies; and the run's sim time
    m = re.search(r"in ([0-9.]+) s sim", out)
    if not m or not out.startswith("SUCCESS"):
        raise SystemExit(f"ptm run did not succeed: {out}")
    sim_time = float(m.group(1))
    grasping = [sys.executable, os.path.join(HERE, "bare_pybullet_pick.py"), "--sim-time", str(sim_time)]
    minimal = [sys.executable, os.path.join(HERE, "bare_pybullet_minimal.py"), "--sim-time", str(sim_time)]
    _, _, bout = timed(grasping)
    info = json.loads(bout.strip().splitlines()[-1])
    timed(minimal)
    med = statistics.median
    for label, bare, goal in (("the grasping bare script (bare_pybullet_pick.py: motor commands, contact reads, "
                               f"lifts the mug {info['lift_m']:.3f} m)", grasping, 0.95),
                              ("the minimal bare script (bare_pybullet_minimal.py: the same bodies, stepped)", minimal,
                               0.75)):
        l0 = load()
        rp, rb = abba(ptm, bare, pairs)
        l1 = load()
        wall_ratio = [b[0] / p[0] for p, b in zip(rp, rb)]
        cpu_ratio = [b[1] / p[1] for p, b in zip(rp, rb)]
        print(f"ptm run pick_and_lift --no-log vs {label}, same {sim_time:.2f} s of sim time (+0.2 s settling), "
              f"{pairs} ABBA pairs, load {l0} -> {l1}:")
        print(f"  ptm run: wall {med(p[0] for p in rp):.2f} s (min {min(p[0] for p in rp):.2f}), "
              f"CPU {med(p[1] for p in rp):.2f} s; bare: wall {med(b[0] for b in rb):.2f} s "
              f"(min {min(b[0] for b in rb):.2f}), CPU {med(b[1] for b in rb):.2f} s")
        print(f"  throughput ptm / bare: wall {med(wall_ratio):.2f}x (pairs {min(wall_ratio):.2f}-{max(wall_ratio):.2f}), "
              f"CPU {med(cpu_ratio):.2f}x (pairs {min(cpu_ratio):.2f}-{max(cpu_ratio):.2f}); goal >= {goal:.2f}x")


def bench_help(pairs: int) -> None:
    helpcmd = PTM + ["--help"]
    base = [sys.executable, "-c", "import numpy, yaml"]
    timed(helpcmd)
    timed(base)
    l0 = load()
    rh, rn = abba(helpcmd, base, pairs)
    l1 = load()
    ratio = [h[0] / n[0] for h, n in zip(rh, rn)]
    med = statistics.median
    print(f"ptm --help vs python -c 'import numpy, yaml', {pairs} ABBA pairs, load {l0} -> {l1}: "
          f"{med(h[0] for h in rh) * 1000:.0f} ms vs {med(n[0] for n in rn) * 1000:.0f} ms wall -> "
          f"{med(ratio):.2f}x (pairs {min(ratio):.2f}-{max(ratio):.2f}); goal <= 1.0x")
    files = sorted(glob.glob(os.path.join("examples", "*.yaml")))
    validate = PTM + ["validate", *files]
    timed(validate)
    walls = [timed(validate)[0] for _ in range(3)]
    print(f"ptm validate of the {len(files)} examples: {med(walls) * 1000:.0f} ms wall (median of 3)")


def bench_bytecode(pairs: int) -> None:
    import shutil
    import tempfile

    example = os.path.join("examples", "pick_and_lift.yaml")
    cached = PTM + ["run", example, "--no-log", "-q"]
    with tempfile.TemporaryDirectory(prefix="ptm-nocache-") as tmp:
        shutil.copytree(os.path.join(ROOT, "py_trees_manipulation"), os.path.join(tmp, "py_trees_manipulation"),
                        ignore=shutil.ignore_patterns("__pycache__"))
        # -P: the cwd (the repository) is not put first on sys.path, so the copy is what imports
        code = ("import sys, py_trees_manipulation as p; assert p.__file__.startswith(%r), p.__file__; "
                "from py_trees_manipulation.cli import main; sys.exit(main())" % tmp)
        uncached = [sys.executable, "-P", "-c", code, "run", example, "--no-log", "-q"]
        env = dict(ENV, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=tmp)
        timed(cached)
        l0 = load()
        rc, ru = [], []
        for i in range(pairs):
            for which in ((0, 1) if i % 2 == 0 else (1, 0)):
                if which == 0:
                    rc.append(timed(cached))
                else:
                    ru.append(timed(uncached, env))
        l1 = load()
        if any(os.path.isdir(d) for d, _, _ in os.walk(tmp) if d.endswith("__pycache__")):
            raise SystemExit("the copy wrote a bytecode cache: the uncached runs were cached")
    med = statistics.median
    extra = [u[1] - c[1] for c, u in zip(rc, ru)]
    print(f"ptm run pick_and_lift --no-log, the package's modules compiled in every process against the bytecode "
          f"cache, {pairs} ABBA pairs, load {l0} -> {l1}:")
    print(f"  CPU {med(u[1] for u in ru):.2f} s against {med(c[1] for c in rc):.2f} s: +{med(extra) * 1000:.0f} ms "
          f"(pairs {min(extra) * 1000:+.0f} to {max(extra) * 1000:+.0f} ms); wall {med(u[0] for u in ru):.2f} s against "
          f"{med(c[0] for c in rc):.2f} s")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=6, help="ABBA pairs per comparison (default 6)")
    ap.add_argument("--only", choices=["run", "help", "bytecode"], default=None)
    args = ap.parse_args()
    if args.only in (None, "help"):
        bench_help(max(2, args.pairs))
    if args.only in (None, "run"):
        bench_run(args.pairs)
    if args.only in (None, "bytecode"):
        bench_bytecode(max(2, args.pairs // 2))


if __name__ == "__main__":
    main()
