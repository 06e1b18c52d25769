"""The PyBullet simulator backend: a scene from YAML, robots (any robot description) driven by action servers.

- :mod:`.scene`: the ``scene:`` section of a task file, validated into dataclasses
  (:func:`~.scene.parse_scene`, :class:`~.scene.SceneError` with a path to the bad value,
  :func:`~.scene.scene_keys_doc` for the reference); :mod:`.sections`: the built-in extra sections.
  Neither imports PyBullet: validating a task file never loads the simulator.
- :mod:`.robots`: a robot description (:mod:`py_trees_manipulation.robots`: ``franka_panda``,
  ``kuka_iiwa_wsg50`` or a user's file) loaded in a PyBullet client.
- :mod:`.backend`: :class:`~.backend.SimBackend`, the :class:`py_trees_manipulation.backend.Backend`
  implementation (1 kHz physics, IK with reachability check, PR2-style ``gripper_action``,
  ground-truth world queries, metrics and telemetry), built from :mod:`.extensions` (the extension
  registry), :mod:`.resources` (goals on arms and grippers), :mod:`.arm`, :mod:`.gripper`,
  :mod:`.world` (ground-truth queries), :mod:`.loading` (building the scene, start checks) and
  :mod:`.metrics`; it keeps the clock and stepping.
- :mod:`.planning`: the arm motions (``move_joints``, ``move_to_pose``, ``move_cartesian``),
  collision-checked and planned in a collision world while sim time stands still.

The simulator names (``SimBackend``, ``register_extension``, ...) are imported on first use (PEP 562),
with PyBullet and the built-in extensions (:data:`BUILTIN_EXTENSIONS`).

Quick use::

    from py_trees_manipulation.sim import SimBackend
    with SimBackend(scene_dict) as sim:
        handle = sim.arms["panda"].send_goal("move_to_pose", MoveToPoseGoal(pose))
        while not handle.done:
            sim.advance(1 / 30)
"""

from __future__ import annotations

from typing import Any

from ..scene.spec import SceneError, SceneSpec, parse_scene, scene_keys_doc

#: the simulator modules whose extensions every :class:`SimBackend` builds (see
#: :data:`.backend.BUILTIN_EXTENSIONS`, where they are loaded)
BUILTIN_EXTENSIONS = ("grasp_fix", "doors", "tactile_sensor", "planning")

_BACKEND_NAMES = ("Contact", "FingerState", "IKSolution", "SimArm", "SimBackend", "SimGripper", "SimWorld",
                  "register_extension")

__all__ = ["SimBackend", "register_extension", "SceneError", "SceneSpec", "parse_scene", "scene_keys_doc", "SimArm",
           "SimGripper", "SimWorld", "Contact", "FingerState", "IKSolution"]


def load_simulator() -> Any:
    """Import PyBullet (without its banner), :mod:`.backend` and the built-in extensions
    (:data:`BUILTIN_EXTENSIONS`); returns the backend module. Idempotent."""
    from ..bullet import _quiet_import  # noqa: F401  (first: pybullet's import banner)
    from . import backend

    backend.load_builtin_extensions()
    return backend


def __getattr__(name: str) -> Any:
    if name in _BACKEND_NAMES:
        value = getattr(load_simulator(), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
