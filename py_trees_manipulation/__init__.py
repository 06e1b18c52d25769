"""py_trees_manipulation: behaviour trees for robot manipulation.

Behaviours are py_trees action clients on a backend (the embedded PyBullet simulator or a real
robot). Trees are YAML files validated against a registry of behaviours before anything runs.

Conventions (see :mod:`py_trees_manipulation.conventions`): SI units, right-handed frames,
quaternions **scalar-first (w, x, y, z)** at every public boundary.
"""

__version__ = "0.1.0"
