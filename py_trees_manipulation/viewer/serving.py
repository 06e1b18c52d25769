"""How the viewer's servers (the browser viewer, the Foxglove live server) stay up after a run."""

from __future__ import annotations

import time
from typing import Callable


def wait_until_closed(closed: Callable[[], bool], close: Callable[[], None], poll_s: float = 0.2) -> None:
    """Block until ``closed()`` is true or Ctrl-C (KeyboardInterrupt is swallowed), then ``close()``:
    how ``ptm run --viewer`` and ``--foxglove`` keep their servers up after a run."""
    try:
        while not closed():
            time.sleep(poll_s)
    except KeyboardInterrupt:
        pass
    finally:
        close()
