"""Test support: a scriptable fake backend and a helper that ticks one behaviour to its end."""

from .fake_backend import FakeBackend, FakeResource, Script
from .ticking import tick_until_done

__all__ = ["FakeBackend", "FakeResource", "Script", "tick_until_done"]
