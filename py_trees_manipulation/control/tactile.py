"""PR2 fingertip and palm-accelerometer signal processing: layout, zeroing, filters, detectors.

Follows ``pr2_gripper_sensor_controller`` (``pressure_observer.cpp``, ``acceleration_observer.cpp``,
``gripper_controller.h``) as described in ``shared/reference/pr2_gripper_controller.md`` (§6, §7).

Layout of the 22 cells of one fingertip (the same on both fingers)::

    index  location                         counts per N on the PR2
    0      back of the finger               600
    1, 6   the two side faces               400
    2, 5   corners (side <-> tip)           600
    3, 4   front/tip face                   600
    7..21  gripping pad, 3 x 5 grid          1600    index = 7 + 3*row + col
           (col 0..2 across the width, row 0..4 along the finger, row 0 nearest the tip)

Cells 0-6 are the *edge* (used only for side-impact detection); cells 7-21 are the *pad* (all
force, contact and slip logic). Frames arrive at about 24.4 Hz (one every 41 ms).

Signals, per finger (index 0 = left, 1 = right):

- ``F``   zeroed static pad force (the SA-I channel), N: sum of the 15 zeroed pad cells.
- ``F~``  (``pad_force_hp``) the same sum after a first-order 5 Hz high-pass (FA-I channel).
- ``Fbp`` (``pad_force_bp``) the same sum after a first-order Chebyshev-I 0.8-5 Hz band-pass.
- ``a_bp`` palm acceleration after a first-order Chebyshev-I 5 Hz-1 kHz band-pass (FA-II).

Units: our frames are **newtons per cell** (the simulator produces them directly; for raw counts
use :func:`newtons_from_counts`). Frames include the sensor's own offset: zeroing removes it.

Filters are first-order designs in closed form (bilinear transform with pre-warping: the same
coefficients as ``scipy.signal.butter`` / ``cheby1`` to rounding, checked in
``tests/unit/test_tactile.py``; scipy itself is not imported, so building a scene does not pay for
it) and run as streaming direct-form II transposed recursions with carried state
(:class:`StreamingFilter`, the recursion of ``scipy.signal.lfilter``). Differences from the robot
(each fixes a listed defect):

- The pressure high-pass defaults to ``butter(1, 5 Hz, 'highpass', fs=24.39 Hz)`` (bilinear with
  pre-warping: exactly -3 dB at 5 Hz, unit gain at Nyquist). The robot's backward-Euler
  discretisation (gain 0.437 per step, maximum gain 0.61, B15) is available as
  ``hp_method="backward_euler"``.
- Zeroing averages the frames received during the 0.25 s window; the robot's 0.4/0.6 recursion
  per millisecond is in effect a snapshot of the last frame (B14). After zeroing, the filter
  states are re-initialised to steady state so the offset change is not seen as an event.
- The broken-sensor flag is computed for *each* finger (the robot tests the left one twice, B3).
- The acceleration event tests every sample of a cycle, not only the last (B10).
- The event detector is not armed until its first command (the robot evaluates it with
  uninitialised parameters, B11).
"""

from __future__ import annotations

import math
from typing import Any, Optional, Sequence

import numpy as np
from numpy.typing import NDArray

from ..msgs.gripper_sensor import PR2GripperEventDetectorCommand, PR2GripperEventDetectorData

# ------------------------------------------------------------------------------------------------
# layout
# ------------------------------------------------------------------------------------------------

NUM_CELLS = 22
BACK = 0
SIDE_A = 1
CORNER_A = 2
TIP_A = 3
TIP_B = 4
CORNER_B = 5
SIDE_B = 6
EDGE_CELLS = slice(0, 7)
"""Cells 0-6: back, sides, corners and tip (side-impact detection only)."""
PAD_CELLS = slice(7, 22)
"""Cells 7-21: the 3 x 5 gripping pad."""
NUM_EDGE_CELLS = 7
NUM_PAD_CELLS = 15
PAD_ROWS = 5
PAD_COLS = 3
LEFT = 0
RIGHT = 1

COUNTS_PER_NEWTON: NDArray[np.float64] = np.array(
    [600.0, 400.0, 600.0, 600.0, 600.0, 600.0, 400.0] + [1600.0] * NUM_PAD_CELLS)
"""shape (22,): PR2 fingertip calibration, raw counts per newton, per cell (fingertip_pressure)."""

PRESSURE_FRAME_PERIOD = 0.041
"""s; the PR2 pressure frame period (24.4 Hz) the filters are designed for."""

CONTROL_PERIOD = 0.001
"""s; the realtime loop period (1 kHz)."""


def pad_index(row: int, col: int) -> int:
    """Cell index of pad cell ``(row, col)``; row 0..4 along the finger (0 at the tip), col 0..2.

    Raises:
        ValueError: row or col out of range.
    """
    if not (0 <= row < PAD_ROWS and 0 <= col < PAD_COLS):
        raise ValueError(f"pad cell (row, col) must be within (0..{PAD_ROWS - 1}, 0..{PAD_COLS - 1}), "
                         f"got ({row}, {col})")
    return 7 + PAD_COLS * row + col


def newtons_from_counts(counts: Sequence[float]) -> NDArray[np.float64]:
    """Raw PR2 counts, shape (22,) or (2, 22), to newtons per cell with the per-cell calibration."""
    arr = np.asarray(counts, dtype=np.float64)
    if arr.shape[-1] != NUM_CELLS:
        raise ValueError(f"pressure frames must have {NUM_CELLS} cells in the last axis, got shape {arr.shape}")
    return arr / COUNTS_PER_NEWTON


def uniform_pad_frame(pad_force_n: float, baseline_n: float = 0.0,
                      edge_forces_n: Optional[Sequence[float]] = None) -> NDArray[np.float64]:
    """A (22,) frame in newtons: ``pad_force_n`` spread evenly over the 15 pad cells.

    Args:
        pad_force_n: total normal force on the pad, N.
        baseline_n: sensor offset added to every cell, N (removed by zeroing).
        edge_forces_n: optional (7,) forces on the edge cells 0-6, N.
    """
    frame = np.full(NUM_CELLS, float(baseline_n))
    frame[PAD_CELLS] += float(pad_force_n) / NUM_PAD_CELLS
    if edge_forces_n is not None:
        frame[EDGE_CELLS] += np.asarray(edge_forces_n, dtype=np.float64)
    return frame


def check_frame(name: str, frame: Sequence[float]) -> NDArray[np.float64]:
    """``frame`` as a float64 (22,) array. Raises ValueError naming ``name`` on a wrong shape."""
    arr = np.asarray(frame, dtype=np.float64)
    if arr.shape != (NUM_CELLS,):
        raise ValueError(f"{name} must have shape ({NUM_CELLS},), got {arr.shape}")
    return arr


# ------------------------------------------------------------------------------------------------
# filter design and streaming application
# ------------------------------------------------------------------------------------------------

FilterCoefficients = tuple[NDArray[np.float64], NDArray[np.float64]]


def _prewarped(f_hz: float, fs: float) -> float:
    """Analog angular frequency that the bilinear transform at ``fs`` maps onto ``f_hz``, rad/s."""
    return 2.0 * fs * math.tan(math.pi * f_hz / fs)


def butter_first_order(cutoff_hz: float, sample_rate_hz: float, btype: str = "lowpass") -> FilterCoefficients:
    """First-order Butterworth low- or high-pass, bilinear with pre-warping: exactly -3 dB at the
    cut-off (``scipy.signal.butter(1, cutoff_hz, btype, fs=sample_rate_hz)``, without scipy).

    With ``K = tan(pi fc / fs)``: low-pass ``b = K / (1 + K) [1, 1]``, high-pass
    ``b = 1 / (1 + K) [1, -1]``, both ``a = [1, (K - 1) / (K + 1)]``.

    Raises:
        ValueError: cut-off not in (0, fs/2) or an unknown ``btype``.
    """
    if not 0.0 < cutoff_hz < sample_rate_hz / 2.0:
        raise ValueError(f"cut-off must be in (0, fs/2) = (0, {sample_rate_hz / 2.0:g}) Hz, got {cutoff_hz} Hz")
    k = math.tan(math.pi * cutoff_hz / sample_rate_hz)
    a = np.array([1.0, (k - 1.0) / (k + 1.0)])
    if btype == "lowpass":
        g = k / (1.0 + k)
        return np.array([g, g]), a
    if btype == "highpass":
        g = 1.0 / (1.0 + k)
        return np.array([g, -g]), a
    raise ValueError(f"btype must be 'lowpass' or 'highpass', got {btype!r}")


def cheby1_first_order_bandpass(ripple_db: float, low_hz: float, high_hz: float,
                                sample_rate_hz: float) -> FilterCoefficients:
    """Band-pass from a first-order Chebyshev-I low-pass prototype (``scipy.signal.cheby1(1,
    ripple_db, [low_hz, high_hz], 'bandpass', fs=sample_rate_hz)``, without scipy).

    The prototype ``H(s) = (1/eps) / (s + 1/eps)`` (``eps = sqrt(10^(ripple/10) - 1)``: the band
    edges are the ``-ripple_db`` points) goes through ``s -> (s^2 + w0^2) / (s bw)`` with the
    pre-warped edges ``w1, w2`` (``w0^2 = w1 w2``, ``bw = w2 - w1``) and the bilinear transform
    ``s = c (z - 1) / (z + 1)``, ``c = 2 fs``. With ``q = c bw / eps``:
    ``b = [q, 0, -q] / d2``, ``a = [1, 2 (w0^2 - c^2) / d2, (c^2 - q + w0^2) / d2]``,
    ``d2 = c^2 + q + w0^2``.

    Raises:
        ValueError: not ``0 < low < high < fs/2``, or ``ripple_db <= 0``.
    """
    if not 0.0 < low_hz < high_hz < sample_rate_hz / 2.0:
        raise ValueError(f"band must satisfy 0 < low < high < fs/2, got [{low_hz}, {high_hz}] Hz "
                         f"at fs = {sample_rate_hz} Hz")
    if not ripple_db > 0.0:
        raise ValueError(f"ripple must be > 0 dB, got {ripple_db}")
    eps = math.sqrt(10.0 ** (ripple_db / 10.0) - 1.0)
    w1, w2 = _prewarped(low_hz, sample_rate_hz), _prewarped(high_hz, sample_rate_hz)
    w0sq, c = w1 * w2, 2.0 * sample_rate_hz
    q = c * (w2 - w1) / eps
    d2 = c * c + q + w0sq
    return (np.array([q / d2, 0.0, -q / d2]),
            np.array([1.0, 2.0 * (w0sq - c * c) / d2, (c * c - q + w0sq) / d2]))


def design_pressure_highpass(cutoff_hz: float = 5.0, frame_period: float = PRESSURE_FRAME_PERIOD,
                             method: str = "butter") -> FilterCoefficients:
    """First-order high-pass for pressure frames (the FA-I channel ``F~``).

    Args:
        cutoff_hz: cut-off, Hz (5 Hz on the PR2).
        frame_period: frame period, s (0.041 s on the PR2).
        method: ``"butter"`` (default): first-order Butterworth (``butter(1, cutoff, 'highpass',
            fs)``, :func:`butter_first_order`), -3 dB exactly at the cut-off. ``"backward_euler"``:
            the robot's ``y[k] = g (y[k-1] + x[k] - x[k-1])`` with ``g = 1 / (1 + 2 pi fc dt)``
            (0.437 at 5 Hz / 41 ms; maximum gain only 0.61, reference B15).

    Returns:
        ``(b, a)`` transfer-function coefficients.
    """
    if method == "butter":
        return butter_first_order(cutoff_hz, 1.0 / frame_period, "highpass")
    if method == "backward_euler":
        g = 1.0 / (1.0 + 2.0 * math.pi * cutoff_hz * frame_period)
        return np.array([g, -g]), np.array([1.0, -g])
    raise ValueError(f"method must be 'butter' or 'backward_euler', got {method!r}")


def design_pressure_bandpass(band_hz: tuple[float, float] = (0.8, 5.0),
                             frame_period: float = PRESSURE_FRAME_PERIOD) -> FilterCoefficients:
    """``cheby1(1, 0.5 dB, band, 'bandpass', fs=1/frame_period)``: the pad-force band-pass ``Fbp``
    (:func:`cheby1_first_order_bandpass`).

    With the PR2 values: b = [0.6323, 0, -0.6323], a = [1, -0.6294, -0.2647]; the band edges are
    the -0.5 dB points (Chebyshev-I ripple), the -3 dB band is 0.32-8.4 Hz.
    """
    return cheby1_first_order_bandpass(0.5, band_hz[0], band_hz[1], 1.0 / frame_period)


def design_accelerometer_bandpass(sample_rate_hz: float = 3000.0, low_hz: float = 5.0,
                                  high_hz: Optional[float] = None) -> FilterCoefficients:
    """``cheby1(1, 0.5 dB, [low, high], 'bandpass', fs)``: the palm accelerometer band-pass.

    The PR2 samples at 3 kHz with ``high_hz = 1000`` (b = [0.8305, 0, -0.8305],
    a = [1, -0.3329, -0.6610]). ``high_hz=None`` picks ``min(1000, 0.45 * fs)`` so a 1 kHz simulated
    accelerometer gets a band just under its Nyquist frequency (450 Hz).
    """
    if high_hz is None:
        high_hz = min(1000.0, 0.45 * sample_rate_hz)
    if not 0 < low_hz < high_hz < sample_rate_hz / 2:
        raise ValueError(f"accelerometer band must satisfy 0 < low < high < fs/2, got "
                         f"[{low_hz}, {high_hz}] Hz at fs = {sample_rate_hz} Hz")
    return cheby1_first_order_bandpass(0.5, low_hz, high_hz, sample_rate_hz)


def design_velocity_lowpass(cutoff_hz: float = 5.0, sample_rate_hz: float = 1000.0) -> FilterCoefficients:
    """``butter(1, cutoff, fs)``: the joint-velocity low-pass used by the force-stable test.

    PR2: b = [0.0155, 0.0155], a = [1, -0.9691].
    """
    return butter_first_order(cutoff_hz, sample_rate_hz, "lowpass")


def steady_state_unit(b: NDArray[np.float64], a: NDArray[np.float64]) -> NDArray[np.float64]:
    """Direct-form II transposed state for a constant unit input (``scipy.signal.lfilter_zi``).

    ``b``, ``a`` normalised (``a[0] = 1``) and of equal length ``n + 1``. With the DC gain
    ``G = sum(b) / sum(a)``: ``z[n-1] = b[n] - a[n] G`` and ``z[i] = b[i+1] - a[i+1] G + z[i+1]``.
    """
    n = len(a) - 1
    gain = float(np.sum(b) / np.sum(a))
    z = np.zeros(n)
    acc = 0.0
    for i in range(n - 1, -1, -1):
        acc += float(b[i + 1]) - float(a[i + 1]) * gain
        z[i] = acc
    return z


def _df2t_step(b: Sequence[float], a: Sequence[float], z: Any, x: Any, order: int) -> Any:
    """One sample of the direct-form II transposed recursion (``lfilter``'s), ``order >= 1``: ``x`` a
    float (one channel, ``z`` a list of ``order`` floats) or an array of channels (``z`` shape
    (order, channels)); ``z`` is updated in place; returns the output sample(s)."""
    y = b[0] * x + z[0]
    last = order - 1
    for i in range(last):
        z[i] = b[i + 1] * x - a[i + 1] * y + z[i + 1]
    z[last] = b[last + 1] * x - a[last + 1] * y
    return y


class StreamingFilter:
    """A linear filter applied sample by sample (or block by block) to ``channels`` signals.

    The direct-form II transposed recursion of ``scipy.signal.lfilter`` with its ``zi`` state
    carried between calls, so feeding a signal in pieces gives exactly the same output as filtering
    it at once (checked against ``lfilter`` in the tests; scipy is not imported here). For few
    channels (``channels <= 4``), :meth:`step` runs it in plain Python floats (cheapest for every
    1 kHz cycle); for more, as a few numpy operations over all channels at once.

    Args:
        b, a: transfer-function coefficients (e.g. from the ``design_*`` functions).
        channels: number of independent signals filtered in parallel.
    """

    FAST_MAX_CHANNELS = 4

    def __init__(self, b: Sequence[float], a: Sequence[float], channels: int = 1):
        b = np.asarray(b, dtype=np.float64)
        a = np.asarray(a, dtype=np.float64)
        n = max(len(a), len(b))
        self.b = np.pad(b, (0, n - len(b))) / a[0]
        self.a = np.pad(a, (0, n - len(a))) / a[0]
        self.channels = int(channels)
        self.order = n - 1
        self._zi_unit = steady_state_unit(self.b, self.a)  # steady state for a unit input
        self._fast = self.channels <= self.FAST_MAX_CHANNELS
        self._bl = [float(v) for v in self.b]
        self._al = [float(v) for v in self.a]
        self._zi = np.zeros((self.order, self.channels))
        self._z = [[0.0] * self.order for _ in range(self.channels)]  # fast-path state per channel
        if self._fast and self.order == 1:   # unrolled recursions for the 1 kHz per-cycle filters
            self.step_scalar = self._step_scalar_1  # type: ignore[method-assign]
        elif self._fast and self.order == 2:
            self.step_scalar = self._step_scalar_2  # type: ignore[method-assign]

    @property
    def zi(self) -> NDArray[np.float64]:
        """Filter state, shape (order, channels) (``lfilter``'s ``zi`` along axis 0)."""
        if self._fast:
            return np.array(self._z, dtype=np.float64).T.reshape(self.order, self.channels)
        return self._zi

    @zi.setter
    def zi(self, value: NDArray[np.float64]) -> None:
        arr = np.asarray(value, dtype=np.float64).reshape(self.order, self.channels)
        if self._fast:
            self._z = [list(map(float, arr[:, c])) for c in range(self.channels)]
        else:
            self._zi = arr.copy()

    def reset(self, x0: Optional[Sequence[float] | float] = None) -> None:
        """Zero state, or steady state for the constant input ``x0`` (shape (channels,) or scalar)."""
        if x0 is None:
            self.zi = np.zeros((self.order, self.channels))
        else:
            x = np.broadcast_to(np.asarray(x0, dtype=np.float64), (self.channels,))
            self.zi = np.outer(self._zi_unit, x)

    def step_scalar(self, x: float, channel: int = 0) -> float:
        """Filter one sample of one channel (fast path only, ``channels <= 4``); returns a float."""
        return _df2t_step(self._bl, self._al, self._z[channel], x, self.order)

    def _step_scalar_1(self, x: float, channel: int = 0) -> float:
        b, a, z = self._bl, self._al, self._z[channel]
        y = b[0] * x + z[0]
        z[0] = b[1] * x - a[1] * y
        return y

    def _step_scalar_2(self, x: float, channel: int = 0) -> float:
        b, a, z = self._bl, self._al, self._z[channel]
        y = b[0] * x + z[0]
        z[0] = b[1] * x - a[1] * y + z[1]
        z[1] = b[2] * x - a[2] * y
        return y

    def step(self, x: Sequence[float] | float) -> NDArray[np.float64]:
        """Filter one sample per channel. ``x`` shape (channels,) (or a scalar when channels == 1).

        Returns:
            shape (channels,): the filtered sample.
        """
        if self._fast:
            xs = np.asarray(x, dtype=np.float64).reshape(self.channels).tolist()
            return np.array([self.step_scalar(v, c) for c, v in enumerate(xs)])
        xv = np.asarray(x, dtype=np.float64).reshape(self.channels)
        return self._step_vector(xv)

    def _step_vector(self, xv: NDArray[np.float64]) -> NDArray[np.float64]:
        """The direct-form II transposed recursion on all channels at once (state ``self._zi``): a
        few vector operations (the pressure filters: 44 channels per frame)."""
        if self.order == 0:
            return self._bl[0] * xv
        return _df2t_step(self._bl, self._al, self._zi, xv, self.order)

    def filter_block(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """Filter ``n`` consecutive samples, shape (n, channels); returns shape (n, channels)."""
        xs = np.asarray(x, dtype=np.float64).reshape(-1, self.channels)
        fast = self._fast
        if fast:                     # run the vector recursion on the fast path's state
            self._zi = self.zi.copy()
        out = np.empty_like(xs)
        for k in range(xs.shape[0]):
            out[k] = self._step_vector(xs[k])
        if fast:
            z = self._zi
            self._z = [[float(z[i, c]) for i in range(self.order)] for c in range(self.channels)]
        return out


# ------------------------------------------------------------------------------------------------
# detectors (pure functions on the pad signals; index 0 = left, 1 = right)
# ------------------------------------------------------------------------------------------------

def detect_contact(pad_force: NDArray[np.float64], pad_force_hp: NDArray[np.float64],
                   hp_force_trigger: float = 0.1, static_force_trigger: float = 0.95) -> NDArray[np.bool_]:
    """Per-finger contact: ``|F~| > hp_force_trigger  or  F > static_force_trigger``.

    Args:
        pad_force: shape (2,), zeroed static pad forces, N.
        pad_force_hp: shape (2,), high-passed pad forces, N.
        hp_force_trigger: N (``hp_force_trigger`` param, 0.1 N).
        static_force_trigger: N (``force_lightest - 0.25`` = 0.95 N on the PR2).

    Returns:
        shape (2,) bool: (left, right).
    """
    return (np.abs(pad_force_hp) > hp_force_trigger) | (pad_force > static_force_trigger)


def slip_thresholds(pad_force: NDArray[np.float64], slip_gain: float, min_threshold: float = 0.048,
                    max_threshold: float = 0.2) -> NDArray[np.float64]:
    """Per-finger slip threshold ``d = clip(slip_gain * |F|, min, max)``, N."""
    return np.clip(slip_gain * np.abs(pad_force), min_threshold, max_threshold)


def detect_slip(pad_force: NDArray[np.float64], pad_force_hp: NDArray[np.float64],
                pad_force_bp: NDArray[np.float64], slip_gain: float = 0.007,
                bp_force_limit: float = 0.18, min_threshold: float = 0.048,
                max_threshold: float = 0.2) -> NDArray[np.bool_]:
    """Per-finger slip: ``|F~| > clip(s |F|, 0.048, 0.2)  and  |Fbp| < bp_force_limit``.

    The high-pass (FA-I) vibration must exceed a force-proportional threshold while the 0.8-5 Hz
    band-pass stays small, which rejects slow deliberate force changes (e.g. by the servo itself).
    Slow slips are missed by design (reference B16).

    Args:
        pad_force, pad_force_hp, pad_force_bp: shape (2,), N.
        slip_gain: ``s``; 0.007 in the slip servo, ``slip_trigger_magnitude`` in the event detector.
        bp_force_limit: N; 0.18 in the slip servo, 0.2 in the event detector.

    Returns:
        shape (2,) bool: (left, right).
    """
    d = slip_thresholds(pad_force, slip_gain, min_threshold, max_threshold)
    return (np.abs(pad_force_hp) > d) & (np.abs(pad_force_bp) < bp_force_limit)


def detect_side_impact(edge_forces_hp: NDArray[np.float64], threshold: float = 0.2) -> bool:
    """Side impact: any high-passed edge cell (shape (2, 7), N) above ``threshold`` (positive only)."""
    return bool(np.any(edge_forces_hp > threshold))


# ------------------------------------------------------------------------------------------------
# observers
# ------------------------------------------------------------------------------------------------

class PressureObserver:
    """Both fingertip arrays: zeroing, pad sums, high-pass and band-pass, sensor-loss checks.

    Call :meth:`step` every control cycle; it does work only when a new frame arrives (and counts
    the time since each finger's last frame). All outputs are held between frames (piecewise
    constant over each ~41 ms frame).

    **Sensor loss** (per finger, :attr:`lost`, re-evaluated every cycle; a finger recovers as soon
    as its frames are sound again):

    - *dropout*: the raw pad sum is exactly 0 (the PR2's broken-sensor test, :attr:`broken`) or
      every one of the 22 cells reads exactly 0 (jsk_robot#977: a sensor that dropped out). A real
      array never does: every cell carries an offset and noise.
    - *frozen*: the same frame, bit for bit, for ``frozen_time`` seconds (0: check off; seen when
      a frame arrives). A live
      array's noise changes some cell every frame; a stuck driver repeats the last one. Off by
      default because a noise-free source (a synthetic trace, a PR2 whose counts do not move)
      repeats frames legitimately; the simulator turns it on with its sensor noise.
    - *stopped*: no frame for ``timeout`` seconds (0: check off) after the first one.

    Args:
        frame_period: s between frames the filters are designed for (0.041 s).
        hp_cutoff_hz: high-pass cut-off, Hz (5).
        hp_method: ``"butter"`` or ``"backward_euler"`` (see :func:`design_pressure_highpass`).
        bp_band_hz: band-pass band, Hz ((0.8, 5)).
        zero_on_first_frame: take the first frame as the zero offset (as the PR2 does at start-up).
        timeout: s without a frame after which a finger's sensor counts as lost (0: never).
        frozen_time: s of bit-identical frames after which it counts as lost (0: never).

    Attributes (arrays indexed [finger, cell], finger 0 = left, 1 = right):
        raw: shape (2, 22), last frame as received, N.
        offset: shape (2, 22), zero offsets, N.
        forces: shape (2, 22), zeroed cell forces, N.
        forces_hp, forces_bp: shape (2, 22), high-passed / band-passed zeroed cell forces, N.
        pad_force, pad_force_hp, pad_force_bp: shape (2,), pad sums of the above, N.
        pad_force_left, pad_force_right: ``pad_force`` as Python floats (cheap per-cycle reads), N.
        edge_forces_hp: shape (2, 7), high-passed edge cells, N.
        broken: shape (2,) bool: the finger's raw pad sum is exactly 0 (the PR2's test).
        lost: shape (2,) bool: the finger's sensor is lost (dropout, frozen or stopped, above).
        any_lost: ``lost.any()`` as a Python bool (the cheap per-cycle read).
        good_pad_force: shape (2,), each finger's pad force from its last sound frame, N.
        since_frame: shape (2,), s since each finger's last frame.
        frames: number of frames received.
        new_frame: the last :meth:`step` processed a new frame.
    """

    def __init__(self, frame_period: float = PRESSURE_FRAME_PERIOD, hp_cutoff_hz: float = 5.0,
                 hp_method: str = "butter", bp_band_hz: tuple[float, float] = (0.8, 5.0),
                 zero_on_first_frame: bool = True, timeout: float = 0.0, frozen_time: float = 0.0):
        self.frame_period = frame_period
        self.timeout = float(timeout)
        self.frozen_time = float(frozen_time)
        self.hp = StreamingFilter(*design_pressure_highpass(hp_cutoff_hz, frame_period, hp_method),
                                  channels=2 * NUM_CELLS)
        self.bp = StreamingFilter(*design_pressure_bandpass(bp_band_hz, frame_period), channels=2 * NUM_CELLS)
        self.zero_on_first_frame = zero_on_first_frame
        self.raw = np.zeros((2, NUM_CELLS))
        self.offset = np.zeros((2, NUM_CELLS))
        self.forces = np.zeros((2, NUM_CELLS))
        self.forces_hp = np.zeros((2, NUM_CELLS))
        self.forces_bp = np.zeros((2, NUM_CELLS))
        self.pad_force = np.zeros(2)
        self.pad_force_left = self.pad_force_right = 0.0
        self.pad_force_hp = np.zeros(2)
        self.pad_force_bp = np.zeros(2)
        self.edge_forces_hp = np.zeros((2, NUM_EDGE_CELLS))
        self.broken = np.zeros(2, dtype=bool)
        self.lost = np.zeros(2, dtype=bool)
        self.any_lost = False
        self.good_pad_force = np.zeros(2)
        self.since_frame = [0.0, 0.0]
        self._dropout = [False, False]
        self._same_for = [0.0, 0.0]      # s the finger's frame has not changed
        self.frames = 0
        self.new_frame = False
        self._zero_left_s = 0.0
        self._zero_sum = np.zeros((2, NUM_CELLS))
        self._zero_count = 0

    # ---- zeroing -------------------------------------------------------------------------------
    @property
    def zeroing(self) -> bool:
        """A zeroing window is open."""
        return self._zero_left_s > 0.0

    def start_zeroing(self, duration_s: float = 0.25) -> None:
        """Open a zeroing window: the offset becomes the mean of the frames received in it.

        Only call it when neither finger touches anything. If no frame arrives during the window,
        the last frame received is used.
        """
        self._zero_left_s = float(duration_s)
        self._zero_sum[:] = 0.0
        self._zero_count = 0

    def set_zero(self, offset: Optional[NDArray[np.float64]] = None) -> None:
        """Set the offsets now (default: the last frame) and re-seat the filters at steady state."""
        self.offset = np.array(self.raw if offset is None else offset, dtype=np.float64).reshape(2, NUM_CELLS)
        self._recompute_static()
        self.hp.reset(self.forces.ravel())
        self.bp.reset(self.forces.ravel())
        self.forces_hp[:] = 0.0
        self.forces_bp[:] = 0.0
        self._recompute_sums()

    # ---- per cycle -----------------------------------------------------------------------------
    def step(self, dt: float, left: Optional[Sequence[float]], right: Optional[Sequence[float]]) -> bool:
        """Advance one control cycle of ``dt`` seconds.

        Args:
            dt: cycle length, s.
            left, right: a new (22,) frame in N, or None when no new frame arrived this cycle (a
                None beside a new frame keeps that finger's previous values).

        Returns:
            True if a new frame was processed.
        """
        self.new_frame = left is not None or right is not None
        since = self.since_frame
        same = self._same_for
        if self.new_frame:
            for i, frame in ((LEFT, left), (RIGHT, right)):
                if frame is None:
                    since[i] += dt
                    same[i] += dt
                    continue
                arr = check_frame("left pressure frame" if i == LEFT else "right pressure frame", frame)
                if self.frames and np.array_equal(arr, self.raw[i]):
                    same[i] += dt
                else:
                    same[i] = 0.0
                self.raw[i] = arr
                since[i] = 0.0
            self.frames += 1
            pad = self.raw[:, PAD_CELLS].sum(axis=1)
            self.broken = pad == 0.0
            self._dropout = [bool(self.broken[i]) or not self.raw[i].any() for i in (LEFT, RIGHT)]
            if self.frames == 1 and self.zero_on_first_frame:
                self.set_zero()
            else:
                self._recompute_static()
                self.forces_hp = self.hp.step(self.forces.ravel()).reshape(2, NUM_CELLS)
                self.forces_bp = self.bp.step(self.forces.ravel()).reshape(2, NUM_CELLS)
                self._recompute_sums()
            if self.zeroing:
                self._zero_sum += self.raw
                self._zero_count += 1
        else:
            since[0] += dt
            since[1] += dt
            same[0] += dt
            same[1] += dt
        self._update_lost()
        if self.zeroing:
            self._zero_left_s -= dt
            if self._zero_left_s <= 1e-12:
                self._zero_left_s = 0.0
                self.set_zero(self._zero_sum / self._zero_count if self._zero_count else None)
        return self.new_frame

    def _update_lost(self) -> None:
        if not self.frames:
            return
        if not self.new_frame and not self.any_lost:   # between frames only a timeout can start
            t = self.timeout
            if t <= 0.0 or (self.since_frame[0] <= t and self.since_frame[1] <= t):
                return
        lost_l = self._dropout[0] or self._stopped(0) or self._frozen(0)
        lost_r = self._dropout[1] or self._stopped(1) or self._frozen(1)
        if self.new_frame:
            if not lost_l:
                self.good_pad_force[LEFT] = self.pad_force_left
            if not lost_r:
                self.good_pad_force[RIGHT] = self.pad_force_right
        if lost_l or lost_r or self.any_lost:
            self.lost = np.array([lost_l, lost_r])
            self.any_lost = bool(lost_l or lost_r)

    def _stopped(self, i: int) -> bool:
        return 0.0 < self.timeout < self.since_frame[i]

    def _frozen(self, i: int) -> bool:
        # unchanged for frozen_time, and frames did arrive since the last change (else: stopped)
        same = self._same_for[i]
        return 0.0 < self.frozen_time <= same + 1e-9 and self.since_frame[i] + 1e-9 < same

    def loss_reason(self, finger: int) -> str:
        """Why ``finger``'s sensor is lost (empty when it is not): which check, with its figures."""
        if not self.lost[finger]:
            return ""
        if self._dropout[finger]:
            return "all cells read 0" if not self.raw[finger].any() else "the raw pad sum is exactly 0"
        if self._stopped(finger):
            return f"no frame for {self.since_frame[finger]:.2f} s"
        return f"frozen: the same frame for {self._same_for[finger]:.2f} s"

    def _recompute_static(self) -> None:
        self.forces = self.raw - self.offset
        self.pad_force = self.forces[:, PAD_CELLS].sum(axis=1)
        self.pad_force_left, self.pad_force_right = self.pad_force.tolist()

    def _recompute_sums(self) -> None:
        self.pad_force_hp = self.forces_hp[:, PAD_CELLS].sum(axis=1)
        self.pad_force_bp = self.forces_bp[:, PAD_CELLS].sum(axis=1)
        self.edge_forces_hp = self.forces_hp[:, EDGE_CELLS]


class AccelerationObserver:
    """Palm accelerometer band-pass (FA-II channel), three axes.

    Args:
        sample_rate_hz: accelerometer rate, Hz (3000 on the PR2; 1000 for one sample per cycle).
        low_hz, high_hz: band, Hz (see :func:`design_accelerometer_bandpass`).

    Attributes:
        raw: shape (3,), last raw sample, m/s^2.
        filtered: shape (3,), last band-passed sample ``(x, y, z)``, m/s^2.
        peak_norm: largest band-passed magnitude among the samples of the last :meth:`step`, m/s^2.
    """

    def __init__(self, sample_rate_hz: float = 1000.0, low_hz: float = 5.0, high_hz: Optional[float] = None):
        self.sample_rate_hz = sample_rate_hz
        self.filter = StreamingFilter(*design_accelerometer_bandpass(sample_rate_hz, low_hz, high_hz), channels=3)
        self._raw: tuple[float, float, float] = (0.0, 0.0, 0.0)
        self._filtered: tuple[float, float, float] = (0.0, 0.0, 0.0)
        self.peak_norm = 0.0
        self._started = False

    @property
    def raw(self) -> NDArray[np.float64]:
        """Shape (3,): the last raw sample, m/s^2."""
        return np.array(self._raw)

    @property
    def filtered(self) -> NDArray[np.float64]:
        """Shape (3,): the last band-passed sample ``(x, y, z)``, m/s^2."""
        return np.array(self._filtered)

    @property
    def filtered_tuple(self) -> tuple[float, float, float]:
        """:attr:`filtered` as a tuple of floats (no array: the cheap per-cycle read)."""
        return self._filtered

    def pause(self) -> None:
        """No sample this cycle (the accelerometer is not read): no event (``peak_norm`` 0), the
        outputs hold, and the next sample re-seeds the filter at steady state, as the first one does."""
        self._started = False
        self.peak_norm = 0.0

    def step(self, samples: Sequence[float] | NDArray[np.float64]) -> None:
        """Filter the samples of one cycle: shape (3,) or (n, 3), m/s^2, oldest first.

        The first sample ever (and the first after :meth:`pause`) seeds the filter at steady state
        (gravity is not an event). A plain ``(x, y, z)`` tuple takes a path without numpy.
        """
        if type(samples) is tuple and len(samples) == 3:
            ax, ay, az = samples
            block = None
        else:
            block = np.asarray(samples, dtype=np.float64)
            if block.ndim != 1:
                self._step_block(block)
                return
            ax, ay, az = block.reshape(3).tolist()
        if not self._started:
            self.filter.reset((ax, ay, az))
            self._started = True
        f = self.filter
        fx, fy, fz = f.step_scalar(ax, 0), f.step_scalar(ay, 1), f.step_scalar(az, 2)
        self._raw = (ax, ay, az)
        self._filtered = (fx, fy, fz)
        self.peak_norm = math.sqrt(fx * fx + fy * fy + fz * fz)

    def _step_block(self, block: NDArray[np.float64]) -> None:
        block = block.reshape(-1, 3)
        if not self._started:
            self.filter.reset(block[0])
            self._started = True
        y = self.filter.filter_block(block)
        self._raw = tuple(block[-1].tolist())
        self._filtered = tuple(y[-1].tolist())
        self.peak_norm = float(np.sqrt((y * y).sum(axis=1)).max())


class EventDetector:
    """The PR2 event detector: latched acceleration, slip and finger-side-impact events.

    Inactive until :meth:`configure` is called with a command (fixes B11). Each command clears the
    latches. ``trigger_conditions`` (PR2GripperEventDetectorCommand):

    ====  ==================================  =========================
    0     FINGER_SIDE_IMPACT_OR_ACC           acc or side
    1     SLIP_AND_ACC                        acc and slip (latched, need not coincide)
    2     FINGER_SIDE_IMPACT_OR_SLIP_OR_ACC   acc or slip or side
    3     SLIP                                slip
    4     ACC                                 acc
    ====  ==================================  =========================

    Args:
        side_impact_threshold: N, high-passed edge cell force (0.2 N).
        slip_bp_force_limit: N, band-pass limit of the slip test (0.2 N in the event detector).
        slip_min_threshold, slip_max_threshold: N, clamp of the slip threshold (0.048, 0.2).
        pad_contact_threshold: N, static pad force over which a pad holds the object
            (``force_lightest - 0.25`` = 0.95 N).

    Differences from the robot's slip event (issue 33 item 4; the robot tests each finger alone):

    - While both pads hold the object, the test runs on the pads' mean (force, high-pass and
      band-pass): a slip shakes the squeeze, while the held object's inertia along the grip axis,
      as the arm starts or stops, moves load from one pad to the other (one pad's force rises by
      what the other's falls) and is not slip. A slip felt by one pad alone must be twice as large.
    - While the controller changes its own grip (``own_grip_change``), no slip event is taken.
    """

    def __init__(self, side_impact_threshold: float = 0.2, slip_bp_force_limit: float = 0.2,
                 slip_min_threshold: float = 0.048, slip_max_threshold: float = 0.2,
                 pad_contact_threshold: float = 0.95):
        self.side_impact_threshold = side_impact_threshold
        self.pad_contact_threshold = pad_contact_threshold
        self.slip_bp_force_limit = slip_bp_force_limit
        self.slip_min_threshold = slip_min_threshold
        self.slip_max_threshold = slip_max_threshold
        self.command: Optional[PR2GripperEventDetectorCommand] = None
        self.clear()

    @property
    def acceleration_vector(self) -> NDArray[np.float64]:
        """Shape (3,): the band-passed palm acceleration of the last cycle, m/s^2."""
        return np.array(self._acceleration_vector)

    @property
    def armed(self) -> bool:
        """A command has been received."""
        return self.command is not None

    @property
    def uses_tactile(self) -> bool:
        """Armed with trigger conditions that read the fingertips (all but ``ACC``)."""
        return self.command is not None and self.command.trigger_conditions != PR2GripperEventDetectorCommand.ACC

    def clear(self) -> None:
        """Clear the latched events."""
        self.acceleration_event = False
        self.slip_event = False
        self.side_impact_event = False
        self.trigger_conditions_met = False
        self._acceleration_vector: tuple[float, float, float] = (0.0, 0.0, 0.0)

    def configure(self, command: PR2GripperEventDetectorCommand) -> None:
        """Arm with ``command`` and clear the latches (the robot's ``event_detector`` topic)."""
        self.command = command
        self.clear()

    def step(self, acceleration: AccelerationObserver, pressure: PressureObserver, own_grip_change: float = 0.0) -> bool:
        """Evaluate one cycle (after both observers stepped). Returns ``trigger_conditions_met``.
        ``own_grip_change``: the sign of the change of pad force the controller is making on its own
        (F2 of :mod:`.gripper_controller`: -1 while it relaxes the grip, +1 while it raises it, 0
        otherwise): while it is not 0, no slip event is taken (the servo's own transients)."""
        self._acceleration_vector = acceleration.filtered_tuple
        cmd = self.command
        if cmd is None:
            return False
        if acceleration.peak_norm > cmd.acceleration_trigger_magnitude:
            self.acceleration_event = True
        if pressure.new_frame and pressure.frames > 1 and not pressure.any_lost:  # no events from a lost sensor
            force, hp, bp = pressure.pad_force, pressure.pad_force_hp, pressure.pad_force_bp
            if float(force.min()) > self.pad_contact_threshold:
                # both pads hold the object: the slip test reads the squeeze (the pads' mean), not a
                # transfer of load from one pad to the other (the held object's inertia along the
                # grip axis as the arm starts or stops: +0.08 / -0.06 N on the WSG 50's pads at a
                # 15.5 N grip when the lower started after the carry, over the 0.005 x 15.5 N
                # threshold, and the block was let go in the air)
                force, hp, bp = (np.full(2, float(a.mean())) for a in (force, hp, bp))
            slip = detect_slip(force, hp, bp, cmd.slip_trigger_magnitude, self.slip_bp_force_limit,
                               self.slip_min_threshold, self.slip_max_threshold)
            if own_grip_change:
                # the controller moves the grip itself (F2): the pads' transients are its own (the
                # servo overshoots and rings either way), as a slow own change is on the robot
                # (its band-pass veto): no slip event until the grip has settled
                slip[:] = False
            if slip.any():
                self.slip_event = True
            if detect_side_impact(pressure.edge_forces_hp, self.side_impact_threshold):
                self.side_impact_event = True
        acc, slip, side = self.acceleration_event, self.slip_event, self.side_impact_event
        c = cmd.trigger_conditions
        if c == PR2GripperEventDetectorCommand.FINGER_SIDE_IMPACT_OR_ACC:
            met = acc or side
        elif c == PR2GripperEventDetectorCommand.SLIP_AND_ACC:
            met = acc and slip
        elif c == PR2GripperEventDetectorCommand.FINGER_SIDE_IMPACT_OR_SLIP_OR_ACC:
            met = acc or slip or side
        elif c == PR2GripperEventDetectorCommand.SLIP:
            met = slip
        else:
            met = acc
        if met:
            self.trigger_conditions_met = True
        return self.trigger_conditions_met

    def data(self, stamp: float) -> PR2GripperEventDetectorData:
        """The current state as PR2GripperEventDetectorData (stamp in seconds)."""
        return PR2GripperEventDetectorData(
            stamp=stamp, trigger_conditions_met=self.trigger_conditions_met, slip_event=self.slip_event,
            acceleration_event=self.acceleration_event,
            acceleration_vector=tuple(float(v) for v in self._acceleration_vector))
