"""The one rule for numbers on the command line: every numeric option of ``ptm`` (and of the pytest
plugin) parses through :func:`real` or :func:`integer`, which refuse NaN, infinities and values out
of the option's range with exit code 2 and a sentence naming the range (argparse prints it as
``ptm run: error: argument --tick-hz: ...``). ``tests/unit/test_cli_numbers.py`` reads every
parser and fails on an option that takes ``type=float`` or ``type=int`` directly.

The ranges of options that several commands share are here once (:data:`TICK_HZ`, :data:`TIMEOUT_S`,
:data:`SEED`, :data:`PORT`).
"""

from __future__ import annotations

import argparse
import math
from typing import Callable, Optional


class NumberOption:
    """An argparse ``type``: text -> a finite number within ``[minimum, maximum]`` (``above``: strictly
    greater than that bound instead).

    Args:
        kind: ``float`` or ``int``.
        minimum, maximum: inclusive bounds, or None for none.
        above: exclusive lower bound (e.g. ``0`` for "> 0"), or None.
        unit: printed after the range (``"Hz"``, ``"s"``).

    Raises (when called):
        argparse.ArgumentTypeError: not a number, NaN, an infinity, or out of range.
    """

    def __init__(self, kind: type, minimum: Optional[float] = None, maximum: Optional[float] = None, *,
                 above: Optional[float] = None, unit: str = ""):
        self.kind = kind
        self.minimum, self.maximum, self.above, self.unit = minimum, maximum, above, unit
        self.__name__ = "integer" if kind is int else "number"  # argparse names the type in some messages

    def describe(self) -> str:
        """``"a number > 0 and <= 10000 Hz"``: what the option takes."""
        what = "an integer" if self.kind is int else "a finite number"
        parts = []
        if self.above is not None:
            parts.append(f"> {self.above:g}")
        elif self.minimum is not None:
            parts.append(f">= {self.minimum:g}" if self.kind is float else f">= {int(self.minimum)}")
        if self.maximum is not None:
            parts.append(f"<= {self.maximum:g}" if self.kind is float else f"<= {int(self.maximum)}")
        return what + (" " + " and ".join(parts) if parts else "") + (f" {self.unit}" if self.unit else "")

    def __call__(self, text: str) -> float | int:
        value: float | int
        try:
            value = int(text, 10) if self.kind is int else float(text)
        except (TypeError, ValueError):
            raise argparse.ArgumentTypeError(f"expected {self.describe()}, got {text!r}") from None
        if self.kind is float and not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"expected {self.describe()}, got {text!r} (not finite)")
        low_ok = (self.above is None or value > self.above) and (self.minimum is None or value >= self.minimum)
        if not low_ok or (self.maximum is not None and value > self.maximum):
            raise argparse.ArgumentTypeError(f"expected {self.describe()}, got {text!r}")
        return value

    def __repr__(self) -> str:
        return f"NumberOption({self.describe()})"


def real(minimum: Optional[float] = None, maximum: Optional[float] = None, *, above: Optional[float] = None,
         unit: str = "") -> Callable[[str], float]:
    """An argparse ``type`` for a finite float in range (see :class:`NumberOption`)."""
    return NumberOption(float, minimum, maximum, above=above, unit=unit)  # type: ignore[return-value]


def integer(minimum: Optional[int] = None, maximum: Optional[int] = None, unit: str = "") -> Callable[[str], int]:
    """An argparse ``type`` for an integer (decimal digits) in range (see :class:`NumberOption`)."""
    return NumberOption(int, minimum, maximum, unit=unit)  # type: ignore[return-value]


#: tree tick rate, Hz of backend time: above 10 kHz no physics rate keeps up (the scene's
#: ``physics_hz`` is at most 10000), below 0.01 Hz a tick is longer than any run
TICK_HZ = real(0.01, 10000.0, unit="Hz")
#: a run's time limit, seconds of backend time
TIMEOUT_S = real(above=0.0, unit="s")
#: random seeds (numpy's and PyBullet's range)
SEED = integer(0, 2**32 - 1)
#: TCP ports; 0 picks a free one
PORT = integer(0, 65535)
