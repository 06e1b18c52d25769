"""Import pybullet without its ``pybullet build time: ...`` banner.

pybullet's C module prints the banner on standard error when it is imported. Every ``ptm``
command that reads a scene imports it, so the banner would precede every message (and end up in
every CI log). We point file descriptor 2 at /dev/null for the import only.
"""

from __future__ import annotations

import os
import sys


def import_pybullet_quietly() -> None:
    if "pybullet" in sys.modules:
        return
    try:
        sys.stderr.flush()
        saved = os.dup(2)
    except (OSError, ValueError, AttributeError):  # no real stderr: import as usual
        import pybullet  # noqa: F401
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        import pybullet  # noqa: F401
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


import_pybullet_quietly()
