"""The state checker: is an arm configuration clear in a :class:`~.world.CollisionWorld`? Its own
box broadphase, exact ``getClosestPoints`` on the few pairs left, PyBullet's contact pass for
self-collision, the held object; and the explanations (:meth:`StateChecker.explain`,
:meth:`StateChecker.proximities`, :meth:`StateChecker.clearance`). See :mod:`~.world` for what a
check covers and why it is fast.

Units: metres, radians.
"""

from __future__ import annotations

import math
from itertools import chain
from typing import Optional, Sequence

import numpy as np
import pybullet as pb

from .contacts import AllowedContacts, Proximity
from .work import WORK

__all__ = ["StateChecker"]

_SELF = 0.0  # self-collision threshold, metres (the padding applies to the environment only)
_CONFIRM_TOL = 1e-6
#: up to this many (moving link, obstacle) pairs the broadphase runs in Python, beyond it in NumPy
#: (a NumPy call costs microseconds, a Python box test a tenth of one)
_PY_BROADPHASE_PAIRS = 96
#: a box ``[lo, hi]`` times this is ``[lo, -hi]``
_LO_NEG_HI = np.array([1.0, 1.0, 1.0, -1.0, -1.0, -1.0])


class StateChecker:
    """Validity of ``robot``'s arm configurations in a :class:`~.world.CollisionWorld` (see its module docs).

    Made by :meth:`~.world.CollisionWorld.checker`; meant for one motion: the allowed contacts, the attached
    object and the obstacles' poses are those of the moment it is made. Not thread-safe: one thread
    uses a world at a time.

    Attributes:
        robot: the robot's name. padding_m: the environment clearance, metres.
        allowed: the motion's :class:`AllowedContacts`. checks: :meth:`is_valid` calls so far.
        lower, upper: the arm's joint limits, radians.
    """

    # (``world`` is a CollisionWorld, not imported here: the world imports this module to make its checkers)
    def __init__(self, world: "CollisionWorld", robot: str, allowed: AllowedContacts, padding_m: float):
        self.world = world
        self.robot = robot
        self.allowed = allowed
        self.padding_m = padding_m
        self.checks = 0
        rb = world._robots[robot]
        r = rb.loaded
        c = world.client
        self._rb = rb
        self._body = r.body
        self._client = c
        self._arm = list(r.arm_joints)
        self._tcp_link = r.tcp_link
        self._moving = rb.moving
        self._hand = rb.hand
        self.lower, self.upper = r.lower.copy(), r.upper.copy()
        self._held = world._attached.get(robot)
        # self-collision pairs in contact where a motion starts (AllowedContacts.relaxed): they may
        # stay (a compliant motion can end with two links' conservative hulls overlapping) but not
        # get deeper; keyed by the link pair in either order
        self._self_relaxed: dict[tuple[int, int], float] = {}
        for (side, b, other), thr in allowed.relaxed.items():
            if b == r.body and isinstance(side, tuple) and side[0] == "link":
                self._self_relaxed[(side[1], other)] = self._self_relaxed[(other, side[1])] = float(thr)
        self._held_body = self._held.body if self._held is not None else None
        # moving links with geometry: their world boxes (Bullet's AABBs) are read at each state
        self._mv = [j for j in sorted(rb.moving) if j in rb.collidable]

        # obstacles: every link of every other body, AABB cached now
        obstacles = []
        for body, links in world._links.items():
            if body in (r.body, self._held_body, world._probe):
                continue
            for link in links:
                if pb.getCollisionShapeData(body, link, physicsClientId=c):
                    lo, hi = pb.getAABB(body, link, physicsClientId=c)
                    obstacles.append((body, link, lo, hi))
        self._obs = [(b, link) for b, link, _, _ in obstacles]
        self._olo = np.array([o[2] for o in obstacles], dtype=float).reshape(-1, 3)
        self._ohi = np.array([o[3] for o in obstacles], dtype=float).reshape(-1, 3)
        # per (moving link, obstacle) threshold; -inf: allowed (never checked)
        thr = np.array([self._thresholds(("link", link)) for link in self._mv]).reshape(len(self._mv), len(obstacles))
        self._thr_list = thr.tolist()
        # obstacle boxes grown by each pair's threshold, (L, M, 3); empty (lo = +inf) where allowed
        finite = np.isfinite(thr)[:, :, None]
        grow = np.where(finite, thr[:, :, None], 0.0)
        env_lo = np.where(finite, self._olo[None] - grow, np.inf)
        env_hi = np.where(finite, self._ohi[None] + grow, -np.inf)
        # "near": a link box [lo, hi] overlaps a grown obstacle box, i.e. [lo, -hi] <= [env_hi, -env_lo]
        self._env_bound = np.concatenate([env_hi, -env_lo], axis=2)    # (L, M, 6)
        # few pairs: the same test in Python, per link only the obstacles it is checked against
        self._env_py = len(self._mv) * len(obstacles) <= _PY_BROADPHASE_PAIRS
        self._env_rows = [[(k, *env_lo[i, k].tolist(), *env_hi[i, k].tolist()) for k in range(len(obstacles))
                           if finite[i, k, 0]] for i in range(len(self._mv))]
        if self._held is not None:
            hthr = self._thresholds(("held", -1))
            self._held_thr = hthr
            # the held object against the robot's own moving links, hand excluded
            self._held_links = [(i, j) for i, j in enumerate(self._mv) if j not in rb.hand]
            self._held_link_thr = np.array([
                -np.inf if (t := self._threshold(("held", -1), r.body, j, False)) is None else t
                for _, j in self._held_links])

    def _thresholds(self, side: tuple) -> np.ndarray:
        """Shape (M,): the threshold of ``side`` against each obstacle (:meth:`_threshold`; -inf:
        allowed). The padding but for the obstacles of bodies the allowed contacts name."""
        row = np.full(len(self._obs), self.padding_m)
        al = self.allowed
        named = {k[1] for k in al.pairs} | {k[1] for k in al.relaxed}
        for k, (ob, ol) in enumerate(self._obs):
            if ob in named:
                t = self._threshold(side, ob, ol, False)
                row[k] = -np.inf if t is None else t
        return row

    def _link_boxes(self) -> list[tuple]:
        """Bullet's world AABB ``((lo), (hi))`` of each moving link with geometry, at the state the
        robot is in (read once per state, for every test of that state)."""
        c, body, aabb = self._client, self._body, pb.getAABB
        return [aabb(body, j, physicsClientId=c) for j in self._mv]

    def _near(self, boxes: list[tuple]) -> list[tuple[int, int]]:
        """``(moving link index, obstacle index)`` pairs whose boxes overlap, the obstacle's grown by
        the pair's threshold (the broadphase: only these get an exact distance)."""
        if self._env_py:
            out = []
            for i, ((l0, l1, l2), (h0, h1, h2)) in enumerate(boxes):
                for k, a0, a1, a2, b0, b1, b2 in self._env_rows[i]:
                    if l0 <= b0 and h0 >= a0 and l1 <= b1 and h1 >= a1 and l2 <= b2 and h2 >= a2:
                        out.append((i, k))
            return out
        lnh = np.fromiter(chain.from_iterable(chain.from_iterable(boxes)), float, count=6 * len(boxes))
        lnh = lnh.reshape(-1, 1, 6) * _LO_NEG_HI
        return np.argwhere((lnh <= self._env_bound).all(axis=2)).tolist()

    def _own_masks(self) -> None:
        """Collision filter groups so that ``performCollisionDetection`` sees this robot's links only
        (its checked self-collision pairs; everything else is tested by the box broadphase)."""
        c = self._client
        for body, links in self.world._links.items():
            for link in links:
                if body == self._body:
                    pb.setCollisionFilterGroupMask(body, link, 2, 2, physicsClientId=c)
                else:
                    pb.setCollisionFilterGroupMask(body, link, 1, 0, physicsClientId=c)
        self.world._mask_owner = self._body

    # ---- the check ---------------------------------------------------------------------------------
    def set_state(self, q: Sequence[float]) -> None:
        """Teleport the arm to ``q`` (radians) and the attached object with it."""
        WORK.state_checks += 1
        c = self._client
        values = q.tolist() if isinstance(q, np.ndarray) else q
        pb.resetJointStatesMultiDof(self._body, self._arm, [[float(v)] for v in values], physicsClientId=c)
        h = self._held
        if h is not None:
            ls = pb.getLinkState(self._body, self._tcp_link, computeForwardKinematics=True, physicsClientId=c)
            p, o = pb.multiplyTransforms(ls[4], ls[5], h.rel_pos, h.rel_orn, physicsClientId=c)
            pb.resetBasePositionAndOrientation(h.body, p, o, physicsClientId=c)

    def _threshold(self, side: tuple, body: int, link: int, self_collision: bool) -> Optional[float]:
        """The distance the pair ``(side, body, link)`` must keep, or None when it is allowed."""
        if self_collision:
            return min(_SELF, self._self_relaxed.get((side[1], link), _SELF))
        key = (side, body, link)
        if self.allowed.allows(key):
            return None
        return self.allowed.relaxed.get(key, self.padding_m)

    def _violations(self, q: Sequence[float], first: bool) -> list[tuple]:
        """``(side, other body, other link, self_collision, held, distance, threshold)`` of the pairs
        inside their threshold at ``q``; stops at the first with ``first``."""
        c = self._client
        body = self._body
        self.set_state(q)
        out: list[tuple] = []
        gcp = pb.getClosestPoints
        boxes = self._link_boxes()
        # environment: a link box overlaps an obstacle box grown by the pair's threshold
        for i, k in self._near(boxes):
            ob, ol = self._obs[k]
            thr = self._thr_list[i][k]
            pts = gcp(body, ob, thr, linkIndexA=self._mv[i], linkIndexB=ol, physicsClientId=c)
            if pts:
                d = min(p[8] for p in pts)
                if d < thr - _CONFIRM_TOL:
                    out.append((("link", self._mv[i]), ob, ol, False, False, d, thr))
                    if first:
                        return out
        # self-collision: PyBullet's contact pass sees only this robot's checked link pairs
        if self.world._mask_owner != body:
            self._own_masks()
        pb.performCollisionDetection(physicsClientId=c)
        for pt in pb.getContactPoints(bodyA=body, bodyB=body, physicsClientId=c):
            if pt[8] < _SELF - _CONFIRM_TOL:
                a, b = pt[3], pt[4]
                thr = min(_SELF, self._self_relaxed.get((a, b), _SELF))
                if pt[8] >= thr - _CONFIRM_TOL:
                    continue
                pts = gcp(body, body, 0.0, linkIndexA=a, linkIndexB=b, physicsClientId=c)
                d = min((x[8] for x in pts), default=0.0)
                if d < thr - _CONFIRM_TOL:
                    side_link, other = (a, b) if a in self._moving else (b, a)
                    out.append((("link", side_link), body, other, True, False, d, thr))
                    if first:
                        return out
        # the held object: its box (Bullet's, where set_state put it) against the obstacles' and the links'
        h = self._held
        if h is not None:
            hbox = pb.getAABB(h.body, -1, physicsClientId=c)
            hlo, hhi = np.asarray(hbox[0]), np.asarray(hbox[1])
            if len(self._obs):
                reach = self._held_thr[:, None]
                near = np.all((hlo <= self._ohi + reach) & (hhi >= self._olo - reach), axis=1)
                for k in np.nonzero(near)[0].tolist():
                    ob, ol = self._obs[k]
                    thr = float(self._held_thr[k])
                    pts = gcp(h.body, ob, thr, linkIndexA=-1, linkIndexB=ol, physicsClientId=c)
                    if pts:
                        d = min(x[8] for x in pts)
                        if d < thr - _CONFIRM_TOL:
                            out.append((("held", -1), ob, ol, False, True, d, thr))
                            if first:
                                return out
            (a0, a1, a2), (b0, b1, b2) = hbox
            # the link's box against the held object's grown by the pair's threshold, in Python floats
            # (two numpy tests a link cost 10 us a state)
            for (i, j), thr in zip(self._held_links, self._held_link_thr.tolist()):
                (l0, l1, l2), (h0, h1, h2) = boxes[i]
                if (thr == -math.inf or l0 > b0 + thr or l1 > b1 + thr or l2 > b2 + thr
                        or h0 < a0 - thr or h1 < a1 - thr or h2 < a2 - thr):
                    continue
                pts = gcp(h.body, body, thr, linkIndexA=-1, linkIndexB=j, physicsClientId=c)
                if pts:
                    d = min(x[8] for x in pts)
                    if d < thr - _CONFIRM_TOL:
                        out.append((("held", -1), body, j, False, True, d, thr))
                        if first:
                            return out
        return out

    def is_valid(self, q: Sequence[float]) -> bool:
        """True when ``q`` (radians, arm joint order) keeps every checked pair at its threshold."""
        self.checks += 1
        if self._held is not None or self._self_relaxed:
            return not self._violations(q, first=True)
        # the same test as _violations, inlined for speed (the planner calls this ~1,000 times a plan)
        c = self._client
        body = self._body
        pb.resetJointStatesMultiDof(body, self._arm, [[float(v)] for v in q], physicsClientId=c)
        if self.world._mask_owner != body:
            self._own_masks()
        pb.performCollisionDetection(physicsClientId=c)
        for pt in pb.getContactPoints(bodyA=body, bodyB=body, physicsClientId=c):
            if pt[8] < -_CONFIRM_TOL:
                pts = pb.getClosestPoints(body, body, 0.0, linkIndexA=pt[3], linkIndexB=pt[4], physicsClientId=c)
                if min((x[8] for x in pts), default=0.0) < -_CONFIRM_TOL:
                    return False
        if not self._obs:
            return True
        near = self._near(self._link_boxes())
        if not near:
            return True
        gcp = pb.getClosestPoints
        obs, thr_list, mv = self._obs, self._thr_list, self._mv
        for i, k in near:
            ob, ol = obs[k]
            thr = thr_list[i][k]
            pts = gcp(body, ob, thr, linkIndexA=mv[i], linkIndexB=ol, physicsClientId=c)
            if pts and min(p[8] for p in pts) < thr - _CONFIRM_TOL:
                return False
        return True

    __call__ = is_valid

    def _classify(self, a: int, la: int, b: int, lb: int) -> Optional[tuple[tuple, int, int, bool, bool]]:
        """``(moving side, other body, other link, self_collision, held)`` for a pair of
        ``getClosestPoints``, None when it involves neither the moving links nor the held object."""
        rb, held = self._body, self._held_body
        a_moving = (a == rb and la in self._moving) or a == held
        b_moving = (b == rb and lb in self._moving) or b == held
        if not a_moving and not b_moving:
            return None
        if a == rb and b == rb:  # self-collision (the robot's fixed base included)
            return (("link", la), b, lb, True, False) if a_moving else (("link", lb), a, la, True, False)
        if a_moving and b_moving:
            # held object against one of the robot's moving links: the hand holding it never counts
            rlink = la if a == rb else lb
            if rlink in self._hand:
                return None
            return (("held", -1), rb, rlink, False, True)
        if a_moving:
            side = ("held", -1) if a == held else ("link", la)
            return (side, b, lb, False, a == held)
        side = ("held", -1) if b == held else ("link", lb)
        return (side, a, la, False, b == held)

    # ---- explanations and clearance --------------------------------------------------------------------
    def proximities(self, q: Optional[Sequence[float]] = None, max_distance: float = 0.05,
                    include_allowed: bool = False) -> list[Proximity]:
        """Every pair of the planned robot's moving links (or its held object) and another body within
        ``max_distance`` (m), closest first, exact distances (``getClosestPoints``); self-collision
        pairs are not listed (see :meth:`explain`).

        Only the bodies with a link whose box (Bullet's AABB, now) comes within ``max_distance`` of
        the box round the moving links and the held object are measured: no other can be that near.

        Args:
            q: arm joints to evaluate at (radians); default: where the arm is in the world now.
            include_allowed: also list the pairs the motion allows (their threshold is then -inf).
        """
        c = self._client
        w = self.world
        if q is not None:
            self.set_state(q)
        best: dict[tuple, Proximity] = {}
        held = self._held_body
        boxes = self._link_boxes() + ([pb.getAABB(held, -1, physicsClientId=c)] if held is not None else [])
        ulo = [min(b[0][a] for b in boxes) - max_distance for a in range(3)] if boxes else None
        uhi = [max(b[1][a] for b in boxes) + max_distance for a in range(3)] if boxes else None
        aabb = pb.getAABB

        def near(body: int) -> bool:
            if ulo is None or body == self._body:
                return True
            for link in w._links[body]:
                lo, hi = aabb(body, link, physicsClientId=c)
                if (lo[0] <= uhi[0] and lo[1] <= uhi[1] and lo[2] <= uhi[2]
                        and hi[0] >= ulo[0] and hi[1] >= ulo[1] and hi[2] >= ulo[2]):
                    return True
            return False

        candidates = [b for b in w._links if b != w._probe and near(b)]
        for src in ([self._body] if held is None else [self._body, held]):
            for body in candidates:
                if body == src or (src == self._body and body == held):
                    continue
                for pt in pb.getClosestPoints(src, body, max_distance, physicsClientId=c):
                    cls = self._classify(pt[1], pt[3], pt[2], pt[4])
                    if cls is None or cls[3]:
                        continue
                    side, ob, ol, _, is_held = cls
                    thr = self._threshold(side, ob, ol, False)
                    if thr is None and not include_allowed:
                        continue
                    name = w.names[held] if side[0] == "held" else w.link_name(self._body, side[1])
                    prox = Proximity(link=name, body=w.names.get(ob, str(ob)), body_link=w.link_name(ob, ol),
                                     distance_m=float(pt[8]), threshold_m=-math.inf if thr is None else thr,
                                     held=is_held, key=(side, ob, ol))
                    k = (side, ob, ol)
                    if k not in best or prox.distance_m < best[k].distance_m:
                        best[k] = prox
        return sorted(best.values(), key=lambda p: p.distance_m)

    def self_collisions(self, q: Sequence[float]) -> list[Proximity]:
        """The planned robot's link pairs that overlap at ``q`` (radians), deepest first (what
        :meth:`proximities` leaves out); a pair relaxed at the start reports its own threshold."""
        w = self.world
        out = [Proximity(link=w.link_name(self._body, side[1]), body=w.names.get(ob, str(ob)),
                         body_link=w.link_name(ob, ol), distance_m=float(d), threshold_m=float(thr), held=False,
                         self_collision=True, key=(side, ob, ol))
               for side, ob, ol, self_col, _, d, thr in self._violations(q, first=False) if self_col]
        return sorted(out, key=lambda p: p.distance_m)

    def explain(self, q: Sequence[float]) -> Optional[Proximity]:
        """The worst pair inside its threshold at ``q`` (largest violation), or None when ``q`` is valid."""
        w = self.world
        worst: Optional[Proximity] = None
        for side, ob, ol, self_col, held, d, thr in self._violations(q, first=False):
            if side[0] == "held":
                name = w.names[self._held_body]
            else:
                name = w.link_name(self._body, side[1])
            prox = Proximity(link=name, body=w.names.get(ob, str(ob)), body_link=w.link_name(ob, ol),
                             distance_m=float(d), threshold_m=float(thr), held=held, self_collision=self_col,
                             key=(side, ob, ol))
            if worst is None or prox.violation_m > worst.violation_m:
                worst = prox
        return worst

    def clearance(self, q: Sequence[float], max_distance: float = 0.25) -> Optional[Proximity]:
        """The closest checked pair within ``max_distance`` (m) at ``q``, or None; allowed pairs,
        relaxed pairs (in contact from the start) and self-collision pairs do not count."""
        for p in self.proximities(q, max_distance):
            if not p.self_collision and p.key not in self.allowed.relaxed:
                return p
        return None

    def within_limits(self, q: Sequence[float], tol: float = 1e-6) -> Optional[int]:
        """Index of the first joint of ``q`` outside the limits, or None."""
        qa = np.asarray(q, dtype=float)
        bad = np.nonzero((qa < self.lower - tol) | (qa > self.upper + tol))[0]
        return int(bad[0]) if len(bad) else None
