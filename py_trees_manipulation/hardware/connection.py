"""The rosbridge connection: one websocket (``roslibpy.Ros``), a guarded publish, an event queue.

roslibpy calls us on its reactor thread; those callbacks only append to :attr:`_Connection.events`,
which the tree's thread drains (:meth:`~.rosbridge.HardwareBackend.poll`). A lost connection is
queued once and stops roslibpy's automatic reconnection (never reconnect mid-action); after
:meth:`_Connection.close` every publish raises: nothing is sent after the run ends.
"""

from __future__ import annotations

import collections
import logging
import threading
from typing import Any, Callable, Optional

from ..backend import BackendError
from .robotfile import RobotConfig

LOG = logging.getLogger("py_trees_manipulation.hardware")


class HardwareConnectionError(BackendError, ValueError):
    """rosbridge cannot be reached, or a configured server/topic does not answer at connect.

    (A ValueError too, so ``ptm run`` reports it without a traceback, exit code 2.)
    """


class ConnectionLost(BackendError):
    """The rosbridge connection was lost mid-run: the run ends as a FAILURE (not an error).

    ``run_failure = True`` tells the runner to stop the tree and report FAILURE with this text,
    without a traceback.
    """

    run_failure = True



class OneLineLogFilter(logging.Filter):
    """Turns a log record that carries a traceback into one line (``message: ExcType: text``).

    roslibpy logs a message it cannot handle with ``LOGGER.exception``, websockets a client that
    breaks the protocol likewise: a bad frame from the other end is worth one line, not a traceback.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and record.exc_info[1] is not None:
            e = record.exc_info[1]
            record.msg = f"{record.getMessage().split('.It could', 1)[0]}: {type(e).__name__}: {e}"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        return True


def add_one_line_filter(logger_name: str) -> None:
    """Add :class:`OneLineLogFilter` to a logger (once)."""
    logger = logging.getLogger(logger_name)
    if not any(isinstance(f, OneLineLogFilter) for f in logger.filters):
        logger.addFilter(OneLineLogFilter())


def _protocol_class() -> Any:
    """roslibpy's Twisted protocol, made to (a) hand rosbridge ``status`` messages to the connection's
    event queue (roslibpy has no handler and logs a traceback for each) and (b) skip binary or
    unreadable frames with one warning line (roslibpy raises into Twisted, which prints "Unhandled
    Error" and drops the connection). None with another transport."""
    try:
        from roslibpy.comm.comm_autobahn import AutobahnRosBridgeProtocol
    except ImportError:  # pragma: no cover - IronPython/asyncio transports
        return None

    class _Protocol(AutobahnRosBridgeProtocol):
        def __init__(self, *args: Any, **kwargs: Any):
            super().__init__(*args, **kwargs)
            self._message_handlers["status"] = self._on_status_op

        def _on_status_op(self, message: Any) -> None:
            conn = getattr(self.factory, "ptm_connection", None)
            if conn is not None:
                conn.events.append(("bridge_status", None, dict(message)))

        def onMessage(self, payload: bytes, isBinary: bool) -> None:  # noqa: N802 - autobahn API
            if isBinary:
                LOG.warning("rosbridge sent a binary frame (%d bytes): ignored", len(payload))
                return
            try:
                self.on_message(payload)
            except Exception as e:  # noqa: BLE001 - a bad frame must not stop the connection
                LOG.warning("rosbridge sent a message that cannot be handled (%s: %s): ignored", type(e).__name__, e)

    return _Protocol


class _Connection:
    """One rosbridge websocket (roslibpy.Ros) with a guarded publish and an event queue."""

    def __init__(self, cfg: RobotConfig, connect_timeout_s: Optional[float] = None):
        import roslibpy

        self._roslibpy = roslibpy
        self.cfg = cfg
        self.url = cfg.url
        self.events: collections.deque = collections.deque()
        self.closed = False
        self.lost = False
        self.sent = 0  # ops published through :meth:`publish` (tests)
        self._topics: dict[str, Any] = {}
        self._lock = threading.Lock()
        add_one_line_filter("roslibpy")
        timeout = cfg.connect_timeout_s if connect_timeout_s is None else connect_timeout_s
        try:
            self.ros = roslibpy.Ros(cfg.host, cfg.port, is_secure=cfg.secure)  # starts connecting at once
            proto_cls = _protocol_class()
            factory = getattr(self.ros, "factory", None)
            if proto_cls is not None and factory is not None:
                factory.protocol = proto_cls
                factory.ptm_connection = self
            self.ros.run(timeout=timeout)
            live = getattr(factory, "_proto", None)
            if proto_cls is not None and live is not None and not isinstance(live, proto_cls) \
                    and isinstance(live, proto_cls.__mro__[1]):
                # built before factory.protocol was set (Ros() connects from its constructor): adopt it
                live.__class__ = proto_cls
                live._message_handlers["status"] = live._on_status_op
        except Exception as e:
            self._stop_reconnecting()
            raise HardwareConnectionError(
                f"cannot connect to rosbridge at {self.url} within {timeout:g} s "
                f"({type(e).__name__}: {e}); is rosbridge_server (or 'ptm serve') running there?") from None
        self.ros.on("close", self._on_close)

    # ---- reactor-thread callbacks -------------------------------------------------------------
    def _on_close(self, *_: Any) -> None:
        self._mark_lost()

    def _mark_lost(self) -> None:
        """Queue the loss once (any thread). The event is queued before ``lost`` is set, so whoever
        sees ``lost`` finds the event in the queue."""
        with self._lock:
            if self.closed or self.lost:
                return
            self.events.append(("lost", None, None))
            self.lost = True
        self._stop_reconnecting()

    def _stop_reconnecting(self) -> None:
        factory = getattr(getattr(self, "ros", None), "factory", None)
        stop = getattr(factory, "stopTrying", None)
        if callable(stop):
            try:
                from twisted.internet import reactor

                reactor.callFromThread(stop)
            except Exception:  # pragma: no cover - other transports
                pass

    # ---- main-thread API ----------------------------------------------------------------------
    def topic(self, name: str, msg_type: str) -> Any:
        with self._lock:
            t = self._topics.get(name)
            if t is None:
                t = self._roslibpy.Topic(self.ros, name, msg_type, reconnect_on_close=False)
                self._topics[name] = t
            return t

    def subscribe(self, name: str, msg_type: str, callback: Callable[[Any], None]) -> None:
        """Subscribe; ``callback(msg)`` runs on the reactor thread and must only queue work."""
        self.topic(name, msg_type).subscribe(callback)

    def check_can_send(self) -> None:
        if self.closed:
            raise BackendError("the hardware backend is closed: no command is sent after the run ends")
        if self.lost or not self.ros.is_connected:
            self._mark_lost()
            raise BackendError(f"connection to rosbridge at {self.url} lost")

    def publish(self, name: str, msg_type: str, msg: dict) -> None:
        """Publish ``msg``. Raises BackendError when closed or disconnected (nothing is sent)."""
        self.check_can_send()
        self.topic(name, msg_type).publish(self._roslibpy.Message(msg))
        self.sent += 1

    def call_service(self, name: str, srv_type: str, timeout_s: float, args: Optional[dict] = None) -> Any:
        self.check_can_send()
        svc = self._roslibpy.Service(self.ros, name, srv_type)
        return svc.call(self._roslibpy.ServiceRequest(args or {}), timeout=timeout_s)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._stop_reconnecting()
        try:
            if self.ros.is_connected:  # after a loss we stopped the factory: do not wait long
                self.ros.close(timeout=0.2 if self.lost else 2)
        except Exception:
            pass
