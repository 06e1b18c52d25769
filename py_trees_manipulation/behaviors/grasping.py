"""Grasp choice: ``ChooseGrasp`` picks a grasp from the object's own grasp set at its current pose.

An object carries its grasps in its own frame (HPP handles: ``scene.objects[].grasps``, or the
shape's defaults, :mod:`py_trees_manipulation.geometry.grasps`), so a grasp follows the object
whatever its yaw or the face it lies on. ``ChooseGrasp`` puts them at the object's pose, checks each
in the backend's collision world (finger opening, IK, collisions at the pregrasp and the grasp, the
approach line; optionally the place pose it will be put down at) and writes the best one (least
joint motion) to the blackboard::

    - GetObjectPose: {object: mug, output_key: object_pose}
    - ChooseGrasp: {object: mug, object_pose: "{object_pose}", max_approach_angle_deg: 45}
    - MoveToPose: {name: pregrasp, target: "{pregrasp_pose}"}
    - MoveCartesian: {name: descend, target: "{grasp_pose}", speed_mps: 0.08}
    - GripperCommand: {name: close, position: 0.0, expect_object: true}
    # ... and to put it down as it was grasped (TCP = place_pose @ object_grasp):
    - MoveToPose: {name: above_place, target: "{place_pose}", offset: "{object_grasp}", world_offset: [0, 0, 0.12]}

It works wherever the backend has a collision world: the simulator, and the hardware backend when
the task file has a scene (``backend.motion_planning``, :class:`~py_trees_manipulation.backend.PlanningService`).
The evaluation itself is :func:`py_trees_manipulation.collision.grasp_choice.choose_grasp`.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np
import py_trees
from py_trees.common import Status

from ..backend import BackendError, planning_service, resolve_resource
from ..msgs.actions import GoalHandle, GoalStatus
from .base import BehaviourSetupError, ManipulationBehaviour
from .params import REQUIRED, BlackboardRef, Param


def _scene_object(scene: Any, name: str) -> Any:
    for o in getattr(scene, "objects", ()):
        if o.name == name:
            return o
    names = [o.name for o in getattr(scene, "objects", ())]
    raise KeyError(f"no object named {name!r} in the scene; it has {', '.join(names) or 'no objects'}")


def _grasp_names(value: Any) -> Optional[list[str]]:
    """``grasps`` as a list of names, or None for every grasp (``all`` or null)."""
    if value is None or value == "all":
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"grasps must be 'all' or a list of grasp or handle names (e.g. ['mug/top']), got {value!r}")
    return list(value)


def object_grasp_set(scene: Any, obj: str, names: Optional[list[str]] = None) -> list[Any]:
    """The grasps of scene object ``obj`` (declared, else the defaults), restricted to ``names``.

    Raises:
        KeyError: no such object. ValueError: the object has no grasps
            (:class:`~py_trees_manipulation.geometry.grasps.NoGraspsError`), or a name it has not.
    """
    from ..geometry.grasps import object_grasps, select_grasps

    spec = _scene_object(scene, obj)
    index = [o.name for o in scene.objects].index(obj)
    grasps = object_grasps(spec, where=f"scene.objects[{index}]")
    return select_grasps(grasps, names, obj) if names else grasps


def _describe_choice(choice: Any) -> str:
    c = choice.chosen
    return f"{c.grasp.name}: joint distance {c.joint_distance_rad:.2f} rad ({choice.summary()})"


def grip_force_key(origins: Optional[dict[str, Any]], given: bool) -> Callable[[int], str]:
    """How a user sets ChooseGrasp's grip to ``n`` newtons (issue 33, D): the included file's
    parameter that gives ``grip_force_n`` and where (``origins``: the node's ``param_origins``), or
    the node's own ``grip_force_n`` (``given``: the file writes it; else it is added, and the closing
    ``GripperCommand``'s ``max_effort`` must match)."""
    origin = (origins or {}).get("grip_force_n")

    def text(n: int) -> str:
        if origin is not None:
            return origin.fix(n)
        if given:
            return f"set grip_force_n: {n}"
        return f"set ChooseGrasp's grip_force_n: {n} and the closing GripperCommand's max_effort: {n}"

    return text


class ChooseGrasp(ManipulationBehaviour):
    """Choose a grasp of an object from its grasp set, checked in the backend's collision world.

    An object heavier than the arm's rated payload minus its gripper (robot description
    ``payload_kg``, ``gripper.mass_kg``; a scene's ``robots[].payload_kg`` overrides the rating) is
    refused at ``ptm validate`` (a literal object) or before the arm moves, with both numbers.
    With ``place_pose``, the place is checked first (:func:`~py_trees_manipulation.collision.placement.check_place`):
    a support under the object there and room for it; a place that is taken ("'coaster' is in the
    way") or has nothing under it fails before the arm moves, with the nearest free spot on the same
    support. The candidates are the object's grasps (``scene.objects[].grasps``, or the defaults of its shape:
    box faces, cylinder, sphere, the shipped mug with its handle avoided), at ``object_pose``. Each
    is checked, cheapest first: the approach within ``max_approach_angle_deg`` of straight down; its
    width plus ``width_margin_m`` within the gripper's opening (robot description); IK and no
    collision at the pregrasp; IK at the grasp, where the open fingers may come to the object but not
    into it; with ``place_pose``, IK and no collision above and at the place with the object held
    as grasped. The feasible ones are ranked by joint distance from the current configuration; the
    first whose straight approach line is clear is chosen.

    After the check before the run (``ptm run --plan-first``) it takes the choice the check made for
    it while the world is the one it was made in
    (:meth:`~py_trees_manipulation.collision.kept_plans.KeptPlans.take_choice`: the same grasp, its
    poses at the object's pose read now), else it evaluates the grasps again.

    RUNNING while the backend checks them (one tick in the simulator, whose clock stands still
    while it computes), then SUCCESS with the choice on the blackboard; FAILURE listing why the candidates were rejected, grouped ("6 candidates: 2 too
    wide for the 80 mm opening (+5 mm margin), 4 collide at the grasp: panda_leftfinger with mug"),
    or when the object is unknown, has no grasps (a URDF without defaults: declare ``grasps:``) or
    ``grasps`` names one it has not.

    Blackboard (the keys are parameters):
        reads ``object_pose`` (and ``place_pose``) when given as ``"{key}"``;
        writes ``grasp_pose_key`` (the TCP grasp pose, (4, 4), world), ``pregrasp_pose_key`` (the
        pregrasp: backed off ``approach_m`` along the approach, (4, 4), world), ``object_grasp_key``
        (the grasp in the object frame, (4, 4): put the object down as grasped with
        ``MoveToPose {target: "{place_pose}", offset: "{object_grasp}"}``), ``width_key`` (the
        object's width between the fingers, m; NaN when a declared grasp does not say),
        ``grasp_name_key`` (``mug/top/30``) and ``choice_key`` (the
        :class:`~py_trees_manipulation.collision.grasp_choice.GraspChoice`, every candidate and why);
        the summary metric ``chosen_grasp``.

    Example:
        .. code-block:: yaml

            - ChooseGrasp: {object: mug, object_pose: "{object_pose}", place_pose: "{place_pose}"}
    """

    ABSTRACT = False
    NEEDS_COLLISION_WORLD = True
    PARAMS = {
        "object": Param("str", REQUIRED, "the object's name in the scene (its grasp set and its body)",
                        refers_to="object"),
        "object_pose": Param("pose", REQUIRED, "the object's pose now, e.g. '{object_pose}' from GetObjectPose",
                             frame="world"),
        "grasps": Param("any", "all", "'all', or only these grasps or handles of the object (['mug/top'], "
                        "['top/30'])", blackboard=False),
        "max_approach_angle_deg": Param("float", 180.0, "largest angle between the approach direction and "
                                        "straight down (45: from above)", unit="deg", min=0.0, max=180.0),
        "width_margin_m": Param("float", 0.005, "clearance the open fingers need beyond the object's width",
                                unit="m", min=0.0, max=0.1),
        "approach_m": Param("float", None, "pregrasp stand-off along the approach (default: each grasp's own)",
                            unit="m", min=0.0, max=0.5),
        "place_pose": Param("pose", "none", "where the object will be put down as grasped (object pose, world), or "
                            "'none'; the grasp must reach it too", frame="world", names=("none",)),
        "place_approach_m": Param("float", 0.10, "height above the place pose the carry arrives at", unit="m",
                                  min=0.0, max=0.5),
        "grip_force_n": Param("float", None, "the force each finger will squeeze with (the closing GripperCommand's "
                              "max_effort; null: the gripper's default force): a grip that cannot hold the object "
                              "by friction (m g / (2 mu) per pad) is refused before the arm moves", unit="N",
                              min=-1.0, max=10000.0),
        "lift_m": Param("float", None, "the straight lift after the grasp, the object held (null or 0: not checked): "
                        "the grasp must lift it clear too, planned as the lift's MoveCartesian plans it", unit="m",
                        min=0.0, max=1.0),
        "arm": Param("str", None, "name of the arm (default: the scene's first arm)", blackboard=False,
                     refers_to="robot"),
        "suggest_base": Param("bool", True, "when no grasp is feasible because the object (or the place) is out "
                              "of reach, search a base pose from which a grasp reaches it (and puts it down)",
                              blackboard=False),
        "grasp_pose_key": Param("key", "grasp_pose", "blackboard key for the chosen TCP grasp pose (4x4, world)"),
        "pregrasp_pose_key": Param("key", "pregrasp_pose", "blackboard key for the pregrasp pose (4x4, world)"),
        "object_grasp_key": Param("key", "object_grasp", "blackboard key for the grasp in the object frame (4x4)"),
        "width_key": Param("key", "grasp_width", "blackboard key for the object's width between the fingers, m"),
        "grasp_name_key": Param("key", None, "blackboard key for the chosen grasp's name"),
        "choice_key": Param("key", None, "blackboard key for the whole choice (every candidate and why)"),
    }

    def __init__(self, name: Optional[str] = None, **params: Any):
        super().__init__(name=name, **params)
        self._handle: Optional[GoalHandle] = None
        self._error: Optional[str] = None
        self._robot = ""

    @classmethod
    def scene_problems(cls, params: dict[str, Any], scene: Any,
                       origins: Optional[dict[str, Any]] = None) -> list[tuple[str, str, str]]:
        """Load-time checks against the scene: ``(parameter, problem, hint)`` for an object without
        grasps or a ``grasps`` name the object has not (literal values only), an object heavier than
        the arm's payload, a grip that cannot hold it (naming the key that sets the grip:
        ``origins``, the node's :attr:`~py_trees_manipulation.trees.spec.NodeSpec.param_origins`)."""
        from ..geometry.grasps import NoGraspsError

        obj = params.get("object")
        if not isinstance(obj, str) or obj not in [o.name for o in scene.objects]:
            return []  # an unknown object is reported by the refers_to check
        try:
            names = _grasp_names(params.get("grasps"))
            object_grasp_set(scene, obj, names)
        except ValueError as e:
            key = "object" if isinstance(e, NoGraspsError) else "grasps"
            return [(key, f"{cls.__name__}.{key}: {e}", "")]
        from ..scene.spec import crush_problem, grip_problem, payload_problem

        arm = params.get("arm")
        heavy = payload_problem(scene, obj, arm if isinstance(arm, str) else None)
        if heavy:
            return [("object", f"{cls.__name__}.object: {heavy}", "")]
        force = params.get("grip_force_n")
        if force is None or isinstance(force, (int, float)):
            weak = grip_problem(scene, obj, arm if isinstance(arm, str) else None, force,
                                set_force=grip_force_key(origins, force is not None))
            if weak:
                return [("grip_force_n" if force is not None else "object", f"{cls.__name__}: {weak}", "")]
        crush = crush_problem(scene, obj, arm if isinstance(arm, str) else None)
        if crush and (force is None or (isinstance(force, (int, float)) and force < 0)):
            return [("object", f"{cls.__name__}: {crush}", "")]
        return []

    @classmethod
    def plan_problems(cls, params: dict[str, Any], world: Any, scene: Any, seed: int = 0,
                      blackboard: Optional[dict] = None, outputs: Optional[dict] = None,
                      task_check: Any = None, kept: Any = None) -> list[tuple[str, str, str]]:
        """``ptm validate --plan``: the grasp choice against the scene as written (the object where the
        file puts it, the place pose when the file gives it, literally or as a blackboard value known
        ahead), in the collision world built from the task file, the arm where the dry run leaves it:
        ``(parameter, problem, hint)`` when no grasp is feasible, with the base that would do it. With
        ``outputs``, the values the node would write go there by their parameter (``grasp_pose_key``:
        the chosen grasp pose, ...), as :meth:`update` writes them. ``task_check``: the whole-task
        test the suggested base must pass (:func:`~py_trees_manipulation.trees.plan_check.whole_task_test`;
        False: no suggestion). ``kept``: ``(KeptPlans, node key)`` of a check before the run: the choice
        is kept there for the run's node to take (:meth:`~py_trees_manipulation.collision.kept_plans.KeptPlans.take_choice`)."""
        from ..collision.grasp_choice import choose_grasp

        decl = cls.all_params()
        values: dict[str, Any] = {}
        for key, p in decl.items():
            v = params.get(key, p.default)
            if isinstance(v, BlackboardRef):
                known = (blackboard or {}).get(v.key.lstrip("/"), (blackboard or {}).get(v.key))
                if known is None:
                    v = None if key != "place_pose" else "none"
                else:
                    try:
                        v = p.coerce(known)
                    except Exception:
                        v = None if key != "place_pose" else "none"
            values[key] = v
        obj = values.get("object")
        robots = [r.name for r in getattr(scene, "robots", ())]
        robot = values.get("arm") or (robots[0] if robots else None)
        if not isinstance(obj, str) or obj not in getattr(world, "bodies", {}) or robot not in robots:
            return []
        try:
            grasps = object_grasp_set(scene, obj, _grasp_names(values.get("grasps")))
        except (KeyError, ValueError):
            return []   # said by the load-time checks
        place = values.get("place_pose")
        places = [] if isinstance(place, str) or place is None else [np.array(place, dtype=float)]
        pose = world.object_pose(obj)
        kw = {k: values[k] for k in ("width_margin_m", "max_approach_angle_deg", "approach_m", "place_approach_m",
                                     "lift_m") if values.get(k) is not None}
        choice = choose_grasp(world, robot, obj, pose, grasps, place_poses=places, **kw)
        if choice.chosen is not None:
            c = choice.chosen
            if kept is not None:
                kept[0].keep_choice(kept[1], robot, obj, grasps, dict(kw, place_poses=places), choice, world)
            if outputs is not None:
                outputs.update(grasp_pose_key=c.grasp_pose, pregrasp_pose_key=c.pregrasp_pose,
                               object_grasp_key=np.array(c.grasp.pose), width_key=float(c.grasp.width_m),
                               grasp_name_key=c.grasp.name)
            return []
        text = f"ChooseGrasp: no feasible grasp of {obj}: {choice.summary()}" + _in_the_object(choice, obj)
        if (values.get("suggest_base", True) and task_check is not False
                and _base_may_help(choice, obj)):
            from .reach import base_suggestion

            opening = float(world.robots[robot].model.max_gap_m)
            placement = _base_for_grasp(world, scene, robot, obj, pose, places, seed,
                                        _considered(grasps, pose, kw, opening), task_check)
            if placement is not None:
                what = "a grasp reaches it" + (" and puts it down" if places else "")
                text += "; " + base_suggestion(placement, robots.index(robot), what)
        return [("", text, "")]

    def setup(self, **kwargs: Any) -> None:
        """Resolve the arm; check the backend has a collision world (refused before the run otherwise).

        Raises:
            BehaviourSetupError: no such arm, or a backend without a planning service (a hardware
                run without the task's scene).
        """
        super().setup(**kwargs)
        if self.backend is None:
            return
        try:
            self._robot = resolve_resource(getattr(self.backend, "arms", {}), self.params.get("arm"), "arm").name
        except BackendError as e:
            raise BehaviourSetupError(f"{self.name}: {e}") from None
        if planning_service(self.backend) is None:
            raise BehaviourSetupError(
                f"{self.name}: ChooseGrasp needs the backend's collision world: the simulator, or the hardware "
                "backend with the task file's scene (robots named like the robot file's arms)")
        # the grasp set of a literal object and grasp list, built once here rather than in the tick
        # (the mug's 14 grasps: about 0.6 ms); a "{key}" object or grasp list is read at each activation
        self._grasp_set: Optional[tuple[Any, Any, list[Any]]] = None
        obj, names = self.params.get("object"), self.params.get("grasps")
        if not isinstance(obj, BlackboardRef) and not isinstance(names, BlackboardRef):
            try:
                self._grasp_set = (obj, names, object_grasp_set(planning_service(self.backend).scene, obj,
                                                                _grasp_names(names)))
            except (KeyError, ValueError):
                pass  # said when it runs, as with a "{key}" object

    def initialise(self) -> None:
        self._handle = None
        self._error = None
        if self.backend is None:
            self._error = "not set up with a backend (call tree.setup(backend=...))"
            return
        svc = planning_service(self.backend)
        obj = self.param("object")
        try:
            object_pose = np.array(self.param("object_pose"), dtype=float)
            place = self.param("place_pose")
            places = [] if isinstance(place, str) or place is None else [np.array(place, dtype=float)]
            names = self.params.get("grasps")
            cached = getattr(self, "_grasp_set", None)
            if cached is not None and cached[0] == obj and cached[1] == names:
                grasps = cached[2]
            else:
                grasps = object_grasp_set(svc.scene, obj, _grasp_names(names))
        except (KeyError, ValueError) as e:
            self._error = str(e.args[0]) if isinstance(e, KeyError) and e.args else str(e)
            return
        robot = self._robot
        from ..scene.spec import payload_problem

        heavy = payload_problem(svc.scene, obj, robot) if getattr(svc, "scene", None) is not None else None
        if heavy:  # a "{key}" object: the same refusal as ptm validate's, before the arm moves
            self._error = heavy
            return
        from ..scene.spec import grip_problem

        spec = getattr(self, "spec", None)
        weak = grip_problem(svc.scene, obj, robot, self.param("grip_force_n"),
                            set_force=grip_force_key(getattr(spec, "param_origins", None),
                                                     "grip_force_n" in getattr(spec, "params", {}))) \
            if getattr(svc, "scene", None) is not None else None
        if weak:  # the same refusal as ptm validate's, before the arm moves
            self._error = weak
            return
        kw = dict(width_margin_m=self.param("width_margin_m"), max_approach_angle_deg=self.param("max_approach_angle_deg"),
                  approach_m=self.param("approach_m"), place_poses=places,
                  place_approach_m=self.param("place_approach_m"), lift_m=self.param("lift_m"))

        task_check = getattr(self.backend, "task_check", None)
        suggest = bool(self.param("suggest_base")) and task_check is not False
        scene = svc.scene
        seed = int(getattr(self.backend, "seed", 0) or 0)
        from .motion import plan_key

        key = plan_key(self)

        def query(world: Any, cancelled: Any) -> Any:
            from ..collision.grasp_choice import choose_grasp

            if places:  # a place that is taken or unsupported: no grasp can make it right
                from ..collision.placement import check_place

                for place in places:
                    verdict = check_place(world, obj, place)
                    if not verdict.ok:
                        return None, verdict.message(obj, place[:3, 3]), None, None
            kept = getattr(world, "kept_plans", None)   # the check before the run chose it: take that choice
            choice, note = kept.take_choice(key, robot, obj, object_pose, grasps, kw, world) if kept is not None \
                else (None, "")
            from_check = choice is not None
            if choice is None:
                choice = choose_grasp(world, robot, obj, object_pose, grasps, cancelled=cancelled, **kw)
            placement = None
            if suggest and choice.chosen is None and _base_may_help(choice, obj):
                considered = _considered(grasps, object_pose, kw, float(world.robots[robot].model.max_gap_m))
                placement = _base_for_grasp(world, scene, robot, obj, object_pose, places, seed, considered,
                                            task_check)
            # the one-line summary and the run log's record, formatted here on the planning worker
            # rather than in the tick that reads the answer
            record = choice.as_dict()
            if from_check:
                record["from_check"] = True
            elif note:
                record["note"] = note
            return choice, choice.summary(), record, placement

        self.feedback_message = f"checking {len(grasps)} grasps of {obj}"
        self._handle = svc.query(query, label=f"grasp choice for {obj}")

    def update(self) -> Status:
        if self._error is not None:
            return self.fail(self._error)
        h = self._handle
        assert h is not None
        if not h.done:
            return Status.RUNNING
        if h.status != GoalStatus.SUCCEEDED:
            return self.fail(f"grasp choice failed: {h.text or h.status.name}")
        choice, summary, record, placement = h.result
        if choice is None:  # the place pose was refused before any grasp was tried
            return self.fail(summary)
        self.write_output("choice_key", choice)
        self._event(choice, summary, record)
        obj = self.param("object")
        if choice.chosen is None:
            text = f"no feasible grasp of {obj}: {summary}" + _in_the_object(choice, obj)
            if placement is not None:
                from .reach import base_suggestion

                robots = list(getattr(self.backend, "arms", {}))
                what = "a grasp reaches it" + (" and puts it down" if choice.place_count else "")
                text += "; " + base_suggestion(placement, robots.index(self._robot) if self._robot in robots else 0,
                                               what)
            return self.fail(text)
        c = choice.chosen
        self.write_output("grasp_pose_key", c.grasp_pose)
        self.write_output("pregrasp_pose_key", c.pregrasp_pose)
        self.write_output("object_grasp_key", np.array(c.grasp.pose))
        self.write_output("width_key", float(c.grasp.width_m))
        self.write_output("grasp_name_key", c.grasp.name)
        py_trees.blackboard.Blackboard.set("/metrics/chosen_grasp", c.grasp.name)  # the summary's metrics
        self.defer_feedback_message(_describe_choice, choice)
        return Status.SUCCESS

    def terminate(self, new_status: Status) -> None:
        if new_status == Status.INVALID and self._handle is not None and not self._handle.done:
            self._handle.cancel()

    def _event(self, choice: Any, summary: str, record: dict[str, Any]) -> None:
        emit = getattr(self.backend, "emit_event", None)
        if callable(emit):
            text = (f"{self.name}: {choice.chosen.grasp.name} for {choice.object}" if choice.chosen
                    else f"{self.name}: no feasible grasp of {choice.object}") + f" ({summary})"
            if record.get("from_check"):
                text += "; the choice of the check before the run"
            elif record.get("note"):
                text += f"; {record['note']}"
            emit(f"grasp/{choice.robot}", text, grasp_choice=record)


#: rejections a base elsewhere may cure (the arm's reach, or the arm in the way of the scene where it
#: stands): a grasp too wide or from a forbidden direction is refused from every base
SUGGEST_FOR = ("unreachable", "place", "pregrasp_collision", "grasp_collision", "closing", "approach_line", "lift")


def _meets_the_object(c: Any, obj: str) -> bool:
    """The candidate's hand meets the grasped object itself at its grasp or pregrasp: where the
    fingers are around the object is the same from any base."""
    return (c.rejection in ("pregrasp_collision", "grasp_collision")
            and str(c.detail or "").endswith(f" with {obj}"))


def _base_may_help(choice: Any, obj: str) -> bool:
    """A base search can find a grasp: some candidate was refused for something a base changes
    (:data:`SUGGEST_FOR`), not only for the hand meeting the object itself (a new user's declared
    grasps turned 90 deg: a 30 s search of 51 bases that could not help)."""
    return any(c.rejection in SUGGEST_FOR and not _meets_the_object(c, obj) for c in choice.candidates)


def _in_the_object(choice: Any, obj: str) -> str:
    """The fix when every candidate a base could change meets the object itself; "" otherwise."""
    if not any(_meets_the_object(c, obj) for c in choice.candidates) or _base_may_help(choice, obj):
        return ""
    return (f"; no base pose changes this: at every grasp the hand meets {obj!r} itself, where it closes around "
            f"it (the same from any base): the grasps do not fit its shape (their poses or width_m: the fingers "
            "must close across a side narrower than their opening)")


def _considered(grasps: list, object_pose: Any, kw: dict, opening_m: float) -> list:
    """The grasps of ``grasps`` that no base can rule out: within ChooseGrasp's approach limit
    (``kw["max_approach_angle_deg"]``, from straight down, the object at ``object_pose``) and, with the
    margin, within the gripper's opening ``opening_m`` (the same from every base)."""
    import math

    limit = float(kw.get("max_approach_angle_deg") if kw.get("max_approach_angle_deg") is not None else 180.0)
    margin = float(kw.get("width_margin_m") if kw.get("width_margin_m") is not None else 0.005)
    out = []
    for g in grasps:
        z = (np.asarray(object_pose, dtype=float) @ np.asarray(g.pose, dtype=float))[:3, 2]
        if math.degrees(math.acos(float(np.clip(-z[2], -1.0, 1.0)))) > limit + 1e-6:
            continue
        if math.isfinite(g.width_m) and g.width_m + margin > opening_m + 1e-9:
            continue
        out.append(g)
    return out


def _base_for_grasp(world: Any, scene: Any, robot: str, obj: str, object_pose: np.ndarray, places: list,
                    seed: int, grasps: Optional[list] = None, task_check: Any = None) -> Any:
    """A base pose (:class:`~py_trees_manipulation.collision.reachability.BasePlacement`) from which one
    of ``obj``'s grasps (``grasps``: those the ChooseGrasp considers) reaches it at ``object_pose``
    and, with a place pose, through the whole pick and place
    (:func:`~py_trees_manipulation.scene.reach_targets.grasp_target`), on the surface the robot
    stands on, searched as ``base_pose: auto`` searches; with ``task_check`` (the whole-task test,
    :func:`~py_trees_manipulation.trees.plan_check.whole_task_test`) only a base from which the whole
    task passes it (the grasp choice itself included) is offered. The world is put back as it was."""
    from ..collision.base_placement import surface_under, task_accept
    from .reach import SUGGEST_BUDGET
    from ..collision.base_search import SearchBudget, find_base_relaxing
    from ..scene.reach_targets import grasp_target

    spec = next((o for o in getattr(scene, "objects", ()) if o.name == obj), None)
    if spec is None:
        return None
    supports = [f.name for f in getattr(scene, "fixtures", ())]
    target = grasp_target(spec, object_pose, place=places[0] if places else None, supports=supports, grasps=grasps)
    if not target.paths:
        return None
    return find_base_relaxing(world, robot, lambda probe: [target], surface_under(world, scene, robot), seed=seed,
                              budget=SearchBudget(SUGGEST_BUDGET), accept=task_accept(task_check, scene, robot))
