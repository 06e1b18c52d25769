"""Viewer, run logs and reports: see a tree tick live in the browser, replay a run, plot it.

- :mod:`.snapshot`: py_trees tree -> py_trees_js-style JSON snapshot (documented superset).
- :mod:`.runlog`: :class:`~.runlog.RunLogger` (run observer writing an MCAP log) and
  :func:`~.runlog.read_run_log`.
- :mod:`.server`: :class:`~.server.ViewerServer` (our own page + Server-Sent Events),
  :func:`open_live` (live observer + server) and :func:`serve_log` (replay a log).
- :mod:`.report`: :func:`~.report.write_report` (PNG plots of a log, matplotlib Agg).
"""

from __future__ import annotations

from typing import Any

from .. import lazy_attributes

#: public name -> the module that defines it, imported on first use (PEP 562): ``ptm --help`` loads
#: this package for its subcommands (``viewer.cli``) and must not load MCAP, py_trees or the server
_LAZY = {"RunLogger": "runlog", "read_run_log": "runlog", "LiveViewer": "server", "ViewerServer": "server",
         "open_live": "server", "serve_log": "server"}

__getattr__ = lazy_attributes(__name__, _LAZY, globals())


def write_report(*args: Any, **kwargs: Any) -> Any:
    """See :func:`py_trees_manipulation.viewer.report.write_report` (imports matplotlib lazily)."""
    from py_trees_manipulation.viewer.report import write_report as _write_report

    return _write_report(*args, **kwargs)


__all__ = ["LiveViewer", "RunLogger", "ViewerServer", "open_live", "read_run_log", "serve_log", "write_report"]
