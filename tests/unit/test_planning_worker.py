"""PlanningWorker.submit(now=True): a caller that only waits for the plan has it made on its own
thread (no hand-over to the worker and back), unless the worker still has a job in flight (then the
request queues behind it: one thread at a time uses the collision world)."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import numpy as np

from py_trees_manipulation.collision.arm_planner import MotionRequest
from py_trees_manipulation.collision.worker import PlanFailure, PlanningWorker


def _request() -> MotionRequest:
    # a robot the (stand-in) world does not have: the planner fails at once, with a reason
    return MotionRequest(robot="nobody", kind="joints", start=[0.0] * 7, goal=list(np.zeros(7)))


def test_now_plans_on_the_calling_thread_when_the_worker_is_idle():
    worker = PlanningWorker(lambda: SimpleNamespace(close=lambda: None))
    threads = []
    try:
        future, _ = worker.submit(_request(), lambda world: threads.append(threading.current_thread()), now=True)
        assert future.done() and threads == [threading.current_thread()]
        assert isinstance(future.result(), PlanFailure)
        assert worker._executor is None  # no worker thread was ever started
    finally:
        worker.close()


def test_now_queues_behind_a_job_in_flight():
    worker = PlanningWorker(lambda: SimpleNamespace(close=lambda: None))
    release, started = threading.Event(), threading.Event()
    threads = []

    def slow_apply(world):
        threads.append(threading.current_thread())
        started.set()
        release.wait(10)

    try:
        first, _ = worker.submit(_request(), slow_apply)
        assert started.wait(10)
        second, _ = worker.submit(_request(), lambda world: threads.append(threading.current_thread()), now=True)
        assert not second.done()  # queued, not run beside the first on this thread
        release.set()
        assert isinstance(second.result(timeout=10), PlanFailure) and first.done()
        assert threads[0] is threads[1] is not threading.current_thread()
    finally:
        release.set()
        worker.close()
