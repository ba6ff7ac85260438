"""Control of a running sandbox from another process: `kafka-leaders sandbox-ctl`, or any program that
writes one JSON line to the Unix socket the ready file names (`control`) and reads one line back.

Requests: {"op": "stop-broker" | "kill-broker" | "start-broker" | "restart-broker", "broker": ID, "catch_up_seconds":
S} (`catch_up_seconds` optional: the sandbox's --catch-up-seconds), {"op": "stop-controller" | "kill-controller" |
"start-controller" | "restart-controller", "controller": ID, "catch_up_seconds": S} (KRaft's dedicated controller
nodes 1000-1002:
two down leave the quorum without a leader; a start catches up with the quorum's leader over the catch-up time)
and {"op": "status"}. Answers: {"ok": true, "brokers": {...}} (status adds "lost_records": {"topic-N": count}, the
records unclean elections cost; controller ops add "controllers": {...}) or {"ok": false, "error": "..."} (a line
that is not a JSON object too); `control_client.request` is the client, bounded in what it reads. The socket is in
a directory only the sandbox's user can enter (mode 0700), so only that user can stop its brokers, made in TMPDIR
(in /tmp when TMPDIR is too long for a socket's path). Each client is served on its own thread and has
REQUEST_TIMEOUT seconds to send its line: an idle one holds up nobody.

What a stop and a start do, modelled on Kafka (KRaft: `BrokerHeartbeatManager`, `ReplicationControlManager`;
ZooKeeper mode: `KafkaController.doControlledShutdown`):
- stop-broker is a controlled shutdown: the controller moves leadership off the broker to another
  in-sync replica and takes it out of every ISR where it is not the last member, and the broker is gone
  from the metadata (`Sandbox.stop_broker`, noticed at once);
- kill-broker is a crash (SIGKILL): the listener refuses connections at once, nothing is handed over, and the
  controller fences the broker only after broker.session.timeout.ms (`Sandbox.kill_broker`); until then Metadata
  lists it alive, leading and in its ISRs; kill-controller crashes a dedicated controller the same way
  (`Sandbox.kill_controller`: it stops fetching; a crashed quorum leader is replaced after the fetch timeout);
- start-broker brings it back as a restarted process: it listens at once but stays fenced (registered,
  not in Metadata; DescribeCluster says `is_fenced`) while it catches up with the metadata log, then is
  unfenced, and its replicas rejoin the ISRs as its fetchers catch up, spread over the catch-up time
  (`Sandbox.start_broker_catching_up`); restart-broker is a stop, then a start.
"""

from __future__ import annotations

import json
import os
import socketserver
import tempfile
import threading
from pathlib import Path
from typing import Any

from leader_election_cli.sandbox.control import Sandbox
from leader_election_cli.sandbox.controller.model import Mode
from leader_election_cli.sandbox.controller.quorum import DEDICATED_CONTROLLERS

BROKER_OPS = ("stop-broker", "kill-broker", "start-broker", "restart-broker")
CONTROLLER_OPS = ("stop-controller", "kill-controller", "start-controller", "restart-controller")
MAX_REQUEST = 4096
REQUEST_TIMEOUT = 10.0  # seconds a client may take to send its line: an idle one is dropped, not waited on
# AF_UNIX paths are at most 107 bytes on Linux (sun_path is 108 with its NUL): a longer TMPDIR cannot hold
# the socket, so the socket goes to /tmp instead (the directory's name and socket add 35 bytes)
MAX_SOCKET_PATH = 107
SOCKET_NAME = "control.sock"
DIRECTORY_PREFIX = "kafka-sandbox-"


class ControlServer:
    """The control socket of one running sandbox; `start()` makes it, `stop()` removes it."""

    def __init__(self, sandbox: Sandbox, catch_up_seconds: float):
        self.sandbox = sandbox
        self.catch_up_seconds = catch_up_seconds
        self._directory: str | None = None
        self._server: socketserver.ThreadingUnixStreamServer | None = None
        self._thread: threading.Thread | None = None
        self.lock = threading.Lock()  # one request at a time

    @property
    def path(self) -> str:
        if self._directory is None:
            raise RuntimeError("the control server is not started")
        return str(Path(self._directory) / SOCKET_NAME)

    def start(self) -> ControlServer:
        """Make the socket's directory (mode 0700) in the temporary directory, or in /tmp when a socket there
        would have too long a path; an OSError (no directory can be made) leaves nothing behind."""
        self._directory = tempfile.mkdtemp(prefix=DIRECTORY_PREFIX, dir=socket_parent())
        control = self

        class Handler(socketserver.StreamRequestHandler):
            timeout = REQUEST_TIMEOUT  # the connection's socket timeout: an idle client cannot hold a thread

            def handle(self) -> None:
                try:
                    line = self.rfile.readline(MAX_REQUEST)
                    self.wfile.write((json.dumps(control.answer_line(line)) + "\n").encode())
                except OSError:  # timed out, or the client left: nobody to answer
                    pass

        class Server(socketserver.ThreadingUnixStreamServer):
            daemon_threads = True  # stop() does not wait for clients still connected
            block_on_close = False

        try:
            self._server = Server(self.path, Handler)
        except OSError:
            self.stop()
            raise
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True, name="sandbox-control")
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._directory is not None:
            for name in os.listdir(self._directory):
                os.unlink(os.path.join(self._directory, name))
            os.rmdir(self._directory)
            self._directory = None

    def answer_line(self, line: bytes) -> dict[str, Any]:
        """The answer to one request line: anything but a JSON object is a bad request (as Kafka refuses a
        request it cannot parse, nothing is changed)."""
        try:
            request = json.loads(line)
        except ValueError as exc:
            return {"ok": False, "error": f"bad request: {exc}"}
        if not isinstance(request, dict):
            return {"ok": False, "error": f"bad request: a JSON object is expected, not {type(request).__name__}"}
        try:
            return self.answer(request)
        except (ValueError, TypeError, KeyError) as exc:
            return {"ok": False, "error": f"bad request: {exc}"}

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """Carry out one request; a broker the sandbox does not have is an error answer."""
        op = request.get("op")
        if op == "status":
            return {"ok": True, "brokers": self.brokers(), "lost_records": self.sandbox.lost_records}
        if op in CONTROLLER_OPS:
            return self._controller(op, request.get("controller"), request.get("catch_up_seconds",
                                                                               self.catch_up_seconds))
        if op not in BROKER_OPS:
            return {"ok": False, "error": f"unknown op {op!r}: use {', '.join(BROKER_OPS + CONTROLLER_OPS)}, status"}
        broker = request.get("broker")
        if type(broker) is not int or broker not in self.sandbox.cluster.broker_ids:
            ids = ", ".join(map(str, self.sandbox.cluster.broker_ids))
            return {"ok": False, "error": f"no broker {broker!r} in this sandbox (its brokers: {ids})"}
        catch_up = request.get("catch_up_seconds", self.catch_up_seconds)
        if not _seconds(catch_up):
            return {"ok": False, "error": CATCH_UP_ERROR}
        with self.lock:
            if op == "kill-broker":
                self.sandbox.kill_broker(broker)
            if op in ("stop-broker", "restart-broker"):
                self.sandbox.stop_broker(broker)
            if op in ("start-broker", "restart-broker"):
                self.sandbox.start_broker_catching_up(broker, float(catch_up))
        return {"ok": True, "brokers": self.brokers()}

    def _controller(self, op: str, node: Any, catch_up: Any) -> dict[str, Any]:
        """Stop, start or restart a dedicated KRaft controller node (`Sandbox.stop_controller`; a start catches
        up with the quorum's leader over `catch_up` seconds, `Sandbox.start_controller_catching_up`)."""
        cluster = self.sandbox.cluster
        if cluster.mode is not Mode.KRAFT or cluster.voters is not None:
            return {"ok": False, "error": "this sandbox has no controller nodes apart from its brokers (zk mode, or "
                                          "KRaft combined mode): stop or start brokers"}
        if type(node) is not int or node not in DEDICATED_CONTROLLERS:
            ids = ", ".join(map(str, DEDICATED_CONTROLLERS))
            return {"ok": False, "error": f"no controller {node!r} in this sandbox (its controllers: {ids})"}
        if not _seconds(catch_up):
            return {"ok": False, "error": CATCH_UP_ERROR}
        with self.lock:
            if op == "kill-controller":
                self.sandbox.kill_controller(node)
            if op in ("stop-controller", "restart-controller"):
                self.sandbox.stop_controller(node)
            if op in ("start-controller", "restart-controller"):
                self.sandbox.start_controller_catching_up(node, float(catch_up))
        return {"ok": True, "brokers": self.brokers(), "controllers": self.controllers()}

    def controllers(self) -> dict[str, str]:
        """Each dedicated controller's state: leader (of the quorum), up or down."""
        leader = self.sandbox.quorum_leader
        down = self.sandbox.cluster.controllers_down
        return {str(c): "leader" if c == leader else "down" if c in down else "up" for c in DEDICATED_CONTROLLERS}

    def brokers(self) -> dict[str, str]:
        """Each broker's state: up, fenced (listening, catching up with the metadata, or waiting for an
        active controller to unfence it), catching-up (unfenced, not yet back in every ISR) or down (stopped,
        even while the metadata still names it: killed, its session not timed out yet, or for want of a
        controller to fence it)."""
        sb = self.sandbox
        catching_up = sb.catching_up()
        states = {}
        for b in sb.cluster.broker_ids:
            if b not in sb.live_brokers:
                states[str(b)] = "fenced" if b in catching_up or sb.cluster.is_running(b) else "down"
            elif not sb.cluster.is_running(b) or b not in sb.cluster.listening:
                states[str(b)] = "down"
            else:
                states[str(b)] = "catching-up" if b in catching_up else "up"
        return states


def socket_parent() -> str:
    """Where the socket's directory goes: the temporary directory (TMPDIR), or /tmp when a socket under it
    would exceed AF_UNIX's path limit."""
    parent = tempfile.gettempdir()
    longest = os.path.join(parent, DIRECTORY_PREFIX + "x" * 8, SOCKET_NAME)  # mkdtemp adds 8 characters
    return parent if len(os.fsencode(longest)) <= MAX_SOCKET_PATH else "/tmp"


CATCH_UP_ERROR = "catch_up_seconds must be a number of seconds from 0 to 3600"


def _seconds(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 3600
