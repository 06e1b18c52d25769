"""The run's verdict rests on the world (issue 33 item 5): a tree that succeeds while its target slid
in the hand more than SLID_IN_HAND_M from where it was gripped (metric object_slid_in_hand_m) fails."""

from py_trees_manipulation.trees.runner import SLID_IN_HAND_M, _place_outcome_failure


class _Backend:
    def __init__(self, **metrics):
        self._m = {"target_object": "can", "object_dropped": False, **metrics}

    def metrics(self):
        return dict(self._m)


def test_slide_beyond_the_tolerance_fails_with_how_much_and_where():
    b = _Backend(object_slid_in_hand_m=0.027,
                 object_slid_in_hand="0.027 m in the hand of panda at t = 9.31 s (-27 mm along the TCP's z)")
    why = _place_outcome_failure(b, None)
    assert why is not None
    assert "'can' slid in the hand: 0.027 m in the hand of panda at t = 9.31 s" in why
    assert f"more than {SLID_IN_HAND_M:g} m (metric object_slid_in_hand_m)" in why


def test_slide_within_the_tolerance_and_a_drop():
    assert SLID_IN_HAND_M == 0.015
    assert _place_outcome_failure(_Backend(object_slid_in_hand_m=0.002), None) is None
    assert _place_outcome_failure(_Backend(object_slid_in_hand_m=SLID_IN_HAND_M), None) is None
    dropped = _place_outcome_failure(_Backend(object_slid_in_hand_m=0.04, object_dropped=True), None)
    assert dropped is not None and "was dropped" in dropped
