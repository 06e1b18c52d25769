"""File-located errors and YAML with locations: the bottom utility every reader of a user's file uses
(trees, scenes, robot descriptions, scenarios, the hardware backend's robot files, interop).

- :mod:`.errors`: :class:`~.errors.Loc` (file, line, column), :class:`~.errors.Problem`,
  :class:`~.errors.TreeLoadError` (``FILE:LINE:COL: message``), :func:`~.errors.did_you_mean`;
- :mod:`.locyaml`: YAML loaded with the location of every key and value, within size, depth and
  alias limits.

Imports nothing of the package above the pure layers.
"""
