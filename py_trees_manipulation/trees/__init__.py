"""Task trees as data: YAML loading with file:line errors, the tree factory, the runner.

Modules: ``errors`` (TreeLoadError), ``yaml_loader`` (YAML -> :class:`~.spec.TaskSpec`),
``spec`` (dataclasses), ``factory`` (spec -> py_trees tree), ``decorators`` (backend-clock
decorators), ``runner`` (ticks a tree against a backend, writes the summary).
"""

from ..located.errors import Problem, TreeLoadError

__all__ = ["Problem", "TreeLoadError"]
