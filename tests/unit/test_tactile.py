"""Tactile processing: cell layout, filter designs against their cut-offs, observers, detectors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import signal

from py_trees_manipulation.control import tactile as tc
from py_trees_manipulation.msgs.gripper_sensor import PR2GripperEventDetectorCommand as EDC

FS_FRAMES = 1.0 / tc.PRESSURE_FRAME_PERIOD  # 24.39 Hz


def gain_at(b, a, f_hz, fs):
    _, h = signal.freqz(b, a, worN=[f_hz], fs=fs)
    return float(abs(h[0]))


def minus_3db_band(b, a, fs, n=40000):
    w, h = signal.freqz(b, a, worN=n, fs=fs)
    g = np.abs(h)
    above = np.where(g >= g.max() / math.sqrt(2))[0]
    return w[above[0]], w[above[-1]], g.max()


# ---- layout ------------------------------------------------------------------------------------

def test_layout_has_7_edge_and_15_pad_cells():
    assert tc.NUM_CELLS == 22
    assert len(range(22)[tc.EDGE_CELLS]) == 7 and len(range(22)[tc.PAD_CELLS]) == 15
    assert tc.pad_index(0, 0) == 7 and tc.pad_index(0, 2) == 9 and tc.pad_index(1, 0) == 10
    assert tc.pad_index(4, 2) == 21
    with pytest.raises(ValueError, match="row, col"):
        tc.pad_index(5, 0)


def test_newtons_from_counts_uses_per_cell_calibration():
    counts = np.zeros(22)
    counts[tc.SIDE_A] = 400.0       # 1 N on a side face
    counts[tc.BACK] = 1200.0        # 2 N on the back
    counts[tc.pad_index(2, 1)] = 4800.0  # 3 N on a pad cell
    n = tc.newtons_from_counts(counts)
    assert n[tc.SIDE_A] == pytest.approx(1.0) and n[tc.BACK] == pytest.approx(2.0)
    assert n[tc.pad_index(2, 1)] == pytest.approx(3.0)
    with pytest.raises(ValueError, match="22"):
        tc.newtons_from_counts(np.zeros(21))


def test_uniform_pad_frame_puts_the_force_on_the_pad_only():
    frame = tc.uniform_pad_frame(3.0, baseline_n=0.1, edge_forces_n=[1, 0, 0, 0, 0, 0, 0])
    assert frame[tc.PAD_CELLS].sum() == pytest.approx(3.0 + 15 * 0.1)
    assert frame[tc.BACK] == pytest.approx(1.1)


# ---- filter designs ----------------------------------------------------------------------------

def test_pressure_highpass_is_minus_3db_at_5hz():
    b, a = tc.design_pressure_highpass()
    assert gain_at(b, a, 5.0, FS_FRAMES) == pytest.approx(1 / math.sqrt(2), rel=1e-6)
    assert gain_at(b, a, FS_FRAMES / 2 - 1e-9, FS_FRAMES) == pytest.approx(1.0, abs=1e-6)
    assert gain_at(b, a, 1e-6, FS_FRAMES) < 1e-5


def test_backward_euler_highpass_reproduces_the_robot():
    b, a = tc.design_pressure_highpass(method="backward_euler")
    g = 1 / (1 + 2 * math.pi * 5 * 0.041)
    assert g == pytest.approx(0.4370, abs=1e-4)
    np.testing.assert_allclose(b, [g, -g]) and np.testing.assert_allclose(a, [1, -g])
    # maximum gain at Nyquist 2g/(1+g) = 0.61 (reference B15), 0.54 at 5 Hz, 0.19 at 1 Hz
    assert gain_at(b, a, FS_FRAMES / 2 - 1e-9, FS_FRAMES) == pytest.approx(2 * g / (1 + g), rel=1e-6)
    assert gain_at(b, a, 5.0, FS_FRAMES) == pytest.approx(0.54, abs=0.01)
    assert gain_at(b, a, 1.0, FS_FRAMES) == pytest.approx(0.19, abs=0.01)
    with pytest.raises(ValueError, match="method"):
        tc.design_pressure_highpass(method="bessel")


def test_pressure_bandpass_matches_the_robot_coefficients_and_band():
    b, a = tc.design_pressure_bandpass()
    np.testing.assert_allclose(b, [0.6323, 0, -0.6323], atol=1e-4)
    np.testing.assert_allclose(a, [1, -0.6294, -0.2647], atol=1e-4)
    ripple = 10 ** (-0.5 / 20)  # Chebyshev-I band edges are the -0.5 dB points
    assert gain_at(b, a, 0.8, FS_FRAMES) == pytest.approx(ripple, rel=1e-6)
    assert gain_at(b, a, 5.0, FS_FRAMES) == pytest.approx(ripple, rel=1e-6)
    lo, hi, peak = minus_3db_band(b, a, FS_FRAMES)
    assert lo == pytest.approx(0.32, abs=0.01) and hi == pytest.approx(8.4, abs=0.05)
    assert peak == pytest.approx(1.0, abs=1e-6)


def test_accelerometer_bandpass_at_3khz_matches_the_robot():
    b, a = tc.design_accelerometer_bandpass(3000.0)
    np.testing.assert_allclose(b, [0.8305, 0, -0.8305], atol=1e-4)
    np.testing.assert_allclose(a, [1, -0.3329, -0.6610], atol=1e-4)
    ripple = 10 ** (-0.5 / 20)
    assert gain_at(b, a, 5.0, 3000.0) == pytest.approx(ripple, rel=1e-6)
    assert gain_at(b, a, 1000.0, 3000.0) == pytest.approx(ripple, rel=1e-6)
    lo, hi, _ = minus_3db_band(b, a, 3000.0, n=200000)
    assert lo == pytest.approx(1.75, abs=0.05) and hi == pytest.approx(1310, abs=10)


def test_accelerometer_bandpass_at_1khz_ends_below_nyquist():
    b, a = tc.design_accelerometer_bandpass(1000.0)
    ripple = 10 ** (-0.5 / 20)
    assert gain_at(b, a, 5.0, 1000.0) == pytest.approx(ripple, rel=1e-6)
    assert gain_at(b, a, 450.0, 1000.0) == pytest.approx(ripple, rel=1e-6)
    with pytest.raises(ValueError, match="band"):
        tc.design_accelerometer_bandpass(1000.0, 5.0, 600.0)


def test_velocity_lowpass_is_minus_3db_at_5hz():
    b, a = tc.design_velocity_lowpass()
    np.testing.assert_allclose(b, [0.0155, 0.0155], atol=1e-4)
    np.testing.assert_allclose(a, [1, -0.9691], atol=1e-4)
    assert gain_at(b, a, 5.0, 1000.0) == pytest.approx(1 / math.sqrt(2), rel=1e-6)


@pytest.mark.parametrize("btype", ["lowpass", "highpass"])
@pytest.mark.parametrize("cutoff, fs", [(5.0, FS_FRAMES), (5.0, 1000.0), (0.3, 24.39), (11.0, FS_FRAMES), (400.0, 1000.0)])
def test_closed_form_butterworth_equals_scipy(btype, cutoff, fs):
    b, a = tc.butter_first_order(cutoff, fs, btype)
    bs, as_ = signal.butter(1, cutoff, btype=btype, fs=fs)
    np.testing.assert_allclose(b, bs, atol=1e-13)
    np.testing.assert_allclose(a, as_, atol=1e-13)


@pytest.mark.parametrize("ripple, band, fs", [(0.5, (0.8, 5.0), FS_FRAMES), (0.5, (5.0, 1000.0), 3000.0),
                                              (0.5, (5.0, 450.0), 1000.0), (1.0, (1.0, 3.0), 20.0),
                                              (3.0, (0.1, 11.5), FS_FRAMES), (0.1, (2.0, 2.5), 100.0)])
def test_closed_form_chebyshev_bandpass_equals_scipy(ripple, band, fs):
    b, a = tc.cheby1_first_order_bandpass(ripple, band[0], band[1], fs)
    bs, as_ = signal.cheby1(1, ripple, list(band), btype="bandpass", fs=fs)
    np.testing.assert_allclose(b, bs, atol=1e-13)
    np.testing.assert_allclose(a, as_, atol=1e-13)


def test_design_arguments_are_checked():
    with pytest.raises(ValueError, match="cut-off"):
        tc.butter_first_order(13.0, FS_FRAMES)          # above Nyquist (12.2 Hz)
    with pytest.raises(ValueError, match="btype"):
        tc.butter_first_order(5.0, FS_FRAMES, "bandstop")
    with pytest.raises(ValueError, match="band"):
        tc.cheby1_first_order_bandpass(0.5, 5.0, 0.8, FS_FRAMES)
    with pytest.raises(ValueError, match="ripple"):
        tc.cheby1_first_order_bandpass(0.0, 0.8, 5.0, FS_FRAMES)


@pytest.mark.parametrize("design", [tc.design_pressure_highpass, tc.design_pressure_bandpass,
                                    tc.design_velocity_lowpass, lambda: tc.design_accelerometer_bandpass(3000.0),
                                    lambda: tc.design_pressure_highpass(method="backward_euler")])
def test_steady_state_equals_scipy_lfilter_zi(design):
    b, a = design()
    np.testing.assert_allclose(tc.steady_state_unit(b, a), signal.lfilter_zi(b, a), atol=1e-12)


def test_building_a_scene_and_running_the_controller_does_not_import_scipy():
    """The tactile extension is built for every scene and designs its filters at construction: in
    closed form, so neither a scene nor a tactile action imports scipy (about 2 s of CPU)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from py_trees_manipulation.sim import SimBackend\n"
        "from py_trees_manipulation.msgs import gripper_sensor as gs\n"
        "with SimBackend({'robots': [{'name': 'panda'}]}) as sim:\n"
        "    h = sim.grippers['panda'].send_goal('find_contact', gs.PR2GripperFindContactCommand())\n"
        "    sim.advance(0.3)\n"
        "    assert sim.extensions['tactile'].grippers['panda'].installed\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


def test_streaming_filter_sample_by_sample_equals_batch():
    b, a = tc.design_pressure_bandpass()
    rng = np.random.default_rng(0)
    x = rng.normal(size=(200, 3))
    f = tc.StreamingFilter(b, a, channels=3)
    y_stream = np.array([f.step(row) for row in x])
    np.testing.assert_allclose(y_stream, signal.lfilter(b, a, x, axis=0), atol=1e-12)
    f2 = tc.StreamingFilter(b, a, channels=3)
    y_blocks = np.vstack([f2.filter_block(x[:77]), f2.filter_block(x[77:])])
    np.testing.assert_allclose(y_blocks, y_stream, atol=1e-12)


@pytest.mark.parametrize("channels", [1, 4, 44])  # Python fast path (<= 4) and vector path
def test_streaming_filter_paths_agree_with_lfilter_across_step_and_block(channels):
    b, a = tc.design_accelerometer_bandpass(3000.0)
    x = np.random.default_rng(1).normal(size=(60, channels))
    f = tc.StreamingFilter(b, a, channels=channels)
    head = np.array([f.step(row) for row in x[:30]])
    tail = f.filter_block(x[30:])
    np.testing.assert_allclose(np.vstack([head, tail]), signal.lfilter(b, a, x, axis=0), atol=1e-12)
    if channels == 1:
        g = tc.StreamingFilter(b, a)
        ys = [g.step_scalar(float(v)) for v in x[:, 0]]
        np.testing.assert_allclose(ys, signal.lfilter(b, a, x[:, 0]), atol=1e-12)


def test_streaming_filter_reset_to_steady_state():
    lp = tc.StreamingFilter(*tc.design_velocity_lowpass())
    lp.reset(0.3)
    assert lp.step(0.3)[0] == pytest.approx(0.3)
    hp = tc.StreamingFilter(*tc.design_pressure_highpass(), channels=2)
    hp.reset([2.0, -1.0])
    np.testing.assert_allclose(hp.step([2.0, -1.0]), [0.0, 0.0], atol=1e-12)


# ---- pressure observer ---------------------------------------------------------------------------

def observer_with_zero(method="butter", baseline=0.05):
    obs = tc.PressureObserver(hp_method=method)
    zero = tc.uniform_pad_frame(0.0, baseline)
    obs.step(0.001, zero, zero)
    return obs, baseline


def test_first_frame_is_the_zero_and_pad_force_ignores_edges():
    obs, base = observer_with_zero()
    frame = tc.uniform_pad_frame(3.0, base, edge_forces_n=[5, 5, 5, 5, 5, 5, 5])
    assert obs.step(0.001, frame, tc.uniform_pad_frame(1.0, base))
    np.testing.assert_allclose(obs.pad_force, [3.0, 1.0])
    assert obs.forces[0, tc.BACK] == pytest.approx(5.0)


@pytest.mark.parametrize("method, first", [("butter", None), ("backward_euler", 0.43705)])
def test_highpass_step_response_of_the_pad_force(method, first):
    obs, base = observer_with_zero(method)
    b, a = tc.design_pressure_highpass(method=method)
    frame = tc.uniform_pad_frame(2.0, base)
    expected = signal.lfilter(b, a, np.full(4, 2.0))
    got = []
    for _ in range(4):
        obs.step(0.001, frame, frame)
        got.append(obs.pad_force_hp[0])
    np.testing.assert_allclose(got, expected, rtol=1e-9)
    if first is not None:
        assert got[0] == pytest.approx(first * 2.0, rel=1e-4)
        assert got[1] / got[0] == pytest.approx(first, rel=1e-4)  # decays x0.437 per frame


def test_outputs_are_held_between_frames():
    obs, base = observer_with_zero()
    obs.step(0.001, tc.uniform_pad_frame(2.0, base), tc.uniform_pad_frame(2.0, base))
    hp = obs.pad_force_hp.copy()
    for _ in range(40):
        assert not obs.step(0.001, None, None)
    np.testing.assert_array_equal(obs.pad_force_hp, hp)
    assert obs.frames == 2


def test_zeroing_averages_the_window_and_reseats_the_filters():
    obs, _ = observer_with_zero(baseline=0.0)
    obs.start_zeroing(0.25)
    offsets = [0.10, 0.20, 0.30]  # baseline drift seen in three frames during the window
    t = 0.0
    for k in range(250):
        frame = None
        if k % 41 == 0 and k // 41 < 3:
            frame = tc.uniform_pad_frame(0.0, offsets[k // 41])
        obs.step(0.001, frame, frame)
        t += 0.001
    assert not obs.zeroing
    np.testing.assert_allclose(obs.offset[:, tc.PAD_CELLS], 0.20, atol=1e-12)
    np.testing.assert_allclose(obs.pad_force_hp, 0.0, atol=1e-12)
    obs.step(0.001, tc.uniform_pad_frame(0.0, 0.30), tc.uniform_pad_frame(0.0, 0.30))
    np.testing.assert_allclose(obs.pad_force, 15 * 0.10, atol=1e-9)
    np.testing.assert_allclose(obs.pad_force_hp, 0.0, atol=1e-9)  # no event from the new offset


def test_broken_sensor_is_checked_on_each_finger():
    obs = tc.PressureObserver()
    good = tc.uniform_pad_frame(0.0, 0.05)
    obs.step(0.001, good, np.zeros(22))
    assert obs.broken.tolist() == [False, True]
    obs.step(0.001, np.zeros(22), good)
    assert obs.broken.tolist() == [True, False]


# ---- detectors ---------------------------------------------------------------------------------

def test_contact_detection_thresholds():
    flags = tc.detect_contact(np.array([0.96, 0.94]), np.array([0.0, 0.0]), 0.1, 0.95)
    assert flags.tolist() == [True, False]
    flags = tc.detect_contact(np.array([0.0, 0.0]), np.array([-0.11, 0.09]), 0.1, 0.95)
    assert flags.tolist() == [True, False]


def test_slip_threshold_is_clamped_force_proportional():
    d = tc.slip_thresholds(np.array([1.0, 20.0, 50.0]), 0.007)
    np.testing.assert_allclose(d, [0.048, 0.14, 0.2])


def test_slip_needs_high_pass_above_threshold_and_small_band_pass():
    f = np.array([10.0, 10.0])
    assert tc.detect_slip(f, np.array([0.08, 0.05]), np.array([0.1, 0.1])).tolist() == [True, False]
    assert tc.detect_slip(f, np.array([0.08, 0.08]), np.array([0.2, 0.1])).tolist() == [False, True]


def test_acceleration_observer_ignores_gravity_and_passes_the_band():
    acc = tc.AccelerationObserver(1000.0)
    for _ in range(200):
        acc.step([0.0, 0.0, -9.81])
    assert acc.peak_norm < 1e-9
    t = np.arange(2000) * 1e-3
    x = 3.0 * np.sin(2 * np.pi * 100.0 * t)
    out = []
    for xi in x:
        acc.step([xi, 0.0, -9.81])
        out.append(acc.filtered[0])
    amplitude = math.sqrt(2) * np.sqrt(np.mean(np.square(out[1000:])))  # RMS over 100 whole periods
    expected = 3.0 * gain_at(*tc.design_accelerometer_bandpass(1000.0), 100.0, 1000.0)
    assert expected == pytest.approx(3.0, rel=0.01)
    assert amplitude == pytest.approx(expected, rel=0.01)


def test_acceleration_observer_tests_every_sample_of_a_cycle():
    acc = tc.AccelerationObserver(3000.0)
    acc.step(np.zeros((3, 3)))
    block = np.zeros((3, 3))
    block[0, 0] = 10.0  # a spike in the first of three samples (the robot looks at the last, B10)
    acc.step(block)
    b, _ = tc.design_accelerometer_bandpass(3000.0)
    assert acc.peak_norm == pytest.approx(10.0 * b[0])
    assert abs(acc.filtered[0]) < acc.peak_norm


# ---- event detector on synthetic traces --------------------------------------------------------------

class Trace:
    """Feeds an EventDetector 1 kHz cycles; frames every 41 ms at a steady 5 N grip."""

    def __init__(self, command):
        self.pressure = tc.PressureObserver()
        self.acc = tc.AccelerationObserver(1000.0)
        self.det = tc.EventDetector()
        self.k = 0
        self.run(2.5)  # settle the 0.8-5 Hz band-pass (pole 0.93 per frame) after the 5 N step
        self.det.configure(command)

    def run(self, seconds, *, command=None, acc_spike=None, vibration=0.0, side=0.0):
        fired_at = None
        for i in range(int(round(seconds * 1000))):
            frame_l = frame_r = None
            if self.k % 41 == 0:
                n = self.k // 41
                f = 0.0 if n == 0 else 5.0 + (vibration if n % 2 else -vibration)
                edges = [0, side, 0, 0, 0, 0, 0] if n else None
                frame_l = tc.uniform_pad_frame(f, 0.05, edges)
                frame_r = tc.uniform_pad_frame(f, 0.05)
            a = [0.0, 0.0, -9.81]
            if acc_spike is not None and i == 0:
                a = [acc_spike, 0.0, -9.81]
            self.pressure.step(0.001, frame_l, frame_r)
            self.acc.step(a)
            if self.det.step(self.acc, self.pressure) and fired_at is None:
                fired_at = i
            self.k += 1
        return fired_at


EVENTS = {
    "acc": dict(acc_spike=8.0),
    "slip": dict(vibration=0.1),
    "side": dict(side=1.0),
}
EXPECTED = {  # trigger condition -> events that alone fire it
    EDC.FINGER_SIDE_IMPACT_OR_ACC: {"acc", "side"},
    EDC.SLIP_AND_ACC: set(),
    EDC.FINGER_SIDE_IMPACT_OR_SLIP_OR_ACC: {"acc", "slip", "side"},
    EDC.SLIP: {"slip"},
    EDC.ACC: {"acc"},
}


@pytest.mark.parametrize("condition", sorted(EXPECTED))
@pytest.mark.parametrize("event", sorted(EVENTS))
def test_each_trigger_condition_fires_on_its_event_only(condition, event):
    trace = Trace(EDC(condition, acceleration_trigger_magnitude=4.0, slip_trigger_magnitude=0.01))
    fired = trace.run(0.3, **EVENTS[event])
    assert (fired is not None) == (event in EXPECTED[condition])
    flags = {"acc": trace.det.acceleration_event, "slip": trace.det.slip_event, "side": trace.det.side_impact_event}
    assert flags[event] is True and sum(flags.values()) == 1


@pytest.mark.parametrize("condition", sorted(EXPECTED))
def test_quiet_trace_never_fires(condition):
    trace = Trace(EDC(condition, acceleration_trigger_magnitude=4.0, slip_trigger_magnitude=0.01))
    assert trace.run(1.0) is None
    assert not (trace.det.acceleration_event or trace.det.slip_event or trace.det.side_impact_event)


def test_slip_and_acc_fires_on_latched_non_simultaneous_events():
    trace = Trace(EDC(EDC.SLIP_AND_ACC, 4.0, 0.01))
    assert trace.run(0.2, acc_spike=8.0) is None
    assert trace.run(0.3) is None
    assert trace.run(0.3, vibration=0.1) is not None
    data = trace.det.data(stamp=1.0)
    assert data.trigger_conditions_met and data.slip_event and data.acceleration_event


def test_detector_is_inactive_until_commanded_and_a_command_clears_latches():
    trace = Trace(EDC(EDC.ACC, 4.0, 0.0))
    det = trace.det
    det.command = None                     # unarmed: the robot evaluates uninitialised params (B11)
    assert trace.run(0.1, acc_spike=50.0) is None and not det.acceleration_event
    det.configure(EDC(EDC.ACC, 4.0, 0.0))
    assert trace.run(0.1, acc_spike=50.0) is not None
    det.configure(EDC(EDC.ACC, 4.0, 0.0))
    assert not det.trigger_conditions_met and not det.acceleration_event


def test_zero_acceleration_trigger_fires_on_any_vibration():
    trace = Trace(EDC(EDC.ACC, 0.0, 0.0))
    assert trace.run(0.01, acc_spike=0.01) == 0


# ---- the simulated pads: where a contact loads, and how hard ---------------------------------------------
def _panda_cells():
    from py_trees_manipulation.robots import resolve_model
    from py_trees_manipulation.sim.tactile_pads import PadCells

    return PadCells(resolve_model("franka_panda").gripper.pad)


def test_a_point_on_the_gripping_face_loads_the_pad_cell_where_it_is():
    cells = _panda_cells()                      # 17.4 mm x 18 mm, 3 x 5 cells, row 0 at the tip
    assert cells.face(-0.0087, -0.0021, 0.009) == tc.PAD_CELLS.start + 0          # tip-end corner: row 0, column 0
    assert cells.face(0.0087, -0.0021, -0.009) == tc.PAD_CELLS.start + 14         # palm-end corner: row 4, column 2
    assert cells.face(0.0, -0.0011, 0.0) == tc.PAD_CELLS.start + 7                # the mesh's margin surface, centre
    assert cells.face(0.0, 0.0006, 0.0) is None        # behind the inner surface: a side, the back (by its normal)
    assert cells.face(0.0094, -0.0021, 0.0) is None    # beyond the pad's width (0.5 mm tolerance)
    assert cells.face(0.0, -0.0021, 0.0096) is None    # beyond its tip end: the tip face


def test_the_pad_reads_the_points_push_together_not_each_points_normal_force():
    from py_trees_manipulation.sim.tactile_gripper import _face_pressure

    cells = [0.0] * tc.NUM_CELLS
    # one point pushes 12 N along the pad's normal, another pulls 3 N (its normal kept from an earlier
    # pose, the solver's friction on it pulling): the pad reads 9 N, where the pushing point is
    assert _face_pressure(cells, 9.0, [(7, 12.0), (9, -3.0)]) == pytest.approx(9.0)
    assert cells[7] == pytest.approx(9.0) and cells[9] == 0.0
    cells = [0.0] * tc.NUM_CELLS
    assert _face_pressure(cells, 10.0, [(7, 4.0), (21, 16.0)]) == pytest.approx(10.0)
    assert (cells[7], cells[21]) == (pytest.approx(2.0), pytest.approx(8.0))    # in proportion to each push
    cells = [0.0] * tc.NUM_CELLS
    assert _face_pressure(cells, -1.0, [(7, 2.0), (8, -3.0)]) == 0.0             # a body pulling: nothing
    assert sum(cells) == 0.0
