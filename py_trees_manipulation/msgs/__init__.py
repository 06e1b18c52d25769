"""Message dataclasses: goal status, arm motion goals, gripper commands, PR2 gripper sensor messages.

Imports neither pybullet nor py_trees. Poses are ``(4, 4)`` homogeneous transforms in metres;
quaternions, where they appear, are ``(w, x, y, z)``.
"""
