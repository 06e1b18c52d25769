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

#: built-in extensions built only for a scene with their section: module -> (extension name, scene
#: section). :func:`load_builtin_extensions` registers each under its name with a factory that
#: imports the module when a scene has the section (the module then registers its own factory in
#: its place), so a run whose scene has no ``grasp_fix:`` does not import the GraspFix extension
#: and its grip criterion (issue 35: a run imports what it uses)
ON_SECTION = {"grasp_fix": ("grasp_fix", "grasp_fix")}


def _import_on_build(module: str, name: str) -> Callable[..., Any]:
    def factory(backend: Any, section: Any) -> Any:
        import importlib

        importlib.import_module(module)   # registers the module's own factory under ``name``
        real = _EXTENSIONS[name][1]
        if real is factory:
            raise RuntimeError(f"{module} did not register the simulator extension {name!r}")
        return real(backend, section)
    return factory


def load_builtin_extensions() -> None:
    """Register the extensions of :data:`BUILTIN_EXTENSIONS`: import their modules (each registers
    with :func:`register_extension`), but those of :data:`ON_SECTION` only when a scene has their
    section. Idempotent."""
    import importlib
    import sys

    package = __name__.rpartition(".")[0]
    for name in BUILTIN_EXTENSIONS:
        module = f"{package}.{name}"
        if name in ON_SECTION and module not in sys.modules:
            ext, section = ON_SECTION[name]
            if ext not in _EXTENSIONS:
                register_extension(ext, _import_on_build(module, ext), section=section)
            continue
        importlib.import_module(module)
