"""The ``sim`` entry of the backend registry (:mod:`py_trees_manipulation.trees.backends`)."""

from __future__ import annotations

from typing import Any


def make_backend(request: Any) -> Any:
    """A :class:`~.backend.SimBackend` for a :class:`~py_trees_manipulation.trees.backends.BackendRequest`
    (``options.gui``, ``seed``, ``realtime``; ``base_pose: auto`` placed by the tree's reach requests).

    Raises:
        ValueError: the task has no ``scene:`` section.
    """
    task, options = request.task, request.options
    if not task.scene:
        raise ValueError(f"{task.file}: the sim backend needs a 'scene:' section")
    from . import SimBackend

    return SimBackend(task.scene, gui=getattr(options, "gui", False), seed=getattr(options, "seed", None),
                      realtime=getattr(options, "realtime", False), base_dir=request.base_dir,
                      visual_shapes=request.visual_shapes, reach_requests=list(request.reach_requests),
                      task_check=getattr(request, "task_check", None))
