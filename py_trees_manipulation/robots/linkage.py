"""Single-actuator linkage grippers: the finger gap as a function of the one driven joint.

The Robotiq 2F-85 and the UFactory xArm gripper are four-bar linkages driven by one motor: the URDF
names one driven joint (``finger_joint``, ``drive_joint``) and declares every other joint of both
fingers (outer knuckles, inner knuckles, fingertips) a ``<mimic>`` of it, often with multiplier -1
on one side, and sometimes a mimic of another mimic joint. The pads stay parallel and move on an
arc: the gap is not linear in the driver and the pads slide along the approach axis as they close.

:func:`linkage_table` samples the URDF's forward kinematics over the driver's range, every mimic
joint following its own leader (:meth:`~.urdf.UrdfModel.joint_value`), and returns the gap between
the pad frames, each pad's travel per unit of the driver and the pads' centre along the palm's axes
at each sample. The description keeps the table (``GripperDescription.drive_table``) and
interpolates it; the simulator, the collision world and ``ptm robots check`` read the same table.

Frames: pad frames as in :mod:`.description` (pad ``y`` out of the back of the finger); positions in
the palm link's frame, metres; driver positions in radians (or metres for a prismatic driver).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Sequence

import numpy as np

from .description import FingerPad
from .urdf import UrdfModel

__all__ = ["LinkageTable", "LinkageLoop", "linkage_table", "linkage_loops", "pad_actuator", "SAMPLES"]

#: driver samples of a table (the gap between samples is linear: < 1 micrometre off for the xArm)
SAMPLES = 129


@dataclass(frozen=True)
class LinkageTable:
    """A linkage gripper's kinematics sampled over its driver's range.

    Attributes:
        driver: the driven joint.
        q: driver positions, ascending, shape (n,).
        gap: pad-to-pad distance along the pads' normals at each ``q``, metres, shape (n,).
        travel: each pad's motion towards its back (opening) per unit of the driver, m/rad (or m/m),
            shape (2, n): the derivative of its position along its own ``y`` axis.
        centre: midpoint of the two pad centres in the palm frame at each ``q``, metres, shape (n, 3).
        own_travel: each pad's motion towards its back per unit of the driver alone, every other
            joint held (the lever the driver's torque acts through on that pad); a pad whose loop
            is closed (:func:`linkage_loops`: the simulator pins it) translates with its chain, and
            its lever is its ``travel``, wherever on the pad the object presses; for a pad whose
            chain does not hold the driver, per unit of the driver through that chain's actuated
            joint alone (:func:`pad_actuator`: the joint nearest the palm that follows the driver);
            0 when there is none. m/rad, shape (2, n).
        parallel: smallest ``-y_left . y_right`` over the range (1: the pads face each other
            squarely everywhere).
    """

    driver: str
    q: np.ndarray
    gap: np.ndarray
    travel: np.ndarray
    centre: np.ndarray
    parallel: float
    own_travel: np.ndarray

    @property
    def closed_q(self) -> float:
        """Driver position of the smallest gap (the closing limit)."""
        return float(self.q[int(np.argmin(self.gap))])

    @property
    def open_q(self) -> float:
        """Driver position of the largest gap."""
        return float(self.q[int(np.argmax(self.gap))])

    def monotonic(self) -> bool:
        """Whether the gap grows (or shrinks) strictly with the driver over the whole range."""
        d = np.diff(self.gap)
        return bool(np.all(d > 0) or np.all(d < 0))

    def travel_at(self, q: float) -> tuple[float, float]:
        """Each pad's travel per unit of the driver at ``q`` (m/rad; positive: opening)."""
        return (float(np.interp(q, self.q, self.travel[0])), float(np.interp(q, self.q, self.travel[1])))


def pad_actuator(urdf: UrdfModel, driver: str, chain: Sequence[Any]) -> Optional[str]:
    """The joint of a pad's chain (joints from the palm down, :meth:`~.urdf.UrdfModel.chain`) that
    the one motor turns: the driver when the chain holds it, else the chain's joint nearest the palm
    that follows the driver through ``<mimic>`` (the xArm's right outer knuckle: the gear train's
    other output), else None. A pad's squeeze loads this joint through the lever of
    ``LinkageTable.own_travel``."""
    names = [jj.name for jj in chain]
    if driver in names:
        return driver
    for jj in chain:
        if jj.mimic is None:
            continue
        try:
            if urdf.mimic_root(jj.name)[0] == driver:
                return str(jj.name)
        except ValueError:   # a <mimic> loop or a missing leader: the description check reports it
            continue
    return None


def linkage_table(urdf: UrdfModel, driver: str, pads: Sequence[FingerPad], palm: str,
                  samples: int = SAMPLES) -> LinkageTable:
    """Sample the gap of the gripper driven by ``driver`` over the driver's URDF limits.

    Args:
        urdf: the parsed URDF.
        driver: the driven joint (finite limits, revolute or prismatic).
        pads: the two finger pads (link and pad frame in it); each pad link must move with the
            driver through ``<mimic>`` joints (or be below the driver itself).
        palm: the link the fingers hang from (the frame of ``centre``).
        samples: number of driver positions, >= 3.

    Returns:
        The :class:`LinkageTable`.

    Raises:
        ValueError: the driver has no finite limits.
    """
    j = urdf.joints[driver]
    if not (np.isfinite(j.lower) and np.isfinite(j.upper)) or j.upper <= j.lower:
        raise ValueError(f"the driver {driver!r} needs finite position limits (<limit lower upper>)")
    q = np.linspace(j.lower, j.upper, max(3, int(samples)))

    def pad_frames(v: float) -> np.ndarray:
        return np.array([urdf.link_pose(pad.link, {driver: float(v)}, base=palm) @ pad.pose for pad in pads])

    poses = np.array([pad_frames(v) for v in q])
    p = poses[:, :, :3, 3]                         # (n, 2, 3) pad centres
    y = poses[:, :, :3, 1]                         # (n, 2, 3) pad back directions
    d = p[:, 0] - p[:, 1]
    gap = 0.5 * (np.einsum("ij,ij->i", d, y[:, 0]) - np.einsum("ij,ij->i", d, y[:, 1]))
    # each pad's travel along its own back direction per unit of the driver: a central difference
    # of the forward kinematics (one-sided at the limits)
    h = 1e-6
    travel = np.empty((2, len(q)))
    for i, v in enumerate(q):
        lo, hi = max(v - h, j.lower), min(v + h, j.upper)
        dp = (pad_frames(hi)[:, :3, 3] - pad_frames(lo)[:, :3, 3]) / (hi - lo)
        travel[:, i] = np.einsum("kj,kj->k", dp, y[i])
    # the driver alone (every other joint held at its value): the lever of the driver's torque; on
    # the other pad's chain, the joint nearest the palm that follows the driver (its <mimic>, the
    # one motor's other output: :func:`pad_actuator`) alone, per unit of the driver it follows
    own = np.zeros((2, len(q)))
    pinned = {loop.pad_link for loop in linkage_loops(urdf, driver, pads, palm)}
    for k, pad in enumerate(pads):
        if pad.link in pinned:   # the loop is closed: the pad translates, its lever is its travel
            own[k] = travel[k]
            continue
        chain = urdf.chain(pad.link, palm)
        mover = pad_actuator(urdf, driver, chain)
        if mover is None:
            continue
        scale = 1.0 if mover == driver else urdf.mimic_root(mover)[1]
        for i, v in enumerate(q):
            held = {jj.name: urdf.joint_value(jj.name, {driver: float(v)}) for jj in chain}
            lo, hi = max(v - h, j.lower), min(v + h, j.upper)
            m0 = held[mover] - scale * (v - lo)
            m1 = held[mover] + scale * (hi - v)
            a = urdf.link_pose(pad.link, {**held, mover: m0}, base=palm) @ pad.pose
            b = urdf.link_pose(pad.link, {**held, mover: m1}, base=palm) @ pad.pose
            own[k, i] = float((b[:3, 3] - a[:3, 3]) @ y[i, k]) / (hi - lo)
    parallel = float(np.min(-np.einsum("ij,ij->i", y[:, 0], y[:, 1])))
    return LinkageTable(driver=driver, q=q, gap=gap, travel=travel, centre=0.5 * (p[:, 0] + p[:, 1]),
                        parallel=parallel, own_travel=own)


#: a linkage's loop is closed where its links meet within this over the driver's whole range (m)
LOOP_TOLERANCE_M = 2e-4


@dataclass(frozen=True)
class LinkageLoop:
    """Where a linkage's open URDF loop closes: the link that ends free (the inner knuckle) meets the
    pad's link (the fingertip) at one pin over the driver's whole range.

    Attributes:
        link: the free-ended link (a ``<mimic>`` joint's child with no child of its own).
        pad_link: the pad's link it is pinned to.
        in_link: the pin in ``link``'s frame, m, shape (3,).
        in_pad_link: the pin in ``pad_link``'s frame, m, shape (3,).
        joints: the joints the pin makes passive (the simulator stops driving them): ``link``'s
            joint and the pad link's joint, names.
        error_m: the largest distance between the two points over the driver's range, m.
    """

    link: str
    pad_link: str
    in_link: np.ndarray
    in_pad_link: np.ndarray
    joints: tuple[str, str]
    error_m: float


def linkage_loops(urdf: UrdfModel, driver: str, pads: Sequence[FingerPad], palm: str,
                  samples: int = 17) -> list[LinkageLoop]:
    """The loops of a four-bar linkage gripper that its URDF leaves open, found from the kinematics.

    A real four-bar (the xArm gripper, the Robotiq 2F-85) pins each inner knuckle to its fingertip,
    which keeps the pad parallel: the pad translates, and the motor's torque reaches it through the
    linkage's ratio wherever on the pad the object presses. The URDF drops that pin (a tree cannot
    hold a loop) and declares the knuckle and the fingertip ``<mimic>`` of the driver instead. For
    each pad link and each free-ended ``<mimic>`` link under the palm that is not on the pad's chain,
    this solves (least squares over ``samples`` driver positions, every mimic following its leader)
    for a point fixed in both links; the pair is a loop when the two points stay within
    :data:`LOOP_TOLERANCE_M` over the whole range.

    Returns:
        One :class:`LinkageLoop` per pad that has one (none for a gripper without such links).
    """
    j = urdf.joints[driver]
    if not (np.isfinite(j.lower) and np.isfinite(j.upper)) or j.upper <= j.lower:
        return []
    qs = np.linspace(j.lower, j.upper, max(3, int(samples)))
    parents = {jj.parent for jj in urdf.joints.values()}
    pad_links = [p.link for p in pads]
    free = [jj for jj in urdf.joints.values()
            if jj.mimic is not None and jj.movable and jj.child not in parents and jj.child not in pad_links
            and urdf.is_descendant(jj.child, palm)]
    loops: list[LinkageLoop] = []
    for pad_link in pad_links:
        if not urdf.is_descendant(pad_link, palm):
            continue
        pad_joint = urdf.parent_joint.get(pad_link)
        if pad_joint is None or pad_joint.mimic is None:
            continue
        chain = {jj.name for jj in urdf.chain(pad_link, palm)}
        best: Optional[LinkageLoop] = None
        for jj in free:
            if jj.name in chain:
                continue
            A, rhs, poses = [], [], []
            for v in qs:
                Ti = urdf.link_pose(jj.child, {driver: float(v)}, base=palm)
                Tf = urdf.link_pose(pad_link, {driver: float(v)}, base=palm)
                A.append(np.hstack([Ti[:3, :3], -Tf[:3, :3]]))
                rhs.append(Tf[:3, 3] - Ti[:3, 3])
                poses.append((Ti, Tf))
            sol = np.linalg.lstsq(np.vstack(A), np.concatenate(rhs), rcond=None)[0]
            a, b = sol[:3], sol[3:]
            err = max(float(np.linalg.norm(Ti[:3, :3] @ a + Ti[:3, 3] - Tf[:3, :3] @ b - Tf[:3, 3])) for Ti, Tf in poses)
            if err <= LOOP_TOLERANCE_M and (best is None or err < best.error_m):
                best = LinkageLoop(link=jj.child, pad_link=pad_link, in_link=a, in_pad_link=b,
                                   joints=(jj.name, pad_joint.name), error_m=err)
        if best is not None:
            loops.append(best)
    return loops
