"""Parameter declarations: units, ranges, choices, blackboard references."""

import math

import numpy as np
import pytest

from py_trees_manipulation.behaviors.params import BlackboardRef, Param, ParamError


def test_length_in_centimetres_becomes_metres():
    assert Param("float", unit="m").coerce("10 cm") == pytest.approx(0.10)
    assert Param("float", unit="m").coerce("25mm") == pytest.approx(0.025)


def test_angle_in_radians_becomes_degrees():
    assert Param("float", unit="deg").coerce(f"{math.pi / 2} rad") == pytest.approx(90.0)


def test_unit_of_another_dimension_is_refused():
    with pytest.raises(ParamError, match=r"unit 'N' \(force\) does not fit this parameter \(length, in m\)"):
        Param("float", unit="m").coerce("3 N")


def test_plain_number_parameter_refuses_a_unit():
    with pytest.raises(ParamError, match="takes a plain number"):
        Param("float").coerce("3 m")


def test_range_is_checked_in_the_parameter_unit():
    p = Param("float", unit="m", min=0.0, max=0.2)
    with pytest.raises(ParamError, match=r"0.3 m is above the maximum 0.2 m"):
        p.coerce("30 cm")


def test_blackboard_reference():
    assert Param("pose").coerce("{mug_pose}") == BlackboardRef("mug_pose")
    with pytest.raises(ParamError, match="cannot come from the blackboard"):
        Param("int", blackboard=False).coerce("{n}")


def test_pose_forms_agree():
    p = Param("pose")
    a = p.coerce({"position": [1, 2, 3], "rpy_deg": [0, 0, 90]})
    b = p.coerce({"position": [1, 2, 3], "orientation": [math.cos(math.pi / 4), 0, 0, math.sin(math.pi / 4)]})
    np.testing.assert_allclose(a, b, atol=1e-12)


def test_bool_is_not_a_number():
    with pytest.raises(ParamError):
        Param("float").coerce(True)
    with pytest.raises(ParamError):
        Param("int").coerce(2.5)
