"""The simulated ``gripper_action``'s end (``_GripperMove``): reached, stalled on what the fingers
squeeze (however the squeeze jitters or the joints' velocity reads), or aborted with a reason;
never running on. A scripted gripper stands in for the physics: the gap (m) and the gap speed the
joints read (m/s) as functions of sim time, one check every 10 ms of 1 ms steps."""

import math
from types import SimpleNamespace

import pytest

from py_trees_manipulation.msgs.actions import GoalHandle, GoalStatus
from py_trees_manipulation.msgs.motion import Pr2GripperCommand
from py_trees_manipulation.sim import gripper as G


class ScriptedGripper:
    """What ``_GripperMove`` reads of a :class:`~py_trees_manipulation.sim.gripper.SimGripper`."""

    position_tolerance_m = G.SimGripper.position_tolerance_m
    stall_speed_mps = G.SimGripper.stall_speed_mps
    stall_time_s = G.SimGripper.stall_time_s

    def __init__(self, gap, speed, force=lambda t: 0.0, linkage=False):
        self.t = 0.0
        self._gap, self._speed, self._force = gap, speed, force
        self.backend = SimpleNamespace(now=lambda: self.t)
        self.robot = SimpleNamespace(model=SimpleNamespace(gripper=SimpleNamespace(is_linkage=linkage)),
                                     linkage_pins=[])
        self.done = False

    def command_gap(self, gap_m, force):
        pass

    def gap_m(self):
        return self._gap(self.t)

    def state(self):
        return G.FingerState(gap_m=self._gap(self.t), gap_velocity_mps=self._speed(self.t), joint_effort_n=0.0,
                             grip_force_n=self._force(self.t), finger_m=())

    def approach_speed(self):
        return False

    def shed_stale_contacts(self):
        return 0

    def refresh_force_limit(self):
        pass

    def _execution_done(self, execution):
        self.done = True


def run(g, target, limit_s=20.0, dt=0.001):
    h = GoalHandle("gripper_action", Pr2GripperCommand(position=target, max_effort=100.0))
    h.set_active()
    move = G._GripperMove(g, h, target, 100.0)
    while not h.done and g.t < limit_s:
        g.t = round(g.t + dt, 9)
        move.step()
    return h, g.t


def test_a_linkage_squeezing_a_bar_while_its_driver_reads_an_opening_speed_stalls():
    """The xArm 6 on examples/open_drawer.yaml from the base (-0.1977, 0.1042) facing -10 deg: the
    pinned linkage stood at 16.18 mm on the drawer's bar, squeezing 29.7 N, while its driver read
    +23 mm/s every step; the test on that speed never fired and the command ran until the run's
    300 s timeout. The progress test reads the gap's positions: stalled 0.1 s after contact."""
    contact = (0.085 - 0.01618) / 0.1      # 0.688 s
    g = ScriptedGripper(gap=lambda t: max(0.01618, 0.085 - 0.1 * t) + (1e-5 * math.sin(700 * t) if t > contact else 0.0),
                        speed=lambda t: -0.1 if t < contact else 0.023,
                        force=lambda t: 29.7 if t > contact else 0.0, linkage=True)
    h, t = run(g, 0.0)
    assert h.status == GoalStatus.ABORTED and h.result.stalled and not h.result.reached_goal, h.text
    assert contact + 0.09 <= t <= contact + 0.12
    assert h.result.position == pytest.approx(0.01618, abs=2e-5) and h.result.effort == pytest.approx(29.7)
    assert h.text.startswith("stalled at gap 16.2 mm (goal 0.0 mm), squeezing with 29.7 N")
    assert g.done


@pytest.mark.parametrize("amplitude_m, hz", [(0.0003, 50.0), (0.0015, 25.0), (0.004, 7.0)])
def test_a_squeeze_that_jitters_stalls_however_far_it_swings(amplitude_m, hz):
    """A gap oscillating about where it met the object (0.3-4 mm, 7-50 Hz: far more than the 0.05 mm
    per 10 ms check the test asks of progress) with the velocity reading its derivative (up to
    0.7 m/s) makes no new progress toward the goal: stalled 0.1 s after contact."""
    contact = (0.085 - 0.02) / 0.1
    w = 2 * math.pi * hz

    def gap(t):
        return max(0.02, 0.085 - 0.1 * t) + (amplitude_m * (1 - math.cos(w * (t - contact))) if t > contact else 0.0)

    def speed(t):
        return -0.1 if t < contact else amplitude_m * w * math.sin(w * (t - contact))

    h, t = run(ScriptedGripper(gap, speed), 0.0)
    assert h.status == GoalStatus.ABORTED and h.result.stalled, h.text
    assert t <= contact + 0.12
    assert 0.02 <= h.result.position <= 0.02 + 2 * amplitude_m + 1e-9


@pytest.mark.parametrize("target, linkage", [(0.0, False), (0.0, True), (0.085, False)])
def test_fingers_moving_at_the_contact_approach_speed_are_not_stalled(target, linkage):
    """The slowest a closing command moves (CONTACT_MIN_SPEED_MPS per finger: 10 mm/s on the gap),
    closing or opening, on either kind of fingers: the gap is reached, never a stall."""
    sign = 1.0 if target > 0.04 else -1.0
    g = ScriptedGripper(gap=lambda t: 0.04 + sign * 2 * G.CONTACT_MIN_SPEED_MPS * t,
                        speed=lambda t: sign * 2 * G.CONTACT_MIN_SPEED_MPS, linkage=linkage)
    h, t = run(g, target)
    assert h.status == GoalStatus.SUCCEEDED and h.result.reached_goal and not h.result.stalled, h.text


def test_fingers_pushed_back_open_are_stalled():
    """A squeeze that an object pushes back open (away from the goal) makes no progress: stalled."""
    g = ScriptedGripper(gap=lambda t: max(0.03, 0.085 - 0.1 * t) + max(0.0, t - 0.55) * 0.02,
                        speed=lambda t: -0.1 if t < 0.55 else 0.02)
    h, t = run(g, 0.0)
    assert h.status == GoalStatus.ABORTED and h.result.stalled and t <= 0.55 + 0.12, h.text


def test_a_move_that_neither_reaches_nor_stalls_is_aborted_with_the_gap_and_squeeze():
    """The backstop: a gap that keeps creeping toward the goal faster than the stall speed but never
    gets there (a scripted 0.1 m closing at 6 mm/s) is aborted, not stalled, after MOVE_TIMEOUT_S."""
    g = ScriptedGripper(gap=lambda t: 0.1 - 0.006 * t, speed=lambda t: -0.006, force=lambda t: 3.0)
    h, t = run(g, 0.0)
    assert h.status == GoalStatus.ABORTED and not h.result.stalled and t == pytest.approx(G.MOVE_TIMEOUT_S)
    assert h.text == (f"the fingers neither reached the gap 0.0 mm nor stalled within {G.MOVE_TIMEOUT_S:g} s: "
                      f"at {(0.1 - 0.006 * G.MOVE_TIMEOUT_S) * 1000:.1f} mm, squeezing with 3.0 N")
