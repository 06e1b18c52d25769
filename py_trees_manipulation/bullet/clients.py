"""Owning PyBullet clients: disconnecting one (gone already is no error), and a base for the
objects that own clients (the simulator, the collision world) so that one forgotten without
``close()`` still releases them when it is garbage-collected."""

from __future__ import annotations

import pybullet as pb

from .. import Closing

__all__ = ["disconnect", "ClosedOnDelete"]


def disconnect(client: int) -> None:
    """Disconnect PyBullet client ``client``; a client already disconnected is no error."""
    try:
        pb.disconnect(physicsClientId=client)
    except pb.error:  # pragma: no cover
        pass


class ClosedOnDelete(Closing):
    """Base of an object whose ``close()`` (idempotent) releases what it owns: ``close()`` is also
    called when it is garbage-collected (an error then is swallowed: the interpreter may be
    shutting down), and on leaving a ``with`` block."""

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
