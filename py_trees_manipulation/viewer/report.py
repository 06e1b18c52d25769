"""Run reports: PNG plots of a run log (matplotlib, Agg backend, no display needed).

:func:`write_report` reads a run log (:mod:`py_trees_manipulation.viewer.runlog`) and writes,
each only when the log holds the data:

``forces.png``
    Fingertip forces (N) per finger and the grip set-point (N) over backend time, with run events
    as numbered vertical markers and, under the plot, the key: each event's number, time, source
    and whole text (the first 60 events; the object height and door plots have the same key). Force fields are telemetry fields named ``*force_n`` other than
    ``effort_n`` (e.g. ``left_fingertip_force_n``); set-point fields contain ``setpoint`` or
    ``set_point`` (e.g. ``force_setpoint_n``). A gripper stream's ``effort_n`` (grip force from
    the finger joints) is drawn dotted beside them (alone when there are no fingertip fields).
``gripper.png``
    Gripper gap (mm, ``gap_m``) and, on a second axis, effort (N, ``effort_n``), per gripper stream
    (``gripper/<name>``); the controller ``mode`` changes as markers when logged.
``object_height.png``
    Height ``z`` (m, world) of each ``object/<name>`` pose.
``door_angle.png``
    Door and drawer joints of each ``door/<name>``, ``drawer/<name>`` or ``articulated/<name>``
    stream (the sim's doors extension: ``door_angle_deg``, ``handle_angle_deg``,
    ``drawer_opening_m``): fields ending in ``_deg`` drawn in degrees, ``_rad`` converted to
    degrees, ``_m`` in millimetres on a second axis.
``joints.png``
    Per ``arm/<name>`` stream with ``joint_positions``: every joint's position (rad) with its lower
    and upper limits, and its speed (rad/s, from the logged positions) with its velocity limit, the
    limits taken from the arm motions' ``motion_plan`` events; the planned motions' starts as markers.
``summary.png``
    A table: the run's summary (status, ticks, times, metrics, error, failing behaviour) and
    per-stream figures (peak force, final gap, object lift).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Optional, Union

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from py_trees_manipulation.viewer.runlog import RunLog, read_run_log  # noqa: E402

_DPI = 110


def _numeric(log: RunLog, stream: str, field: str) -> Optional[tuple[np.ndarray, np.ndarray]]:
    samples = [s for s in log.telemetry.get(stream, []) if isinstance(s.get(field), (int, float))
               and not isinstance(s.get(field), bool)]
    if not samples:
        return None
    return (np.array([s["time_s"] for s in samples], dtype=float),
            np.array([s[field] for s in samples], dtype=float))


def _fields(log: RunLog, stream: str) -> list[str]:
    seen: dict[str, None] = {}
    for s in log.telemetry.get(stream, [])[:50]:
        for k in s:
            seen.setdefault(k, None)
    return [k for k in seen if k not in ("time_s", "tick")]


def _is_force(field: str) -> bool:
    return field.endswith("force_n") and field != "effort_n" and "setpoint" not in field and "set_point" not in field


def _is_setpoint(field: str) -> bool:
    return "setpoint" in field or "set_point" in field


_MAX_EVENTS = 60
_KEY_WIDTH = 118  # characters per line of the event key


def _timed_events(log: RunLog) -> list[dict[str, Any]]:
    return [ev for ev in log.events[:_MAX_EVENTS] if isinstance(ev.get("time_s"), (int, float))]


def _event_lines(log: RunLog) -> list[str]:
    """The event key: ``"3  1.25 s  [source] the whole text"``, wrapped, one entry per event."""
    import textwrap

    lines: list[str] = []
    for i, ev in enumerate(_timed_events(log), start=1):
        head = f"{i:>2}  {float(ev['time_s']):7.3f} s  " + (f"[{ev['source']}] " if ev.get("source") else "")
        lines.extend(textwrap.wrap(head + str(ev.get("text", "")), _KEY_WIDTH, subsequent_indent=" " * 14) or [head])
    extra = len(log.events) - _MAX_EVENTS
    if extra > 0:
        lines.append(f"... and {extra} more events (ptm view shows them all)")
    return lines


def _figure(log: RunLog, height: float, label_events: bool = True) -> tuple[Any, Any, Any]:
    """``(fig, ax, key_ax)``: a plot, and below it the event key (``None`` without events)."""
    lines = _event_lines(log) if label_events else []
    if not lines:
        fig, ax = plt.subplots(figsize=(9, height))
        return fig, ax, None
    key_h = 0.16 * len(lines) + 0.25
    fig, (ax, key) = plt.subplots(2, 1, figsize=(9, height + key_h), gridspec_kw={"height_ratios": [height, key_h]})
    key.axis("off")
    key.text(0.0, 1.0, "\n".join(lines), va="top", ha="left", family="monospace", fontsize=7.2, color="0.25",
             transform=key.transAxes)
    return fig, ax, key


def _event_markers(ax: Any, log: RunLog, label: bool = True) -> None:
    """A dashed line at each run event; with ``label``, its number in the event key (the text in
    full, under the plot: :func:`_figure`)."""
    events = _timed_events(log)
    if not events:
        return
    ymax = ax.get_ylim()[1]
    for i, ev in enumerate(events, start=1):
        t = float(ev["time_s"])
        ax.axvline(t, color="0.55", lw=0.8, ls="--", zorder=0)
        if label:
            ax.text(t, ymax, f" {i}", va="top", ha="left", fontsize=7, color="0.3")


def _finish(fig: Any, path: Path, out: list[Path]) -> None:
    fig.tight_layout()
    fig.savefig(path, dpi=_DPI)
    plt.close(fig)
    out.append(path)


def _plot_forces(log: RunLog, out_dir: Path, out: list[Path]) -> dict[str, float]:
    peaks: dict[str, float] = {}
    lines = []
    for stream in sorted(log.telemetry):
        fields = _fields(log, stream)
        forces = [f for f in fields if _is_force(f)]
        setpoints = [f for f in fields if _is_setpoint(f)]
        grip = ["effort_n"] if stream.startswith("gripper/") and "effort_n" in fields else []
        for f in forces + setpoints + grip:
            s = _numeric(log, stream, f)
            if s is not None:
                lines.append((stream, f, s, f in setpoints))
                if f in forces or (f == "effort_n" and not forces):
                    peaks[f"peak {stream} {f}"] = float(np.max(np.abs(s[1])))
    if not lines:
        return peaks
    fig, ax, _ = _figure(log, 4.2)
    for stream, f, (t, v), is_sp in lines:
        name = f if len(log.telemetry) == 1 else f"{stream}: {f}"
        if f == "effort_n":
            name = f"{stream}: grip force (effort_n, from the finger joints)"
        ax.plot(t, v, ls="--" if is_sp else (":" if f == "effort_n" else "-"), lw=1.6 if is_sp else 1.2,
                label=name, drawstyle="steps-post" if is_sp else "default")
    ax.set_xlabel("time (s, backend clock)")
    ax.set_ylabel("force (N)")
    ax.set_title("Fingertip forces and grip set-point")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left")
    _event_markers(ax, log)
    _finish(fig, out_dir / "forces.png", out)
    return peaks


def _plot_gripper(log: RunLog, out_dir: Path, out: list[Path]) -> dict[str, float]:
    figures: dict[str, float] = {}
    streams = [s for s in sorted(log.telemetry) if _numeric(log, s, "gap_m") is not None]
    if not streams:
        return figures
    fig, axes = plt.subplots(len(streams), 1, figsize=(9, 3.2 * len(streams)), squeeze=False)
    for ax, stream in zip(axes[:, 0], streams):
        t, gap = _numeric(log, stream, "gap_m")  # type: ignore[misc]
        ax.plot(t, gap * 1000.0, color="tab:blue", label="gap")
        ax.set_ylabel("gap (mm)", color="tab:blue")
        ax.set_xlabel("time (s, backend clock)")
        ax.set_title(f"{stream}: gap and effort")
        ax.grid(alpha=0.3)
        figures[f"final {stream} gap_mm"] = float(gap[-1] * 1000.0)
        eff = _numeric(log, stream, "effort_n")
        if eff is not None:
            ax2 = ax.twinx()
            ax2.plot(eff[0], eff[1], color="tab:red", lw=1.0, label="effort")
            ax2.set_ylabel("effort (N)", color="tab:red")
        modes = [(s["time_s"], s["mode"]) for s in log.telemetry[stream] if isinstance(s.get("mode"), str)]
        last = None
        for tm, mode in modes:
            if mode != last:
                ax.axvline(tm, color="tab:green", lw=0.8, ls=":")
                ax.text(tm, ax.get_ylim()[0], f" {mode}", fontsize=7, color="tab:green", va="bottom",
                        ha="right", rotation=90)
                last = mode
        _event_markers(ax, log, label=False)
    _finish(fig, out_dir / "gripper.png", out)
    return figures


def _plot_objects(log: RunLog, out_dir: Path, out: list[Path]) -> dict[str, float]:
    figures: dict[str, float] = {}
    series = []
    for stream in sorted(log.telemetry):
        if not stream.startswith("object/"):
            continue
        try:
            t, p, _ = log.pose_series(stream)
        except KeyError:
            continue
        series.append((stream[len("object/"):], t, p[:, 2]))
        figures[f"lift {stream} mm"] = float((p[-1, 2] - p[0, 2]) * 1000.0)
    if not series:
        return figures
    fig, ax, _ = _figure(log, 3.6)
    for name, t, z in series:
        ax.plot(t, z, label=name)
    ax.set_xlabel("time (s, backend clock)")
    ax.set_ylabel("height z (m, world)")
    ax.set_title("Object height")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    _event_markers(ax, log)
    _finish(fig, out_dir / "object_height.png", out)
    return figures


_ARTICULATED_PREFIXES = ("door/", "drawer/", "articulated/")


def _plot_doors(log: RunLog, out_dir: Path, out: list[Path]) -> dict[str, float]:
    figures: dict[str, float] = {}
    angles, lengths = [], []
    for stream in sorted(log.telemetry):
        if not stream.startswith(_ARTICULATED_PREFIXES):
            continue
        for f in _fields(log, stream):
            s = _numeric(log, stream, f)
            if s is None:
                continue
            if f.endswith("_deg"):
                angles.append((stream, f, s[0], s[1]))
                figures[f"final {stream} {f}"] = float(s[1][-1])
            elif f.endswith("_rad"):
                angles.append((stream, f, s[0], np.degrees(s[1])))
                figures[f"final {stream} {f[:-4]}_deg"] = float(np.degrees(s[1][-1]))
            elif f.endswith("_m"):
                lengths.append((stream, f, s[0], s[1] * 1000.0))
                figures[f"final {stream} {f[:-2]}_mm"] = float(s[1][-1] * 1000.0)
    if not angles and not lengths:
        return figures
    fig, ax, _ = _figure(log, 3.6)
    handles = []
    for stream, f, t, v in angles:
        handles += ax.plot(t, v, label=f"{stream}: {f} (deg)")
    ax.set_xlabel("time (s, backend clock)")
    ax.grid(alpha=0.3)
    if angles:
        ax.set_ylabel("angle (deg)")
    len_ax = ax.twinx() if angles and lengths else ax
    for i, (stream, f, t, v) in enumerate(lengths):
        handles += len_ax.plot(t, v, ls="--", color=f"C{len(angles) + i}", label=f"{stream}: {f} (mm)")
    if lengths:
        len_ax.set_ylabel("opening (mm)")
    ax.set_title("Door angle" + (" and drawer opening" if lengths else "") if angles else "Drawer opening")
    ax.legend(handles=handles, fontsize=8, loc="upper left")
    _event_markers(ax, log)
    _finish(fig, out_dir / "door_angle.png", out)
    return figures


def _joint_limits(log: RunLog, robot: str) -> dict[str, Any]:
    """``joint_names``, ``lower``, ``upper``, ``velocity_limits`` of ``robot`` from its motion_plan events."""
    for ev in log.events:
        mp = ev.get("motion_plan")
        if isinstance(mp, dict) and mp.get("robot") == robot and mp.get("lower"):
            return mp
    return {}


def _plot_joints(log: RunLog, out_dir: Path, out: list[Path]) -> dict[str, float]:
    figures: dict[str, float] = {}
    streams = [s for s in sorted(log.telemetry) if s.startswith("arm/")
               and any(isinstance(x.get("joint_positions"), list) for x in log.telemetry[s])]
    for stream in streams:
        samples = [x for x in log.telemetry[stream] if isinstance(x.get("joint_positions"), list)]
        t = np.array([x["time_s"] for x in samples], dtype=float)
        q = np.array([x["joint_positions"] for x in samples], dtype=float)
        if q.ndim != 2 or len(t) < 2:
            continue
        robot = stream[len("arm/"):]
        lim = _joint_limits(log, robot)
        names = lim.get("joint_names") or [f"joint {j + 1}" for j in range(q.shape[1])]
        dt = np.diff(t)
        ok = dt > 1e-9
        qd = np.zeros_like(q)
        qd[1:][ok] = np.diff(q, axis=0)[ok] / dt[ok][:, None]
        n = q.shape[1]
        fig, axes = plt.subplots(n, 2, figsize=(10, 1.5 * n + 0.8), sharex=True, squeeze=False)
        starts = [ev["time_s"] for ev in log.events if isinstance(ev.get("motion_plan"), dict)
                  and ev["motion_plan"].get("robot") == robot and ev["motion_plan"].get("waypoints")
                  and isinstance(ev.get("time_s"), (int, float))]
        for j in range(n):
            ax, axv = axes[j, 0], axes[j, 1]
            ax.plot(t, q[:, j], color="tab:blue", lw=1.2)
            axv.plot(t, qd[:, j], color="tab:green", lw=1.0)
            if lim.get("lower") and lim.get("upper"):
                lo, hi = float(lim["lower"][j]), float(lim["upper"][j])
                for v in (lo, hi):
                    ax.axhline(v, color="tab:red", lw=0.9, ls="--")
                margin = min(q[:, j].min() - lo, hi - q[:, j].max())
                figures[f"{stream} {names[j]} limit margin_rad"] = float(margin)
            if lim.get("velocity_limits"):
                v = float(lim["velocity_limits"][j])
                for sign in (-1, 1):
                    axv.axhline(sign * v, color="tab:red", lw=0.9, ls="--")
                figures[f"{stream} {names[j]} peak speed / limit"] = float(np.max(np.abs(qd[:, j])) / v)
            for ts in starts:
                ax.axvline(ts, color="0.6", lw=0.7, ls=":")
                axv.axvline(ts, color="0.6", lw=0.7, ls=":")
            ax.set_ylabel(f"{names[j]}\n(rad)", fontsize=8)
            axv.set_ylabel("rad/s", fontsize=8)
            ax.grid(alpha=0.3)
            axv.grid(alpha=0.3)
        axes[0, 0].set_title(f"{stream}: joint positions and limits")
        axes[0, 1].set_title("joint speeds and velocity limits")
        axes[-1, 0].set_xlabel("time (s, backend clock)")
        axes[-1, 1].set_xlabel("time (s, backend clock)")
        name = "joints.png" if len(streams) == 1 else f"joints_{robot}.png"
        _finish(fig, out_dir / name, out)
    return figures


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}" if math.isfinite(v) else str(v)
    if isinstance(v, dict):
        return ", ".join(f"{k}={_fmt(x)}" for k, x in v.items())[:90]
    text = str(v)
    return text if len(text) <= 90 else text[:87] + "..."


def summary_rows(log: RunLog, figures: dict[str, float]) -> list[tuple[str, str]]:
    """The ``(field, value)`` rows of the summary table."""
    rows: list[tuple[str, str]] = []
    s = dict(log.summary or {})
    rows.append(("log", log.path.name + ("" if log.complete else "  (not finished)")))
    if log.metadata.get("source"):
        rows.append(("source", str(log.metadata["source"])))
    for key in ("task", "status", "outcome", "ticks", "sim_time_s", "time_s", "wall_time_s", "real_time_factor", "seed"):
        if key in s:
            rows.append((key, _fmt(s[key])))
    metrics = s.get("metrics") or {}
    if isinstance(metrics, dict):
        for k, v in list(metrics.items())[:14]:
            rows.append((f"metrics.{k}", _fmt(v)))
    fb = s.get("failed_behaviour")
    if isinstance(fb, dict):
        rows.append(("failed behaviour", f"{fb.get('type')} '{fb.get('name')}': {fb.get('feedback')}"))
    if s.get("error"):
        rows.append(("error", _fmt(s["error"])))
    rows.append(("events", str(len(log.events))))
    for k, v in figures.items():
        rows.append((k, _fmt(v)))
    return rows


def _plot_summary(log: RunLog, figures: dict[str, float], out_dir: Path, out: list[Path]) -> None:
    rows = summary_rows(log, figures)
    fig, ax = plt.subplots(figsize=(9, 0.3 * len(rows) + 0.6))
    ax.axis("off")
    table = ax.table(cellText=[[k, v] for k, v in rows], colLabels=["field", "value"], loc="upper center",
                     cellLoc="left", colLoc="left", colWidths=[0.42, 0.58])
    table.auto_set_font_size(False)
    table.set_fontsize(8.5)
    table.scale(1.0, 1.25)
    status = str((log.summary or {}).get("status", (log.summary or {}).get("outcome", "UNKNOWN")))
    ax.set_title(f"Run summary: {status}", fontweight="bold")
    _finish(fig, out_dir / "summary.png", out)


def write_report(log_path: Union[str, Path], out_dir: Optional[Union[str, Path]] = None) -> list[Path]:
    """Write the PNG plots of a run log.

    Args:
        log_path: the run log (``.mcap``); an unfinished log is plotted as far as it goes.
        out_dir: output directory (created); default ``<log stem>_report`` next to the log.

    Returns:
        Paths of the PNG files written, in the order of the module docstring (plots without data
        are skipped; ``summary.png`` is always written).

    Raises:
        FileNotFoundError, ValueError: as :func:`~py_trees_manipulation.viewer.runlog.read_run_log`.
    """
    if isinstance(log_path, RunLog):  # already read (ptm report warns about an unfinished log first)
        log, log_path = log_path, log_path.path
    else:
        log_path = Path(log_path)
        log = read_run_log(log_path, snapshots=False)
    out = Path(out_dir) if out_dir is not None else log_path.with_name(log_path.stem + "_report")
    out.mkdir(parents=True, exist_ok=True)
    paths: list[Path] = []
    figures: dict[str, float] = {}
    figures.update(_plot_forces(log, out, paths))
    figures.update(_plot_gripper(log, out, paths))
    figures.update(_plot_objects(log, out, paths))
    figures.update(_plot_doors(log, out, paths))
    joint_figures = _plot_joints(log, out, paths)
    figures.update({k: v for k, v in joint_figures.items() if "peak speed" in k})
    _plot_summary(log, figures, out, paths)
    return paths
