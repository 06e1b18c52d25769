"""Robots beyond the Panda in the real simulator (headless).

- A user's own robot: a 6-joint arm with a two-finger gripper, written as a URDF in the test, gets a
  robot description file and picks a box with the shipped grasp subtree, named in the task's scene
  by path (``model: my_arm.yaml``, relative to the task file).
- The WSG 50 of ``kuka_iiwa_wsg50``: a plain grasp loads the 22-cell pads' pad cells (the pad frames
  of the description), the PR2 controller opens it to its own 0.104 m, and the wrist force is read
  at its mount joint.

The stock models run the shipped examples in the scenario files (``*.scenario.yaml``, variants
``kuka_iiwa_wsg50``).
"""

from __future__ import annotations

import os
import textwrap

import numpy as np
import pytest

from py_trees_manipulation.geometry.poses import pose_from_spec
from py_trees_manipulation.msgs.motion import MoveCartesianGoal, MoveToPoseGoal, Pr2GripperCommand
from py_trees_manipulation.robots import load_description
from py_trees_manipulation.robots.urdf import parse_urdf
from py_trees_manipulation.sim import SimBackend, parse_scene
from py_trees_manipulation.trees.loader import load_task
from py_trees_manipulation.trees.runner import RunOptions, run_task

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SUBTREES = os.path.join(ROOT, "examples", "subtrees")


def _inertial(mass, ixx, iyy, izz, z=0.0):
    return (f'<inertial><origin xyz="0 0 {z}"/><mass value="{mass}"/>'
            f'<inertia ixx="{ixx}" ixy="0" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/></inertial>')


def _link(name, length, radius, mass):
    """A cylinder link along its z axis, from 0 to ``length``."""
    i_xx = mass * (3 * radius ** 2 + length ** 2) / 12
    return (f'<link name="{name}">{_inertial(mass, i_xx, i_xx, mass * radius ** 2 / 2, length / 2)}'
            f'<visual><origin xyz="0 0 {length / 2}"/><geometry><cylinder radius="{radius}" length="{length}"/>'
            f'</geometry></visual><collision><origin xyz="0 0 {length / 2}"/><geometry>'
            f'<cylinder radius="{radius}" length="{length}"/></geometry></collision></link>')


def _joint(name, parent, child, z, axis, effort, velocity=2.0, lower=-2.9, upper=2.9):
    return (f'<joint name="{name}" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="0 0 {z}"/><axis xyz="{axis}"/>'
            f'<limit lower="{lower}" upper="{upper}" effort="{effort}" velocity="{velocity}"/></joint>')


def six_joint_arm_urdf(revolute_fingers: bool = False) -> str:
    """A 6-joint arm (shoulder 0.2 m up, 0.35 m upper arm, 0.30 m forearm, spherical wrist) with a
    two-finger gripper, box pads 20 mm wide and 30 mm long at the fingertips (85 mm below the
    finger joints); primitive shapes only. Prismatic fingers open 0 .. 0.04 m each along the hand's
    y axis; revolute ones (``revolute_fingers``) swing 0 .. 0.5 rad about x from the closed pose."""
    kind, limit = ("revolute", 'lower="0" upper="0.5" effort="10" velocity="2"') if revolute_fingers else \
        ("prismatic", 'lower="0" upper="0.04" effort="60" velocity="0.2"')
    finger = textwrap.dedent('''\
        <link name="{side}_finger">
          <contact><stiffness value="30000"/><damping value="1000"/><lateral_friction value="1.0"/></contact>
          {inertial}
          <visual><origin xyz="0 {y} 0.05"/><geometry><box size="0.02 0.01 0.1"/></geometry></visual>
          <collision><origin xyz="0 {y} 0.05"/><geometry><box size="0.02 0.01 0.1"/></geometry></collision>
        </link>
        <joint name="{side}_finger_joint" type="KIND"><parent link="hand"/><child link="{side}_finger"/>
          <origin xyz="0 0 0.04"/><axis xyz="{axis}"/><limit LIMIT/>
        </joint>''').replace("KIND", kind).replace("LIMIT", limit)
    axes = ("-1 0 0", "1 0 0") if revolute_fingers else ("0 1 0", "0 -1 0")
    return _arm_urdf(finger.format(side="left", y=0.005, axis=axes[0], inertial=_inertial(0.05, 1e-4, 1e-4, 1e-5, 0.05))
                     + finger.format(side="right", y=-0.005, axis=axes[1],
                                     inertial=_inertial(0.05, 1e-4, 1e-4, 1e-5, 0.05)))


def linkage_gripper_arm_urdf() -> str:
    """The 6-joint arm with a parallelogram-style gripper (as the Robotiq 2F or the xArm gripper):
    each finger is a 60 mm knuckle hinged on the hand (the finger joint, 0 .. 0.6 rad) carrying a
    fingertip on a second hinge that ``<mimic>``s the finger joint with its axis reversed, so the
    fingertip stays parallel while the knuckle swings; the 30 mm pads sit on the fingertips, 25 mm
    below their hinge (the TCP is where the other arm's is)."""
    finger = textwrap.dedent('''\
        <link name="{side}_finger">
          {inertial}
          <collision><origin xyz="0 {y} 0.03"/><geometry><box size="0.02 0.006 0.06"/></geometry></collision>
        </link>
        <joint name="{side}_finger_joint" type="revolute"><parent link="hand"/><child link="{side}_finger"/>
          <origin xyz="0 0 0.04"/><axis xyz="{axis} 0 0"/><limit lower="0" upper="0.6" effort="10" velocity="2"/>
        </joint>
        <link name="{side}_fingertip">
          <contact><stiffness value="30000"/><damping value="1000"/><lateral_friction value="1.0"/></contact>
          {inertial}
          <collision><origin xyz="0 {y} 0.025"/><geometry><box size="0.02 0.01 0.03"/></geometry></collision>
        </link>
        <joint name="{side}_fingertip_joint" type="revolute"><parent link="{side}_finger"/><child link="{side}_fingertip"/>
          <origin xyz="0 0 0.06"/><axis xyz="{tip_axis} 0 0"/><limit lower="-0.6" upper="0.6" effort="10" velocity="2"/>
          <mimic joint="{side}_finger_joint" multiplier="1"/>
        </joint>''')
    inertial = _inertial(0.03, 1e-5, 1e-5, 1e-6, 0.03)
    return _arm_urdf(finger.format(side="left", y=0.005, axis=-1, tip_axis=1, inertial=inertial)
                     + finger.format(side="right", y=-0.005, axis=1, tip_axis=-1, inertial=inertial))


def _arm_urdf(fingers: str) -> str:
    parts = [
        '<?xml version="1.0"?>', '<robot name="six_joint_arm">',
        f'<link name="base">{_inertial(0, 0, 0, 0)}<collision><origin xyz="0 0 0.05"/><geometry>'
        '<cylinder radius="0.08" length="0.1"/></geometry></collision></link>',
        _joint("joint1", "base", "link1", 0.1, "0 0 1", 150), _link("link1", 0.1, 0.05, 3.0),
        _joint("joint2", "link1", "link2", 0.1, "0 1 0", 150, lower=-2.0, upper=2.0), _link("link2", 0.35, 0.04, 3.0),
        _joint("joint3", "link2", "link3", 0.35, "0 1 0", 100, lower=-2.6, upper=2.6), _link("link3", 0.30, 0.035, 2.0),
        _joint("joint4", "link3", "link4", 0.30, "0 0 1", 30), _link("link4", 0.04, 0.03, 0.5),
        _joint("joint5", "link4", "link5", 0.04, "0 1 0", 30, lower=-2.2, upper=2.2), _link("link5", 0.04, 0.03, 0.5),
        _joint("joint6", "link5", "flange", 0.04, "0 0 1", 20), _link("flange", 0.01, 0.03, 0.1),
        '<joint name="hand_joint" type="fixed"><parent link="flange"/><child link="hand"/><origin xyz="0 0 0.01"/></joint>',
        f'<link name="hand">{_inertial(0.4, 0.001, 0.001, 0.001, 0.02)}<collision><origin xyz="0 0 0.02"/><geometry>'
        '<box size="0.04 0.12 0.04"/></geometry></collision></link>',
        fingers,
        '<joint name="tcp_joint" type="fixed"><parent link="hand"/><child link="tcp"/><origin xyz="0 0 0.125"/></joint>',
        f'<link name="tcp">{_inertial(0, 0, 0, 0)}</link>',
        '</robot>',
    ]
    return "\n".join(parts)


SIX_JOINT_ARM_YAML = '''\
# a 6-joint arm with a parallel gripper, written by the test
description: six revolute joints, two prismatic fingers
urdf: six_joint_arm.urdf
arm:
  joints: [joint1, joint2, joint3, joint4, joint5, joint6]
  acceleration_limits: [8, 8, 8, 12, 12, 12]
tcp:
  link: tcp                     # between the pad centres: z out of the fingers, y the finger travel
gripper:
  joints: [left_finger_joint, right_finger_joint]
  palm_link: hand
  default_force_n: 40
  max_force_n: 60
  pads:
    width_m: 0.02
    length_m: 0.03
    fingers:
      - {link: left_finger, pose: {position: [0, 0, 0.085]}}
      - {link: right_finger, pose: {position: [0, 0, 0.085], rpy_deg: [0, 0, 180]}}
named_configurations:
  ready: [0.0, 0.4, 1.6, 0.0, 1.1416, 0.0]      # TCP 0.41 m ahead, 0.25 m up, fingers down
'''

PICK_TASK = '''\
name: six_joint_pick
scene:
  robots:
    - {name: arm, model: robots/six_joint_arm.yaml}
  fixtures:
    - {name: floor, urdf: plane.urdf}
  objects:
    - name: box
      primitive: {shape: box, size: [0.04, 0.04, 0.04]}
      mass_kg: 0.15
      pose: {position: [0.42, 0.05, 0.02], rpy_deg: [0, 0, 20]}
      grasps:                     # 1 cm above the centre: fingertips clear of the floor by more than the 10 mm padding
        - {name: top, pose: {position: [0, 0, 0.01], rpy_deg: [180, 0, 0]}, symmetry: {axis: z, order: 4}, width_m: 0.04}
tree:
  Sequence:
    children:
      - MoveJoints: {name: ready, configuration: ready}
      - GripperCommand: {name: open, position: open}
      - GetObjectPose: {name: locate, object: box, output_key: box_pose}
      - include: SUBTREES/grasp_from_above.yaml
        name: grasp
        with: {object: box, pose_key: box_pose, max_effort_n: 30}
      - MoveCartesian: {name: lift, delta: [0, 0, 0.10], speed_mps: 0.1}
      - ObjectLifted: {name: lifted, object: box, min_height_m: 0.08}
'''


def test_a_six_joint_arm_described_in_the_test_picks_a_box(tmp_path):
    robots = tmp_path / "robots"
    robots.mkdir()
    (robots / "six_joint_arm.urdf").write_text(six_joint_arm_urdf())
    (robots / "six_joint_arm.yaml").write_text(SIX_JOINT_ARM_YAML)
    d = load_description(str(robots / "six_joint_arm.yaml"))
    assert d.name == "six_joint_arm" and d.dof == 6 and d.max_gap_m == pytest.approx(0.08)
    assert d.wrist_ft_joint == "hand_joint"            # the joint above the palm, by default
    task_file = tmp_path / "pick.yaml"
    task_file.write_text(PICK_TASK.replace("SUBTREES", SUBTREES))
    task = load_task(str(task_file))
    assert parse_scene(task.scene, base_dir=str(tmp_path)).robots[0].description.file == str(robots / "six_joint_arm.yaml")
    result = run_task(task, RunOptions(display=False, timeout_s=20))
    s = result.summary
    assert s["status"] == "SUCCESS", s
    m = s["metrics"]
    assert m["object_lift_m"] == pytest.approx(0.10, abs=0.01) and not m["object_dropped"]
    # a 30 N grip on the 0.15 kg box: each finger presses with about 30 N (both pads load the box)
    assert 20.0 < m["max_fingertip_force_n"] < 45.0


def _kuka_box_scene():
    return {
        "robots": [{"name": "kuka", "model": "kuka_iiwa_wsg50", "base_pose": {"position": [0, 0, 0.626]}}],
        "fixtures": [{"name": "table", "urdf": "table/table.urdf", "pose": {"position": [0.5, 0, 0]}}],
        "objects": [{"name": "box", "primitive": {"shape": "box", "size": [0.05, 0.05, 0.05]}, "mass_kg": 0.2,
                     "pose": {"position": [0.5, 0.0, 0.651]}}],
    }


def _wait(sim, handle, timeout_s=10.0):
    t0 = sim.now()
    while not handle.done and sim.now() - t0 < timeout_s:
        sim.advance(1 / 30)
    return handle


def test_wsg50_pads_feel_a_plain_grasp_and_the_controller_opens_it_fully():
    with SimBackend(_kuka_box_scene()) as sim:
        arm, gripper = sim.arms["kuka"], sim.grippers["kuka"]
        assert gripper.max_gap_m == pytest.approx(0.104)
        tactile = sim.extensions["tactile"].grippers["kuka"]
        assert tactile.controller.params.position_open == pytest.approx(0.104)
        top = pose_from_spec({"position": [0.5, 0.0, 0.651], "rpy_deg": [180, 0, 90]})
        above = top.copy()
        above[2, 3] += 0.12
        assert _wait(sim, arm.send_goal("move_to_pose", MoveToPoseGoal(above))).status.name == "SUCCEEDED"
        f0 = np.linalg.norm(arm.wrist_force())
        assert _wait(sim, arm.send_goal("move_cartesian", MoveCartesianGoal(top, speed_mps=0.08))).status.name == "SUCCEEDED"
        _wait(sim, gripper.send_goal("gripper_action", Pr2GripperCommand(position=0.0, max_effort=30.0)))
        sim.advance(0.3)
        cells = tactile.cell_forces
        pads, edges = cells[:, 7:].sum(axis=1), cells[:, :7].sum(axis=1)
        # each finger squeezes the box with the 30 N limit, all of it on its pad cells
        assert pads == pytest.approx([30.0, 30.0], abs=3.0)
        assert edges.max() < 0.05 * pads.min()
        # the box's 50 mm face covers the WSG pad's whole 19 x 20 mm face: Bullet's box-box contact
        # manifold is the four corners of the pad, i.e. the corner cells of the 3 x 5 grid (row 0 at
        # the fingertip: cells 7 and 9; row 4: cells 19 and 21), a quarter of the squeeze each
        for finger in (0, 1):
            loaded = sorted(int(i) for i in np.nonzero(cells[finger] > 0.5)[0])
            assert loaded == [7, 9, 19, 21], (finger, cells[finger].round(2))
            assert cells[finger, loaded] == pytest.approx(pads[finger] / 4, rel=0.15)
        assert gripper.state().gap_m == pytest.approx(0.05, abs=0.002)
        # lifting: the wrist force (at wsg50_mount_joint) grows by the box's weight, 0.2 kg x 9.81
        lift = top.copy()
        lift[2, 3] += 0.05
        _wait(sim, arm.send_goal("move_cartesian", MoveCartesianGoal(lift, speed_mps=0.05)))
        sim.advance(0.5)
        assert np.linalg.norm(arm.wrist_force()) - f0 == pytest.approx(0.2 * 9.81, abs=0.4)


def test_revolute_fingers_open_and_squeeze_through_their_lever(tmp_path):
    """Fingers hinged 85 mm above their pads: 0.085 m of pad travel per radian. The gap the
    simulator reads is that linear map; the pads' real distance (on their arc) is within 1.5 mm of
    it at 0.05 m, and a 25 N squeeze of a thin plate at the pad centres is a 25 N x 0.085 m joint
    torque."""
    (tmp_path / "six_joint_arm.urdf").write_text(six_joint_arm_urdf(revolute_fingers=True))
    (tmp_path / "arm.yaml").write_text(SIX_JOINT_ARM_YAML)
    d = load_description(str(tmp_path / "arm.yaml"))
    assert d.gripper.travel_per_unit == pytest.approx((0.085, 0.085))
    assert d.gripper.closed_positions == (0.0, 0.0) and d.gripper.mimic_multiplier == pytest.approx(1.0)
    # 0.5 rad of travel would be 2 x 0.0425 m: the default opening is that, linearised
    assert d.max_gap_m == pytest.approx(0.085)
    # the ready TCP, by forward kinematics of the URDF
    urdf = parse_urdf(d.urdf_path)
    tcp = urdf.link_pose("tcp", dict(zip(d.arm_joint_names, d.named_configurations["ready"])))
    assert tcp[:3, 2] == pytest.approx([0, 0, -1], abs=1e-4)            # fingers down
    scene = {"robots": [{"name": "arm", "model": str(tmp_path / "arm.yaml"), "initial_gap_m": 0.01}],
             "objects": [{"name": "plate", "primitive": {"shape": "box", "size": [0.04, 0.03, 0.006]}, "fixed": True,
                          "pose": {"position": tcp[:3, 3].tolist()}}],
             "gravity": [0, 0, 0]}
    with SimBackend(scene) as sim:
        gripper, robot = sim.grippers["arm"], sim.arms["arm"].robot
        assert robot.tcp_pose() == pytest.approx(tcp, abs=1e-4)
        # a fixed 6 mm plate at the pad centres, 30 mm across the finger travel (tcp y, world -y):
        # the pads touch it at their 85 mm lever (a taller object meets the tilted pad nearer the hinge)
        _wait(sim, gripper.send_goal("gripper_action", Pr2GripperCommand(position=0.05)))
        pads = [robot.link_pose(link) @ p.pose for link, p in zip(robot.finger_links, d.gripper.pads)]
        assert gripper.gap_m() == pytest.approx(0.05, abs=0.002)
        assert np.linalg.norm(pads[0][:3, 3] - pads[1][:3, 3]) == pytest.approx(0.05, abs=0.0015)
        _wait(sim, gripper.send_goal("gripper_action", Pr2GripperCommand(position=0.0, max_effort=25.0)))
        sim.advance(0.3)
        cells = sim.extensions["tactile"].grippers["arm"].cell_forces
        pads = cells[:, 7:].sum(axis=1)
        # the squeeze is the pads' mean (25 N x 0.085 m of joint torque through the lever); the plate is
        # fixed, so the geared fingers carry its offset from their middle onto one pad: 24.5 / 26.5 N
        assert pads.mean() == pytest.approx(25.0, rel=0.03)
        assert abs(pads[0] - pads[1]) < 2.5
        assert gripper.state().grip_force_n == pytest.approx(25.0, rel=0.02)   # the motors' torque / lever
        assert gripper.gap_m() == pytest.approx(0.03, abs=0.003)


def test_a_mimic_linkage_keeps_the_pads_parallel_and_opens_to_the_gap(tmp_path):
    """PyBullet ignores <mimic>: the simulator couples the fingertip hinges to the finger joints
    with gear constraints, so the pads stay parallel; their travel per radian is the knuckle's
    60 mm (the fingertip counter-rotates), found through the URDF's forward kinematics."""
    (tmp_path / "six_joint_arm.urdf").write_text(linkage_gripper_arm_urdf())
    yaml_text = (SIX_JOINT_ARM_YAML.replace("{link: left_finger, pose: {position: [0, 0, 0.085]}}",
                                            "{link: left_fingertip, pose: {position: [0, 0, 0.025]}}")
                 .replace("{link: right_finger, pose: {position: [0, 0, 0.085], rpy_deg: [0, 0, 180]}}",
                          "{link: right_fingertip, pose: {position: [0, 0, 0.025], rpy_deg: [0, 0, 180]}}"))
    (tmp_path / "arm.yaml").write_text(yaml_text)
    d = load_description(str(tmp_path / "arm.yaml"))
    assert d.gripper.travel_per_unit == pytest.approx((0.06, 0.06), rel=1e-4)
    assert d.max_gap_m == pytest.approx(2 * 0.06 * 0.6)
    scene = {"robots": [{"name": "arm", "model": str(tmp_path / "arm.yaml"), "initial_gap_m": 0.02}],
             "gravity": [0, 0, 0]}
    with SimBackend(scene) as sim:
        gripper, robot = sim.grippers["arm"], sim.arms["arm"].robot
        assert len(robot.mimics) == 2
        for gap in (0.05, 0.03):
            _wait(sim, gripper.send_goal("gripper_action", Pr2GripperCommand(position=gap)))
            sim.advance(0.2)
            pads = [robot.link_pose(link) @ p.pose for link, p in zip(robot.finger_links, d.gripper.pads)]
            # parallel pads facing each other (each pad's y points out of its back)
            assert pads[0][:3, 1] @ pads[1][:3, 1] == pytest.approx(-1.0, abs=1e-3)
            assert pads[0][:3, 1] @ robot.tcp_pose()[:3, 1] == pytest.approx(1.0, abs=1e-3)
            # the gap read through the linear map, and the pads' real distance on their arc
            # (60 mm sin(q) against 60 mm q: within 1.5 mm at 0.05 m)
            assert gripper.gap_m() == pytest.approx(gap, abs=0.002)
            assert (pads[0][:3, 3] - pads[1][:3, 3]) @ pads[0][:3, 1] == pytest.approx(gap, abs=0.0015)


def test_a_massless_finger_is_refused_at_load_naming_the_link_and_the_fix(tmp_path):
    """PyBullet does not move a link without mass: the fingers would stay put and every grasp read
    as blocked. The description's check says so, with the URDF's line, before anything runs."""
    from py_trees_manipulation.robots import RobotDescriptionError

    (tmp_path / "six_joint_arm.urdf").write_text(six_joint_arm_urdf().replace('<mass value="0.05"/>', '<mass value="0"/>'))
    (tmp_path / "arm.yaml").write_text(SIX_JOINT_ARM_YAML)
    with pytest.raises(RobotDescriptionError) as e:
        load_description(str(tmp_path / "arm.yaml"))
    msgs = [str(p) for p in e.value.problems]
    assert len(msgs) == 2 and all(":3:7: the URDF's link '" in m for m in msgs)
    assert "'left_finger' (line 18) and the links below it have no mass, but joint 'left_finger_joint' moves them" in msgs[0]
    assert "give 'left_finger' an <inertial> with <mass value> > 0" in msgs[0]


def test_the_xarm_squeezing_a_drawer_bar_from_a_moved_base_stalls_holding_it():
    """The xArm 6's pinned linkage on examples/open_drawer.yaml's bar, from the base the suggestions
    propose for base_sweep_mechanisms' xarm_base_moved_back ((-0.1977, 0.1042), facing -10 deg), the
    arm where the run's approach put it: the fingers stop at 16.2 mm squeezing 30 N while the
    driver's joint reads +23 mm/s of opening (the pins undo its motion each step). The command read
    that speed for its stall and ran until the run's 300 s timeout; the windowed progress test on
    the gap ends it stalled (pr2 semantics: ABORTED with ``stalled``, GripperCommand's SUCCESS
    holding the bar) 0.1 s after the fingers stop."""
    from py_trees_manipulation.msgs.actions import GoalStatus

    grasp_q = [0.062645, 0.471083, -2.179199, 0.687309, 0.176911, -2.250399]   # the approach's last waypoint
    scene = {"seed": 0,
             "robots": [{"name": "arm", "model": "ufactory_xarm6", "initial_configuration": grasp_q,
                         "base_pose": {"position": [-0.1977, 0.1042, 0], "rpy_deg": [0, 0, -10]}}],
             "cabinets": [{"name": "cabinet", "pose": {"position": [0.84, 0, 0], "rpy_deg": [0, 0, 180]},
                           "width_m": 0.6, "depth_m": 0.5, "height_m": 0.8, "drawer_travel_m": 0.35,
                           "damping": 5.0, "friction": 1.0}]}
    with SimBackend(scene) as sim:
        gripper = sim.grippers["arm"]
        assert gripper.gap_m() == pytest.approx(0.085, abs=0.002)
        t0 = sim.now()
        h = _wait(sim, gripper.send_goal("gripper_action", Pr2GripperCommand(position=0.0, max_effort=100.0)),
                  timeout_s=3.0)
        assert h.status == GoalStatus.ABORTED and h.result.stalled and not h.result.reached_goal, h.text
        # 85 -> 16 mm at 0.1 m/s, then the 0.1 s window (checked at the backend's 1/30 s advances)
        assert sim.now() - t0 < 1.0
        assert h.result.position == pytest.approx(0.0162, abs=0.0005)
        assert h.result.effort == pytest.approx(30.0, abs=1.0)           # the xArm's 30 N grip force limit
        assert h.text.startswith(f"stalled at gap {h.result.position * 1000:.1f} mm (goal 0.0 mm), squeezing with "
                                 f"{h.result.effort:.1f} N")
