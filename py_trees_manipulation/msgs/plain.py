"""Plain JSON values from message fields: numpy arrays and scalars become lists and Python numbers."""

from __future__ import annotations

from typing import Any

import numpy as np


def jsonable(x: Any) -> Any:
    """``x`` with dict keys as strings, tuples as lists, numpy arrays as nested lists and numpy
    scalars as Python numbers; anything else unchanged. Used for summaries, metrics and rosbridge
    messages."""
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return x.tolist()
    if isinstance(x, np.generic):
        return x.item()
    return x
