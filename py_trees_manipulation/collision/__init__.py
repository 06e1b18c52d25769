"""The collision world: a PyBullet DIRECT planning scene of the task's scene and robots.

Used by the simulator and the hardware backend alike (the client plans). Nothing is imported at
package import; use the modules:

- :mod:`.ik`: :func:`~.ik.solve_ik`, inverse kinematics verified by forward kinematics.
- :mod:`.world`: :class:`~.world.CollisionWorld` (bodies, robots, padding, attached objects, the
  fast state checker with allowed contacts, clearance queries).
- :mod:`.arm_planner`: :class:`~.arm_planner.ArmMotionPlanner`, what every motion goes through:
  joint, pose and Cartesian goals checked, planned with OMPL when needed and timed with ruckig.
"""
