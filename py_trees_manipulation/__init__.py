"""py_trees_manipulation: behaviour trees for robot manipulation.

Behaviours are py_trees action clients on a backend (the embedded PyBullet simulator or a real
robot). Trees are YAML files validated against a registry of behaviours before anything runs.

Conventions (see :mod:`py_trees_manipulation.conventions`): SI units, right-handed frames,
quaternions **scalar-first (w, x, y, z)** at every public boundary.
"""

__version__ = "0.1.0"


class Closing:
    """Base of an object whose ``close()`` (idempotent) releases what it holds: ``with X(...) as x:``
    closes it on leaving the block (a backend, the viewer's server)."""

    def close(self) -> None:  # pragma: no cover  (every subclass defines it)
        raise NotImplementedError

    def __enter__(self):  # -> the object itself (its own type)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def lazy_attributes(package: str, names: "dict[str, str]", namespace: "dict[str, object]"):
    """A package's module ``__getattr__`` (PEP 562) that imports its public names on first use, so
    that importing the package (``ptm --help`` does, for the subcommands) does not load their stacks.

    Args:
        package: the package's ``__name__``. names: public name -> the submodule that defines it.
        namespace: the package's ``globals()``; a name imported once is kept there.

    Returns:
        ``__getattr__(name)``; AttributeError for a name not in ``names``.
    """
    import importlib

    def __getattr__(name: str) -> object:
        if name in names:
            value = getattr(importlib.import_module(f"{package}.{names[name]}"), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
