"""The scene layer: what a task file says the world is, as plain data (no PyBullet, no py_trees).

- :mod:`.spec`: the ``scene:`` section parsed and validated into dataclasses (:func:`~.spec.parse_scene`,
  :class:`~.spec.SceneError` with the path of the bad value, :func:`~.spec.scene_keys_doc`).
- :mod:`.sections`: the built-in extra sections (``grasp_fix``, ``doors``, ``cabinets``, ``tactile``,
  ``motion_planning``), registered with :func:`~.spec.register_section` when this package is imported.
- :mod:`.assets`: URDF text of the generated bodies (doors, cabinets, handles); :mod:`.urdf_check`: a
  URDF file checked before any simulator reads it.
- :mod:`.reach` and :mod:`.reach_targets`: how far a robot reaches, and the targets a task must reach
  (door arcs, drawer pulls, grasps), from the scene alone.

The loader, the collision world, both backends and the schema read the scene from here; validating a
task file (``ptm validate``) never imports PyBullet.
"""

from .spec import SceneError, SceneSpec, parse_scene, scene_keys_doc

# the built-in extra sections, registered once the spec helpers exist (they import only .spec)
from . import sections  # noqa: E402,F401

__all__ = ["SceneError", "SceneSpec", "parse_scene", "scene_keys_doc"]
