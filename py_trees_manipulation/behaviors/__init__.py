"""py_trees behaviours: thin action clients on the backend, and conditions.

Modules (one per family): ``motion`` (MoveToPose, MoveCartesian, MoveJoints, GripperCommand),
``world`` (GetObjectPose, ObjectLifted, ...), ``basic`` (Wait, blackboard helpers, Success...).
"""

#: modules imported to register the built-in behaviours (see registry.load_builtin_and_plugins)
BUILTIN_MODULES = ["basic", "motion", "world", "grasping", "grasp_fix", "regrasp", "affordances", "gripper_sensor", "reach"]
