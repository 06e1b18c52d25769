"""What a collision check reports and what a motion may touch: :class:`Proximity` (one close pair,
with its message) and :class:`AllowedContacts` (pairs never checked, pairs relaxed), as
:meth:`~.world.CollisionWorld.checker` takes and :class:`~.state_checker.StateChecker` reports them.

Units: metres.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Proximity", "Collision", "AllowedContacts"]


@dataclass(frozen=True)
class Proximity:
    """One close pair between the planned robot (or its held object) and something else.

    Attributes:
        link: the robot link's name, or the held object's name when ``held``.
        body: the other body's name. body_link: its link's name (``"base"`` for the base).
        distance_m: signed distance, metres (negative: penetration).
        threshold_m: the distance this pair must keep (the padding, 0 for self-collision, less
            for a relaxed pair).
        held: the pair is the held object's.
        self_collision: both sides are links of the planned robot.
        key: ``(moving side, other body id, other link index)``, the key of :class:`AllowedContacts`.
    """

    link: str
    body: str
    body_link: str
    distance_m: float
    threshold_m: float
    held: bool = False
    self_collision: bool = False
    key: tuple = ()

    @property
    def violation_m(self) -> float:
        """How far the pair is inside its threshold, metres (positive: a collision)."""
        return self.threshold_m - self.distance_m

    def pair(self) -> str:
        """``"panda_leftfinger with table"`` (``"the held mug with shelf"``, a link of the other body
        named, ``"(self-collision)"``)."""
        who = f"the held {self.link}" if self.held else self.link
        other = self.body_link if self.self_collision else self.body
        if not self.self_collision and self.body_link not in ("base", self.body):
            other = f"{self.body} ({self.body_link})"
        return f"{who} with {other}" + (" (self-collision)" if self.self_collision else "")

    def numbers(self) -> str:
        """``"8 mm away, padding 10 mm"``, ``"penetrating by 3 mm, padding 10 mm"`` (self-collision:
        no padding; a relaxed pair: its own limit; a pair that may touch but not go deeper than a
        few millimetres: ``"penetrating by 6 mm, at most 5 mm into it allowed"``)."""
        depth = (f"penetrating by {-self.distance_m * 1000:.0f} mm" if self.distance_m < 0
                 else f"{self.distance_m * 1000:.0f} mm away")
        if self.self_collision:
            return depth
        if self.threshold_m < 0:  # a grasp target's body, or a pair that started inside another
            depth = f"penetrating by {-self.distance_m * 1000:.1f} mm"
            return f"{depth}, at most {-self.threshold_m * 1000:.0f} mm into it allowed"
        return f"{depth}, padding {self.threshold_m * 1000:.0f} mm"

    def fix(self) -> str:
        """How to change what refused it: the padding (``scene.motion_planning.padding_m``) or the
        contacts a motion allows (``allowed_contacts``); "" for a self-collision."""
        if self.self_collision:
            return ""
        if self.threshold_m < 0 and self.held:
            return (f"the held {self.link} may touch {self.body!r} but not go into it: it started touching it; move "
                    f"it clear first, or name the contact: allowed_contacts: [\"{self.link}:{self.body}\"]")
        if self.threshold_m < 0:
            return (f"the hand may touch {self.body!r} but not go into it: turn the grasp so that the open fingers "
                    "pass around it, or take it where it is narrower than the gripper's opening")
        return (f"the padding is scene.motion_planning.padding_m ({self.threshold_m * 1000:.0f} mm); a motion "
                f"may touch {self.body!r} with allowed_contacts: [{self.body}]")

    def describe(self, numbers: bool = True) -> str:
        """``"panda_link6 would hit shelf (8 mm away, padding 10 mm)"``, ``"the held box would hit
        table (...)"``, ``"panda_hand would hit panda_link2 (self-collision) (penetrating by 3 mm)"``."""
        who = f"the held {self.link}" if self.held else self.link
        other = self.body_link if self.self_collision else self.body
        if not self.self_collision and self.body_link not in ("base", self.body):
            other = f"{self.body} ({self.body_link})"
        text = f"{who} would hit {other}" + (" (self-collision)" if self.self_collision else "")
        return text + (f" ({self.numbers()})" if numbers else "")


Collision = Proximity  # a Proximity inside its threshold


@dataclass
class AllowedContacts:
    """Contacts a motion may make, for :meth:`CollisionWorld.checker`.

    Keys name the planned robot's side as ``("link", link index)`` or ``("held", -1)`` and the other
    side as a body id and a link index (``None``: any link of that body).

    Attributes:
        pairs: ``(moving side, other body id, other link or None)`` never checked.
        relaxed: ``(moving side, other body id, other link) -> threshold_m``: pairs that start closer
            than the padding and must not get closer than ``threshold_m``.
        reasons: one line per rule that allowed something (for logs).
    """

    pairs: set = field(default_factory=set)
    relaxed: dict = field(default_factory=dict)
    reasons: list = field(default_factory=list)

    def allows(self, key: tuple) -> bool:
        side, body, link = key
        return (side, body, None) in self.pairs or key in self.pairs

    def merge(self, other: "AllowedContacts") -> "AllowedContacts":
        out = AllowedContacts(set(self.pairs) | other.pairs, dict(self.relaxed), self.reasons + other.reasons)
        for k, v in other.relaxed.items():
            out.relaxed[k] = min(v, out.relaxed.get(k, v))
        return out
