"""Test support: a scriptable fake backend for behaviour unit tests."""

from .fake_backend import FakeBackend, FakeResource, Script

__all__ = ["FakeBackend", "FakeResource", "Script"]
