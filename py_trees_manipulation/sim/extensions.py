"""Simulator extensions: the registry every :class:`~.backend.SimBackend` builds its extensions from
(grasp fix, doors, tactile sensing, motion planning, and a user's), and the built-in ones' modules.

Moved out of :mod:`.backend` (issue 37 item 6); :mod:`.backend` re-exports these names.
"""

from __future__ import annotations

from typing import Any, Callable, Optional


#: name -> (scene section or None, factory(backend, parsed_section) -> extension)
_EXTENSIONS: dict[str, tuple[Optional[str], Callable[..., Any]]] = {}


def register_extension(name: str, factory: Callable[..., Any], section: Optional[str] = None) -> None:
    """Add a simulator extension, built by every :class:`SimBackend` after the scene's objects.

    Args:
        name: the extension's name (``backend.extensions[name]``).
        factory: ``factory(backend, parsed_section) -> extension``. The extension may offer
            ``metrics() -> dict`` and ``telemetry() -> dict`` (merged into the backend's) and
            ``close()``; it adds physics-step hooks with ``backend.add_step_hook`` and actions with
            ``resource.add_action``.
        section: build only when the scene has this extra section (see
            :func:`~.scene.register_section`); ``None`` builds it for every scene.
    """
    _EXTENSIONS[name] = (section, factory)


#: the simulator modules whose extensions every :class:`SimBackend` builds, in this order (grasp fix,
#: doors and cabinets, tactile sensing, motion planning): plugins of this module, imported by name
#: (they import it to register themselves)
BUILTIN_EXTENSIONS = ("grasp_fix", "doors", "tactile_sensor", "planning")


def load_builtin_extensions() -> None:
    """Import the modules of :data:`BUILTIN_EXTENSIONS` (each registers with
    :func:`register_extension`). Idempotent."""
    import importlib

    package = __name__.rpartition(".")[0]
    for name in BUILTIN_EXTENSIONS:
        importlib.import_module(f"{package}.{name}")
