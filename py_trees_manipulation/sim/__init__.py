"""The PyBullet simulator backend: a scene from YAML, robots (any robot description) driven by action servers.

- :mod:`.scene`: the ``scene:`` section of a task file, validated into dataclasses
  (:func:`~.scene.parse_scene`, :class:`~.scene.SceneError` with a path to the bad value,
  :func:`~.scene.scene_keys_doc` for the reference).
- :mod:`.robots`: a robot description (:mod:`py_trees_manipulation.robots`: ``franka_panda``,
  ``kuka_iiwa_wsg50`` or a user's file) loaded in a PyBullet client.
- :mod:`.backend`: :class:`~.backend.SimBackend`, the :class:`py_trees_manipulation.backend.Backend`
  implementation (1 kHz physics, IK with reachability check, PR2-style ``gripper_action``,
  ground-truth world queries, metrics and telemetry).
- :mod:`.planning`: the arm motions (``move_joints``, ``move_to_pose``, ``move_cartesian``),
  collision-checked and planned in a collision world while sim time stands still.

Quick use::

    from py_trees_manipulation.sim import SimBackend
    with SimBackend(scene_dict) as sim:
        handle = sim.arms["panda"].send_goal("move_to_pose", MoveToPoseGoal(pose))
        while not handle.done:
            sim.advance(1 / 30)
"""

from . import _quiet_import  # noqa: F401  (first: pybullet's import banner)
from .backend import Contact, FingerState, IKSolution, SimArm, SimBackend, SimGripper, SimWorld, register_extension
from .scene import SceneError, SceneSpec, parse_scene, scene_keys_doc

__all__ = ["SimBackend", "register_extension", "SceneError", "SceneSpec", "parse_scene", "scene_keys_doc", "SimArm", "SimGripper",
           "SimWorld", "Contact", "FingerState", "IKSolution"]
from . import grasp_fix as _grasp_fix  # noqa: E402,F401  (registers the grasp_fix: section and extension)
from . import doors as _doors  # noqa: F401,E402  (scene sections doors/cabinets, follow_screw)
from . import tactile_sensor as _tactile_sensor  # noqa: F401,E402  (tactile: section, PR2 gripper sensor actions)
from . import planning as _planning  # noqa: F401,E402  (motion_planning: section; collision-checked arm motions)
