"""Run observers: read-only hooks the runner calls around each tick (logging, viewer, statistics).

Observers never change the tree or the backend. The runner calls, in order:
``on_start(run)`` once after ``tree.setup``, ``on_tick(run)`` after every tick (the tree's statuses
and the backend's state are then those of the tick just done), and ``on_end(run, summary)`` once,
also when the run fails, times out, raises or is interrupted (Ctrl-C), so a log is always closed.

``run`` is a :class:`RunState`. Backends may offer ``telemetry() -> dict[str, dict]``: named
streams of plain JSON-able values sampled at the tick (e.g. ``"gripper/panda"`` with
``gap_m``, ``effort_n``, ``left_fingertip_force_n``...; ``"object/mug"`` with ``pose``). Observers
call it through :meth:`RunState.telemetry`, which returns ``{}`` for a backend without it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

import py_trees


@dataclass
class RunState:
    """What observers may read about the run in progress.

    Attributes:
        tree: the py_trees BehaviourTree being ticked.
        backend: the backend (see :mod:`py_trees_manipulation.backend`).
        source: path of the task file, or ``"<memory>"``.
        tick: number of ticks done so far.
        time_s: backend clock at the end of the last tick, seconds.
        events: list of ``{"time_s", "source", "text"}`` dicts appended by behaviours and the backend
            (attach/detach, slip, contact); observers read new entries since their last look.
        extra: free-form per-run information (seed, tick rate, overrides).
    """

    tree: py_trees.trees.BehaviourTree
    backend: Any
    source: str = "<memory>"
    tick: int = 0
    time_s: float = 0.0
    events: list[dict[str, Any]] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def telemetry(self) -> dict[str, dict[str, Any]]:
        fn = getattr(self.backend, "telemetry", None)
        return fn() if callable(fn) else {}


class RunObserver(Protocol):
    """Hooks called by the runner. All three must be cheap and must not raise.

    An observer that never looks at the 3D scene (``backend.scene_model()``: link frames and visual
    shapes) says so with a class attribute ``needs_visual_shapes = False``; when no observer needs
    them (and there is no GUI) the simulator loads no visual meshes (:func:`needs_visual_shapes`).
    """

    def on_start(self, run: RunState) -> None: ...

    def on_tick(self, run: RunState) -> None: ...

    def on_end(self, run: RunState, summary: dict[str, Any]) -> None: ...


def needs_visual_shapes(observers: Any) -> bool:
    """Whether any of ``observers`` reads the scene's visual shapes: its ``needs_visual_shapes``
    attribute, True when it has none (an unknown observer may draw the scene)."""
    return any(getattr(o, "needs_visual_shapes", True) for o in observers)
