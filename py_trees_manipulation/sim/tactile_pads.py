"""The 22 PR2 tactile cells laid on a pad geometry: which cell a finger contact point loads
(:func:`cell_of`, :class:`PadCells`; the layout is described in :mod:`.tactile_sensor`).

Moved out of :mod:`.tactile_sensor` (issue 37 item 6), which re-exports these names.
"""

from __future__ import annotations

from typing import Optional

from ..control.tactile import PAD_COLS, PAD_ROWS
from ..robots import PadGeometry

#: how far around the pad and behind its inner surface a contact point still lies on the gripping
#: face (:meth:`PadCells.face`), m: Bullet's points on a mesh hull sit on its 1 mm collision margin
FACE_TOL_M = 0.0005


class PadCells:
    """The 22 PR2 cells laid on one pad geometry (:class:`~py_trees_manipulation.robots.PadGeometry`),
    with the figures :meth:`cell` needs precomputed (it runs for every finger contact sample)."""

    __slots__ = ("half_w", "half_l", "cell_w", "cell_l", "tip_face", "side", "back", "corner", "face_w",
                 "face_l", "face_y")

    def __init__(self, pad: PadGeometry):
        self.half_w = pad.width_m / 2
        self.half_l = pad.length_m / 2
        self.cell_w = pad.width_m / PAD_COLS
        self.cell_l = pad.length_m / PAD_ROWS
        self.tip_face = pad.tip_face_m
        self.side = pad.side_m
        self.back = pad.back_m
        self.corner = self.half_w - pad.corner_m
        # the gripping face's extent (face): the pad, and FACE_TOL_M around it and behind its plane
        self.face_w = self.half_w + FACE_TOL_M
        self.face_l = self.half_l + FACE_TOL_M
        self.face_y = FACE_TOL_M

    def face(self, x: float, y: float, z: float) -> Optional[int]:
        """The pad cell of a contact point ``(x, y, z)`` (pad frame, m) on the gripping face, None
        for a point elsewhere (:meth:`cell` places it by its normal).

        On the face: not behind the pad frame's inner surface by more than :data:`FACE_TOL_M` (a
        pad collision box, ``face_m``, puts its points in front of it), and within the pad's width
        and length and that tolerance. A point on the face is placed by where it is, not by its
        contact normal: Bullet keeps a manifold point with the normal it was found with (see
        :func:`~.tactile_gripper._face_pressure`), so a point at the pad's tip edge of a flat
        grip could read as the tip face's."""
        if y > self.face_y or x > self.face_w or -x > self.face_w or z > self.face_l or -z > self.face_l:
            return None
        return self._pad(x, z)

    def cell(self, x: float, y: float, z: float, normal: Optional[tuple[float, float, float]] = None) -> int:
        """See :func:`cell_of`."""
        if normal is not None:
            nx, ny, nz = normal
            ax, ay, az = abs(nx), abs(ny), abs(nz)
            if az >= ax and az >= ay:
                if nz > 0:
                    return self._tip(x)
            elif ax >= ay:
                return 1 if nx < 0 else 6
            elif ny > 0:
                return 0
            else:
                return self._pad(x, z)
        if y > self.back:
            return 0
        if z > self.tip_face:
            return self._tip(x)
        if abs(x) > self.side:
            return 1 if x < 0 else 6
        return self._pad(x, z)

    def _tip(self, x: float) -> int:
        if abs(x) > self.corner:
            return 2 if x < 0 else 5
        return 3 if x < 0 else 4

    def _pad(self, x: float, z: float) -> int:
        col = min(PAD_COLS - 1, max(0, int((x + self.half_w) / self.cell_w)))
        row = min(PAD_ROWS - 1, max(0, int((self.half_l - z) / self.cell_l)))
        return 7 + PAD_COLS * row + col


def cell_of(x: float, y: float, z: float, normal: Optional[tuple[float, float, float]] = None, *,
            pad: PadGeometry) -> int:
    """PR2 cell index (0..21) of a contact point ``(x, y, z)`` in the **pad frame**, metres.

    Pad frame (:mod:`py_trees_manipulation.robots.description`): origin at the pad centre on the
    finger's inner surface, z towards the fingertip, y out of the back of the finger (the inner
    surface's outward normal is -y), x across. ``pad`` is the robot description's pad geometry.

    With ``normal`` (the finger surface's outward unit normal at the point, same frame), the face is
    chosen by the normal's dominant axis: ``+z`` the tip face (tip 3/4 or corner 2/5 by ``x``),
    ``+-x`` a side (1 for ``-x``, 6 for ``+x``), ``+y`` the back (0), ``-y`` the inner face: the pad
    cell ``7 + 3 row + col`` of ``(x, z)`` (row 0 at the tip), clamped to the pad, so a grasp on the
    inner face beyond the pad (e.g. a mug's side at the fingertips) still loads the pad, as the PR2
    pad's pressure cells feel any normal load on the gripping surface. A normal along ``-z`` (no
    sensor there) falls back to the position rules.

    Position rules (``normal`` None): back (``y > back_m``) -> 0; tip face (``z > tip_face_m``) ->
    tip or corner (the outer ``corner_m``) by ``x``; sides (``|x| > side_m``) -> 1/6; otherwise the
    pad cell (points beyond the pad clamp to its first or last row).
    """
    return PadCells(pad).cell(x, y, z, normal)
