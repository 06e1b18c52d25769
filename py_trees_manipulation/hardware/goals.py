"""What arrives for the backend's goals, applied on the tree's thread: ROS 1 status, feedback and
results, ROS 2 feedback and results, rosbridge ``status`` errors, the goal timers (acknowledgement,
status, result), a lost connection and the cancels sent after it.

:class:`GoalEvents` is a part of :class:`~.rosbridge.HardwareBackend`; it uses the backend's
``cfg``, ``_goals`` (goal id -> :class:`~.actions._RemoteGoal`), ``_lost_goals``, ``cancel_log``
and ``_event``.
"""

from __future__ import annotations

import json
import time
from typing import Any

from ..backend import BackendError
from ..msgs.actions import GoalStatus
from .actions import _ROS2_STATUS, _ActionClient, _RemoteGoal, _ServerFailure
from .connection import HardwareConnectionError, _Connection

#: ``action_msgs/srv/CancelGoal`` request with a zero goal id and a zero stamp: cancel every goal
CANCEL_EVERY_GOAL = {"goal_info": {"goal_id": {"uuid": [0] * 16}, "stamp": {"sec": 0, "nanosec": 0}}}


class GoalEvents:
    """The goal bookkeeping of :class:`~.rosbridge.HardwareBackend` (see the module docstring)."""

    cfg: Any
    _goals: dict
    _lost_goals: list
    cancel_log: list
    _lost_applied: bool

    def _check_goal_timers(self) -> None:
        """Finish the goals whose server is late: no acknowledgement within ``timeouts.ack_s`` (LOST,
        cancelled), no status for ``timeouts.status_s`` (ABORTED, cancelled), a terminal status
        without its result for ``timeouts.result_s`` (ABORTED). ROS 2 goals have no status stream."""
        now = time.monotonic()
        for rg in list(self._goals.values()):
            h = rg.handle
            if h.done:
                self._goals.pop(rg.goal_id, None)
            elif rg.client.ros2:
                continue  # no status stream in ROS 2 rosbridge actions: the result or a lost connection ends it
            elif rg.terminal_at is not None and now - rg.terminal_at > self.cfg.result_timeout_s:
                self._goals.pop(rg.goal_id, None)
                code = rg.terminal_seen[0] if rg.terminal_seen else GoalStatus.SUCCEEDED
                h.set_aborted(None, f"{rg.client.ns} reports the goal {GoalStatus(code).name} but its result did not "
                                    f"arrive within {self.cfg.result_timeout_s:g} s: the server's action type probably "
                                    f"differs from the robot file's {rg.client.type} (rosbridge then cannot deliver "
                                    f"results or feedback); check 'rostopic type {rg.client.ns}/result'")
            elif not rg.acked and h.status == GoalStatus.PENDING and now - rg.sent_at > self.cfg.ack_timeout_s:
                self._goals.pop(rg.goal_id, None)
                self._send_cancel(rg)
                h.set_lost(f"{rg.client.ns} did not acknowledge the goal within {self.cfg.ack_timeout_s:g} s: its "
                           f"status list never showed it (is the server busy or restarting, is {rg.client.type} its "
                           "goal type, does the bridge run ROS 1?)")
            elif now - rg.last_status_at > self.cfg.status_timeout_s:
                self._goals.pop(rg.goal_id, None)
                self._send_cancel(rg)
                h.set_aborted(None, f"{rg.client.ns} published no status for {self.cfg.status_timeout_s:g} s "
                                    "(server gone?)")

    def _send_cancel(self, rg: _RemoteGoal) -> None:
        try:
            rg.client.publish_cancel(rg.goal_id)
        except BackendError:
            pass

    def _on_ros2_feedback(self, client: _ActionClient, payload: Any) -> None:
        box, fb = payload
        self._deliver_feedback(client, self._goals.get(box.get("id", "")), dict(fb))

    def _on_ros2_result(self, client: _ActionClient, payload: Any) -> None:
        box, res, ok = payload
        rg = self._goals.get(box.get("id", ""))
        if rg is None:
            return
        try:
            status = res["status"]
            code = int(getattr(status, "value", status))
            values = res.get("values")
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            self._fail_malformed(rg, "result", e)
            return
        if not ok:
            text = values if isinstance(values, str) else json.dumps(values, default=str)
            self._finish(rg, GoalStatus.REJECTED if code == 0 else _ROS2_STATUS.get(code, GoalStatus.ABORTED),
                         None, text or f"{client.ns} refused the goal")
            return
        ours = _ROS2_STATUS.get(code)
        if ours is None:
            self._fail_malformed(rg, "result", ValueError(f"non-terminal action_msgs/GoalStatus {code}"))
            return
        try:
            result = client.result_from_ros(dict(values or {}), rg.handle) \
                if values or ours == GoalStatus.SUCCEEDED else None
        except _ServerFailure as e:
            self._goals.pop(rg.goal_id, None)
            rg.handle.set_aborted(None, str(e))
            return
        except (ValueError, TypeError, KeyError) as e:
            self._fail_malformed(rg, "result", e)
            return
        self._finish(rg, int(ours), result, "")

    def _on_status(self, client: _ActionClient, msg: Any) -> None:
        now = time.monotonic()
        lst = msg.get("status_list") if isinstance(msg, dict) else None
        if not isinstance(lst, list):
            self._event(f"malformed status on {client.ns}/status: no status_list")
            return
        for rg in self._goals.values():
            if rg.client is client:
                rg.last_status_at = now
        for st in lst:
            try:
                gid = st["goal_id"]["id"]
                code = int(st["status"])
            except (KeyError, TypeError, ValueError):
                self._event(f"malformed status entry on {client.ns}/status: {st!r}")
                continue
            rg = self._goals.get(gid)
            if rg is None:
                continue
            if code == GoalStatus.ACTIVE or code == GoalStatus.PREEMPTING:
                rg.acked = True
                rg.handle.set_active()
            elif code == GoalStatus.PENDING:
                rg.acked = True  # queued on the server: acknowledged, the ack timer stops
            elif code in (GoalStatus.REJECTED, GoalStatus.RECALLED, GoalStatus.LOST) and rg.terminal_seen is None:
                rg.terminal_seen = (code, str(st.get("text", "")))
                # these finish without doing anything; a result may follow, the status is enough
                self._finish(rg, code, None, str(st.get("text", "")))
            elif code in (GoalStatus.SUCCEEDED, GoalStatus.ABORTED, GoalStatus.PREEMPTED) and rg.terminal_at is None:
                rg.acked = True
                rg.terminal_seen = (code, str(st.get("text", "")))
                rg.terminal_at = now  # the result must follow within timeouts.result_s (see poll)

    def _on_feedback(self, client: _ActionClient, msg: Any) -> None:
        try:
            gid = msg["status"]["goal_id"]["id"]
        except (KeyError, TypeError):
            self._event(f"malformed feedback on {client.ns}/feedback (no status.goal_id.id)")
            return
        self._deliver_feedback(client, self._goals.get(gid), msg.get("feedback"))

    def _deliver_feedback(self, client: _ActionClient, rg: Any, raw: Any) -> None:
        """Feedback (ROS 1 or ROS 2) for a goal of ours: the goal is acknowledged and active."""
        if rg is None:
            return
        try:
            fb = client.feedback_from_ros(raw)
        except (ValueError, TypeError, KeyError) as e:
            self._fail_malformed(rg, "feedback", e)
            return
        rg.acked = True
        rg.handle.set_active()
        rg.handle.publish_feedback(fb)

    def _on_result(self, client: _ActionClient, msg: Any) -> None:
        try:
            status = msg["status"]
            gid = status["goal_id"]["id"]
        except (KeyError, TypeError):
            self._event(f"malformed result on {client.ns}/result (no status.goal_id.id)")
            return
        rg = self._goals.get(gid)
        if rg is None:
            return
        try:
            code = int(status["status"])
            text = str(status.get("text", "") or "")
            raw = msg.get("result")
            result = client.result_from_ros(raw, rg.handle) if raw not in (None, {}) or code == GoalStatus.SUCCEEDED else None
        except _ServerFailure as e:
            self._goals.pop(gid, None)
            rg.handle.set_aborted(None, str(e))
            return
        except (ValueError, TypeError, KeyError) as e:
            self._fail_malformed(rg, "result", e)
            return
        self._finish(rg, code, result, text)

    def _finish(self, rg: _RemoteGoal, code: int, result: Any, text: str) -> None:
        self._goals.pop(rg.goal_id, None)
        h = rg.handle
        if code == GoalStatus.SUCCEEDED:
            h.set_succeeded(result, text)
        elif code == GoalStatus.ABORTED:
            h.set_aborted(result, text or f"{rg.client.ns} aborted the goal")
        elif code == GoalStatus.PREEMPTED:
            h.set_preempted(result, text or "preempted")
        elif code == GoalStatus.REJECTED:
            h.set_rejected(text or f"{rg.client.ns} rejected the goal")
        elif code == GoalStatus.RECALLED:
            h.set_recalled(text or "recalled")
        elif code == GoalStatus.LOST:
            h.set_lost(text or "lost by the server")
        else:
            h.set_aborted(result, f"{rg.client.ns} sent a result with non-terminal status {code}")

    def _fail_malformed(self, rg: _RemoteGoal, what: str, e: Exception) -> None:
        self._goals.pop(rg.goal_id, None)
        self._send_cancel(rg)
        text = f"malformed {what} message from {rg.client.ns}: {e}"
        self._event(text)
        rg.handle.set_aborted(None, text)

    def _on_bridge_status(self, msg: Any) -> None:
        """A rosbridge ``status`` message (an error in what we sent): an event, and a ROS 2 goal that
        the bridge cannot take (``Unknown operation: send_action_goal`` on ROS 1) fails with it."""
        level = str(msg.get("level", "")) if isinstance(msg, dict) else ""
        text = str(msg.get("msg", "")) if isinstance(msg, dict) else str(msg)
        self._event(f"rosbridge {level or 'status'}: {text}")
        if level == "error" and ("send_action_goal" in text or "cancel_action_goal" in text):
            for rg in list(self._goals.values()):
                if rg.client.ros2 and not rg.handle.done:
                    self._goals.pop(rg.goal_id, None)
                    rg.handle.set_rejected(f"rosbridge at {self.cfg.url} refused the goal ({text}): "
                                           "a ROS 1 bridge has no ROS 2 actions; set protocol: ros1")

    def _on_lost(self) -> None:
        self._lost_applied = True
        text = f"connection to rosbridge at {self.cfg.url} lost"
        self._event(text)
        for rg in list(self._goals.values()):
            if not rg.handle.done:
                self._lost_goals.append((rg.client, rg.goal_id))
            rg.handle.set_aborted(None, text)
        self._goals.clear()

    def _cancel_after_loss(self) -> str:
        """After a lost connection: reconnect once (``connect_timeout_s``, at most 2 s) and cancel every
        goal that was still running, since rosbridge does not cancel a disconnected client's goals.
        ROS 1 actionlib goals are cancelled by id on ``<ns>/cancel``. A ROS 2 goal's id belongs to the
        lost bridge session (rosbridge never tells the client the goal's UUID), so the new session
        calls the action's own ``<ns>/_action/cancel_goal`` service (``action_msgs/srv/CancelGoal``)
        with a zero goal id and a zero stamp, which cancels every goal of that server: the robot file's
        action server serves this client's resource, one goal at a time. Returns the sentence for the
        run's verdict."""
        lost, self._lost_goals = self._lost_goals, []
        if not lost:
            return ""
        names = ", ".join(sorted({c.ns for c, _ in lost}))
        try:
            conn = _Connection(self.cfg, connect_timeout_s=min(self.cfg.connect_timeout_s, 2.0))
        except HardwareConnectionError:
            return f"; could not reconnect to cancel them: the goal(s) on {names} may still run on the robot"
        sent = 0
        failed: list[str] = []
        canceling = 0
        try:
            for c, gid in lost:
                if not c.ros2:
                    conn.publish(c.ns + "/cancel", "actionlib_msgs/GoalID", {"stamp": {"secs": 0, "nsecs": 0}, "id": gid})
                    self.cancel_log.append((c.action, gid))
                    sent += 1
            for ns in sorted({c.ns for c, _ in lost if c.ros2}):
                try:
                    resp = conn.call_service(ns + "/_action/cancel_goal", "action_msgs/srv/CancelGoal",
                                             self.cfg.service_timeout_s, CANCEL_EVERY_GOAL)
                    canceling += len(dict(resp).get("goals_canceling") or [])
                except Exception as e:  # noqa: BLE001 - no such service, a timeout, a refused call
                    failed.append(f"{ns} ({type(e).__name__}: {e})")
                    continue
                for c, gid in lost:
                    if c.ros2 and c.ns == ns:
                        self.cancel_log.append((c.action, gid))
                        sent += 1
            time.sleep(0.2)  # let the cancels leave before the close frame
        except BackendError as e:
            return f"; reconnected but could not send the cancels ({e}): the goal(s) on {names} may still run"
        finally:
            conn.close()
        text = f"; reconnected and sent the cancel of {sent} goal(s) still running on {names}"
        if any(c.ros2 for c, _ in lost) and not failed:
            text += f" (ROS 2 cancel_goal of every goal of the server: {canceling} canceling)"
        if failed:
            text += f"; could not cancel on {', '.join(failed)}: those goal(s) may still run on the robot"
        return text
