"""The behaviour registry: the single source of truth for names the YAML loader accepts.

Concrete subclasses of :class:`~.base.ManipulationBehaviour` register themselves by class name
(``__init_subclass__``). Third-party packages register through the
``py_trees_manipulation.behaviours`` entry point (a module or class to import); nothing in a tree
file can import code.

Loading is lazy: :func:`lookup` of a built-in name imports the one module that defines it (the
index :data:`~py_trees_manipulation.behaviors.BUILTIN_BEHAVIOURS`); every built-in module and the
plugins (``importlib.metadata``'s scan of the installed packages) are loaded when a name is not
built in, or when the whole list is asked for (:func:`behaviours`: ``ptm behaviours``, the schema,
the docs, a "did you mean"). A tree of built-in behaviours so imports neither the families it does
not use nor any plugin (issue 35: 35 ms of a ``ptm run``). A plugin adds behaviours under names of
its own: one that reuses a built-in name is warned about when it loads, and a tree that names only
built-ins gets the built-in.
"""

from __future__ import annotations

import warnings
from typing import Any

_REGISTRY: dict[str, type] = {}
_ALIASES: dict[str, str] = {}
_LOADED = False


def register(cls: type, name: str | None = None) -> None:
    """Register ``cls`` under ``name`` (default: the class name). Re-registering a name warns."""
    tag = name or cls.__name__
    existing = _REGISTRY.get(tag)
    if existing is not None and existing is not cls and existing.__qualname__ != cls.__qualname__:
        warnings.warn(f"behaviour {tag!r} re-registered: {existing!r} -> {cls!r}", stacklevel=3)
    _REGISTRY[tag] = cls


def register_alias(old: str, new: str) -> None:
    """Accept ``old`` as a deprecated name of ``new`` (loading it warns)."""
    _ALIASES[old] = new


def load_builtin_and_plugins() -> None:
    """Import the built-in behaviour modules and the entry-point plugins (once)."""
    global _LOADED
    if _LOADED:
        return
    _LOADED = True
    import importlib

    from . import BUILTIN_MODULES

    for mod in BUILTIN_MODULES:
        importlib.import_module(f"{__package__}.{mod}")
    from importlib.metadata import entry_points

    for ep in entry_points(group="py_trees_manipulation.behaviours"):
        try:
            ep.load()
        except Exception as e:  # a broken plugin must not break the tool
            warnings.warn(f"behaviour plugin {ep.name!r} ({ep.value}) failed to load: {e}", stacklevel=2)


def behaviours() -> dict[str, type]:
    """All registered behaviours by name (built-ins and plugins)."""
    load_builtin_and_plugins()
    return dict(sorted(_REGISTRY.items()))


def _load_builtin(name: str) -> bool:
    """Import the built-in module that defines behaviour ``name``; False when none does."""
    from . import BUILTIN_BEHAVIOURS

    for mod, names in BUILTIN_BEHAVIOURS.items():
        if name in names:
            import importlib

            importlib.import_module(f"{__package__}.{mod}")
            return True
    return False


def lookup(name: str) -> type | None:
    """The behaviour class for ``name`` (following deprecated aliases), or None.

    A built-in name imports its own module only; any other name loads every built-in module and
    the plugins first (see the module docstring)."""
    if not _LOADED and name not in _REGISTRY and name not in _ALIASES and not _load_builtin(name):
        load_builtin_and_plugins()
    if name in _ALIASES:
        warnings.warn(f"{name!r} is deprecated; use {_ALIASES[name]!r}", DeprecationWarning, stacklevel=2)
        name = _ALIASES[name]
    return _REGISTRY.get(name)


def describe(cls: Any) -> str:
    """First paragraph of a behaviour's docstring, on one line."""
    doc = (cls.__doc__ or "").strip()
    first = doc.split("\n\n", 1)[0] if doc else ""
    return " ".join(line.strip() for line in first.splitlines())
