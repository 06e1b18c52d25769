"""Contact materials on PyBullet bodies, the same in the simulator and the collision world.

The figures and their sources: :mod:`py_trees_manipulation.scene.contact`. PyBullet takes a
body's ``contactStiffness`` and ``contactDamping`` only together, in one ``changeDynamics`` call
("Both contactStiffness and contactDamping needs to be set together"); ``getDynamicsInfo`` reports
-1 for a body that has none (rigid).
"""

from __future__ import annotations

from . import _quiet_import  # noqa: F401  (first: pybullet's import banner)

from typing import Any, Optional

import pybullet as pb

from ..scene.contact import ContactMaterial

__all__ = ["contact_material", "apply_fixture_material", "apply_object_material"]


def contact_material(client: int, body: int, link: int = -1) -> Optional[ContactMaterial]:
    """The soft-contact material of a body's link, or None when it is rigid (none set)."""
    info = pb.getDynamicsInfo(body, link, physicsClientId=client)
    damping, stiffness = float(info[8]), float(info[9])
    if stiffness <= 0.0:
        return None
    return ContactMaterial(stiffness, max(damping, 0.0))


def apply_fixture_material(client: int, body: int, fixture: Any) -> None:
    """Give a fixture's links its contact material (:meth:`~py_trees_manipulation.scene.spec.FixtureSpec.contact_material`):
    every link when the scene sets one, else the links whose URDF sets none (a table top's)."""
    material = fixture.contact_material()
    explicit = getattr(fixture, "contact_stiffness", None) is not None
    for link in range(-1, pb.getNumJoints(body, physicsClientId=client)):
        if explicit or contact_material(client, body, link) is None:
            pb.changeDynamics(body, link, contactStiffness=material.stiffness_n_per_m,
                              contactDamping=material.damping_n_s_per_m, physicsClientId=client)


def apply_object_material(client: int, body: int, obj: Any) -> None:
    """Give an object's base the scene's ``contact_stiffness`` / ``contact_damping`` when it sets them."""
    if getattr(obj, "contact_stiffness", None) is not None:
        pb.changeDynamics(body, -1, contactStiffness=float(obj.contact_stiffness),
                          contactDamping=float(obj.contact_damping or 0.0), physicsClientId=client)
