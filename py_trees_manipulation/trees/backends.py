"""Backends by name: the registry the runner asks for a backend (it imports none itself).

A backend is installed as an entry point of the group :data:`GROUP` whose value is a factory
``factory(request: BackendRequest) -> Backend`` (a :class:`py_trees_manipulation.backend.Backend`).
This package installs ``sim`` (the embedded PyBullet simulator) and ``hardware`` (rosbridge); a
third-party package adds its own the same way, as it adds behaviours::

    [project.entry-points."py_trees_manipulation.backends"]
    mybot = "mybot_ptm.backend:make_backend"

``ptm backends`` lists what is installed; ``ptm run --backend NAME`` picks one.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

#: the entry-point group of backend factories
GROUP = "py_trees_manipulation.backends"

#: the backends of this package: found even where the package metadata is stale (a source checkout
#: on ``sys.path`` without a reinstall). :func:`factory` resolves these names without reading the
#: installed packages' metadata (``importlib.metadata``'s scan: 15 ms of every run, issue 35); a
#: third-party package's entry points add backends under other names
BUILTIN: dict[str, str] = {
    "sim": "py_trees_manipulation.sim.factory:make_backend",
    "hardware": "py_trees_manipulation.hardware:backend_from_request",
}


@dataclass
class BackendRequest:
    """What a backend factory is given.

    Attributes:
        task: the loaded :class:`~.spec.TaskSpec` (scene as a dict, tree as node specs).
        options: the :class:`~.runner.RunOptions` of the run (``gui``, ``seed``, ``realtime``,
            ``robot``...; a backend reads the ones it knows).
        base_dir: the folder relative paths of the scene resolve against.
        reach_requests: the tree's ``CheckReachability`` requests
            (:class:`~py_trees_manipulation.scene.reach_targets.ReachRequest`), for ``base_pose: auto``.
        visual_shapes: an observer draws the scene (load visual meshes).
        lookup: behaviour type name -> its class (``SIM_ONLY``, ``NEEDS_COLLISION_WORLD``,
            ``ACTION``, ``RESOURCE``), for a backend that refuses a tree it cannot run.
        task_check: the task's whole-task test (:func:`~.plan_check.whole_task_test`), which a base
            chosen by ``base_pose: auto`` or suggested by a reach failure must pass; None: none.
    """

    task: Any
    options: Any
    base_dir: str
    reach_requests: list = field(default_factory=list)
    visual_shapes: bool = False
    lookup: Callable[[str], Optional[type]] = lambda name: None
    task_check: Optional[Callable[[Any], Optional[str]]] = None


def available() -> dict[str, str]:
    """Installed backends: name -> ``"module:factory"``, sorted by name (the :data:`BUILTIN` names
    are this package's, whatever an entry point of the same name says)."""
    from importlib.metadata import entry_points

    out = {ep.name: ep.value for ep in entry_points(group=GROUP)}
    out.update(BUILTIN)
    return dict(sorted(out.items()))


def factory(name: str) -> Callable[[BackendRequest], Any]:
    """The factory of backend ``name``.

    Raises:
        ValueError: no backend of that name (the message lists the installed ones, with the closest);
            ImportError from the backend's own module is passed on.
    """
    known = BUILTIN if name in BUILTIN else available()
    if name not in known:
        from ..located.errors import did_you_mean

        hint = did_you_mean(name, known)
        raise ValueError(f"unknown backend {name!r}{'; ' + hint if hint else ''}; installed: {', '.join(known)} "
                         "(`ptm backends` lists them)")
    module, _, attr = known[name].partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


def make(name: str, request: BackendRequest) -> Any:
    """A backend ``name`` built for ``request`` (see :func:`factory`)."""
    return factory(name)(request)
