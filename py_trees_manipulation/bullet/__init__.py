"""PyBullet loading, in one place below both of its users (the simulator, :mod:`..sim`, and the
collision world, :mod:`..collision`):

- :mod:`.robots`: a robot description (:mod:`py_trees_manipulation.robots`) loaded in a PyBullet
  client (:class:`~.robots.LoadedRobot`, :class:`~.robots.RobotModel`, :func:`~.robots.model_by_name`);
- :mod:`.articulated`: the generated doors and drawers (hinge, slide, latch, lever) as PyBullet bodies;
- :mod:`.pb_pose`: PyBullet's (position, quaternion x, y, z, w) to a (4, 4) pose;
- :mod:`._quiet_import`: imports PyBullet without its banner (import it first).

Nothing here knows of the simulator's servers or the planner's checks.
"""
