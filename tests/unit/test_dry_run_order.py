"""``ptm validate --plan`` follows the arm motions of the nominal path only: a Selector's fallbacks and
a child whose failure is accepted are not followed (the run may never take them)."""

from py_trees_manipulation.located.errors import Loc
from py_trees_manipulation.trees.plan_check import _tick_order
from py_trees_manipulation.trees.spec import NodeSpec


def node(kind: str, category: str, *children: NodeSpec, name: str = "") -> NodeSpec:
    return NodeSpec(kind, category, name or kind, {}, list(children), Loc("t.yaml", 1, 1))


def test_only_the_nominal_path_is_followed():
    tree = node("Sequence", "composite",
                node("MoveJoints", "behaviour", name="ready"),
                node("Selector", "composite",
                     node("MoveCartesian", "behaviour", name="first_try"),
                     node("MoveCartesian", "behaviour", name="fallback")),
                node("FailureIsSuccess", "decorator", node("MoveCartesian", "behaviour", name="optional")),
                node("Retry", "decorator", node("Parallel", "composite", node("MoveToPose", "behaviour", name="both"))),
                node("MoveCartesian", "behaviour", name="last"))
    nominal = {n.name: ok for n, ok in _tick_order(tree) if n.category == "behaviour"}
    assert nominal == {"ready": True, "first_try": False, "fallback": False, "optional": False, "both": True,
                       "last": True}


def test_what_the_dry_run_cannot_know_is_left_to_the_run():
    """A key a fallback may write is forgotten (the motion reading it is not followed); an arm that
    holds an object and is no longer followed leaves the world unknown: the dry run ends there (the
    nodes after it are checked when they start); the world is put back afterwards."""
    import os

    import numpy as np

    from py_trees_manipulation.behaviors.params import BlackboardRef
    from py_trees_manipulation.collision.world import CollisionWorld
    from py_trees_manipulation.scene.spec import parse_scene
    from py_trees_manipulation.trees.loader import load_task
    from py_trees_manipulation.trees.plan_check import DryRun

    examples = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
    task = load_task(os.path.join(examples, "pick_and_place.yaml"))
    scene = parse_scene(task.scene, base_dir=examples)
    world = CollisionWorld.from_scene(scene)
    try:
        mug = world.object_pose("mug")
        dry = DryRun(world, scene, {})
        locate = NodeSpec("GetObjectPose", "behaviour", "locate", {"object": "mug", "output_key": "object_pose"}, [],
                          Loc("t.yaml", 1, 1))
        assert dry.step(locate, True) == [] and np.allclose(dry.blackboard["object_pose"], mug)
        fallback = NodeSpec("SetBlackboardVariable", "behaviour", "maybe",
                            {"variable_name": "object_pose", "value": [0, 0, 0]}, [], Loc("t.yaml", 2, 1))
        assert dry.step(fallback, False) == [] and "object_pose" not in dry.blackboard
        dry.step(locate, True)
        # the hand holds the mug; a motion whose target is unknown: where the mug goes is unknown too
        world.attach("panda", "mug")
        dry.held["panda"] = ("mug", world.attached_transform("panda"))
        move = NodeSpec("MoveToPose", "behaviour", "away", {"target": BlackboardRef("nowhere")}, [],
                        Loc("t.yaml", 3, 1))
        assert dry.step(move, True) is None
        assert dry.step(locate, True) is None          # everything after it: left to the run
        dry.restore()
        assert world.attached("panda") is None and np.allclose(world.object_pose("mug"), mug)
    finally:
        world.close()


def test_a_hand_closing_on_what_the_other_hand_holds_is_left_to_the_run():
    """A handover written by hand (the right closes on the box the left holds): which hand holds it
    afterwards is the grasp controller's (GraspFix's) to decide: the dry run ends there, no traceback."""
    import os

    from py_trees_manipulation.collision.world import CollisionWorld
    from py_trees_manipulation.scene.spec import parse_scene
    from py_trees_manipulation.trees.loader import load_task
    from py_trees_manipulation.trees.plan_check import DryRun

    examples = os.path.join(os.path.dirname(__file__), "..", "..", "examples")
    scene = parse_scene(load_task(os.path.join(examples, "handover.yaml")).scene, base_dir=examples)
    world = CollisionWorld.from_scene(scene)
    try:
        dry = DryRun(world, scene, {})
        world.attach("left", "box")
        dry.held["left"] = ("box", world.attached_transform("left"))
        world.object_at_tcp = lambda robot, radius_m: "box"   # the right hand's fingers round the box
        close = NodeSpec("GripperCommand", "behaviour", "right_close", {"gripper": "right", "position": 0.0}, [],
                         Loc("t.yaml", 1, 1))
        assert dry.step(close, True) is None
        assert world.attached("left") == "box" and world.attached("right") is None
        dry.restore()
    finally:
        world.close()
