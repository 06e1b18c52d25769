"""The built-in extra sections of a scene (``grasp_fix``, ``doors``, ``cabinets``, ``tactile``,
``motion_planning``): their keys parsed and checked by :func:`~..scene.parse_scene` without a physics
client, so validating a task file (``ptm validate``) never imports PyBullet.

Each module registers its section with :func:`~..scene.register_section` when imported;
:mod:`..scene` imports this package once its own helpers exist. The simulator side of each section
(what it builds in the physics client) is in the matching module of :mod:`py_trees_manipulation.sim`
(``grasp_fix``, ``doors``, ``tactile_sensor``, ``planning``), registered with
:func:`~..backend.register_extension`.
"""

# (registration order, the order of SceneSpec.extra: as the simulator modules registered them before)
from . import grasp_fix  # noqa: F401,E402
from . import doors  # noqa: F401,E402
from . import tactile  # noqa: F401,E402
from . import motion_planning  # noqa: F401,E402
