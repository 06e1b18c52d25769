"""py_trees behaviours: thin action clients on the backend, and conditions.

Modules (one per family): ``motion`` (MoveToPose, MoveCartesian, MoveJoints, GripperCommand),
``world`` (GetObjectPose, ObjectLifted, ...), ``basic`` (Wait, blackboard helpers, Success...).
"""

#: modules imported to register the built-in behaviours (see registry.load_builtin_and_plugins)
BUILTIN_MODULES = ["basic", "motion", "world", "grasping", "grasp_fix", "regrasp", "affordances", "gripper_sensor", "reach"]

#: the built-in behaviour names each module of :data:`BUILTIN_MODULES` registers (those its import
#: adds, in that order): a tree's node is resolved by importing its one module, so a run imports the
#: families its tree uses, not the regrasp planner or the door affordances with every pick (about
#: 20 ms of each ``ptm run``, issue 35). tests/unit/test_registry_index.py checks it against the
#: modules.
BUILTIN_BEHAVIOURS = {
    "basic": ["CheckBlackboardVariableExists", "CheckBlackboardVariableValue", "Failure", "Running",
              "SetBlackboardVariable", "Success", "Wait", "WaitForBlackboardVariable"],
    "motion": ["GripperCommand", "MoveCartesian", "MoveJoints", "MoveToPose"],
    "world": ["GetObjectPose", "ObjectLifted", "ObjectNear"],
    "grasping": ["ChooseGrasp"],
    "grasp_fix": ["GraspFixAttach", "GraspFixRelease", "IsAttached"],
    "regrasp": ["ExecuteRegraspPlan", "GraspStateIs", "PlanRegrasp"],
    "affordances": ["DetectDoorAffordance", "DetectDrawerAffordance", "DoorAngleAtLeast", "DrawerOpeningAtLeast",
                    "GetGraspAndTwistSubframes", "GetMoveAlongArcSubframes", "MoveAlongArc", "TwistHandle"],
    "gripper_sensor": ["EventDetector", "FindContact", "ForceServo", "Grab", "ObjectIntact", "Release", "SlipServo"],
    "reach": ["CheckReachability"],
}
