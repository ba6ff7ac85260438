"""A hostile TCP server on 127.0.0.1 for the tests and the fuzz campaign: whatever a client sends, it answers
with garbage, a frame that claims a huge size, nothing at all, or a reset. Bounded: every connection
handler ends when the server stops."""

from __future__ import annotations

import contextlib
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager

BEHAVIOURS = ("garbage", "huge_frame", "huge_array", "stall", "reset", "close")


def _answer(behaviour: str, conn: socket.socket, stop: threading.Event) -> None:
    conn.settimeout(0.2)
    try:
        with contextlib.suppress(OSError):  # a timeout too
            conn.recv(65536)  # the client's first request (ZooKeeper's ConnectRequest, Kafka's ApiVersions)
        if behaviour == "garbage":
            conn.sendall(b"\x00\x00\x00\x10" + b"\xff" * 16 + b"not a protocol at all\r\n" * 4)
        elif behaviour == "huge_frame":
            conn.sendall(struct.pack(">i", 0x7FFFFFF0) + b"\x00" * 64)
        elif behaviour == "huge_array":  # a well-sized frame whose array claims 2**31-1 elements
            body = struct.pack(">iiq", 0, 30000, 1) + struct.pack(">i", 0x7FFFFFFF) + b"\x00" * 32
            conn.sendall(struct.pack(">i", len(body)) + body)
        elif behaviour == "reset":
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return
        elif behaviour == "close":
            return
        while not stop.wait(0.1):  # "stall", and after the others: keep the connection open, say nothing more
            try:
                if conn.recv(65536) == b"":
                    return
            except TimeoutError:
                continue
            except OSError:
                return
    except OSError:
        return
    finally:
        conn.close()


@contextmanager
def hostile_server(behaviour: str) -> Iterator[str]:
    """Serve `behaviour` on a port of our own; yields "127.0.0.1:port"."""
    assert behaviour in BEHAVIOURS, behaviour
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    stop = threading.Event()
    handlers: list[threading.Thread] = []

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            thread = threading.Thread(target=_answer, args=(behaviour, conn, stop), daemon=True)
            thread.start()
            handlers.append(thread)

    acceptor = threading.Thread(target=serve, daemon=True)
    acceptor.start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        acceptor.join(5)
        listener.close()
        for thread in handlers:
            thread.join(5)


@contextmanager
def freezable_proxy(upstream: str) -> Iterator[tuple[str, threading.Event]]:
    """A TCP proxy to `upstream` ("host:port") that, once the yielded event is set, forwards nothing more in
    either direction and answers no new connection: a server frozen mid-session."""
    host, _, port = upstream.rpartition(":")
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    frozen, stop = threading.Event(), threading.Event()
    threads: list[threading.Thread] = []

    def pump(source: socket.socket, target: socket.socket) -> None:
        source.settimeout(0.1)
        while not stop.is_set():
            try:
                data = source.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data:
                return
            if not frozen.is_set():
                try:
                    target.sendall(data)
                except OSError:
                    return

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            if frozen.is_set():
                threads.append(threading.Thread(target=pump, args=(conn, conn), daemon=True))  # read, never answer
                threads[-1].start()
                continue
            server = socket.create_connection((host, int(port)))
            for source, target in ((conn, server), (server, conn)):
                threads.append(threading.Thread(target=pump, args=(source, target), daemon=True))
                threads[-1].start()

    acceptor = threading.Thread(target=serve, daemon=True)
    acceptor.start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}", frozen
    finally:
        stop.set()
        acceptor.join(5)
        listener.close()
        for thread in threads:
            thread.join(5)


HTTP_BEHAVIOURS = ("redirect", "drip", "not_http", "huge_body", "stall")


@contextmanager
def hostile_token_endpoint(behaviour: str) -> Iterator[tuple[str, list[bytes]]]:
    """An OAuth token endpoint on 127.0.0.1 that answers every POST with `behaviour`: a 302 to another
    origin (the second server records what reaches it), a valid answer dripped one byte every 0.8 s, raw
    bytes that are not HTTP, a 64 MiB body, or nothing. Yields its URL and the requests the other origin got."""
    assert behaviour in HTTP_BEHAVIOURS, behaviour
    stop = threading.Event()
    elsewhere: list[bytes] = []
    listeners = [socket.create_server(("127.0.0.1", 0)) for _ in range(2)]
    other = f"http://127.0.0.1:{listeners[1].getsockname()[1]}/token"
    threads: list[threading.Thread] = []

    def answer(conn: socket.socket, recorded: bool) -> None:
        conn.settimeout(0.2)
        with contextlib.suppress(OSError):
            request = conn.recv(65536)
            if recorded:
                elsewhere.append(request)
                return
            if behaviour == "redirect":
                conn.sendall(f"HTTP/1.1 302 Found\r\nLocation: {other}\r\nContent-Length: 0\r\n\r\n".encode())
            elif behaviour == "drip":
                body = b'{"access_token": "x"}'
                for byte in b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body:
                    if stop.wait(0.8):
                        break
                    conn.sendall(bytes([byte]))
            elif behaviour == "not_http":
                conn.sendall(b"\x00\x00\x00\x10\xff\xfeSSH-2.0-OpenSSH_9.6\r\n")
            elif behaviour == "huge_body":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % (64 << 20))
                chunk = b"x" * 65536
                for _ in range(1024):
                    if stop.is_set():
                        break
                    conn.sendall(chunk)
            stop.wait()  # "stall", and after the others: keep the connection open
        conn.close()

    def serve(listener: socket.socket, recorded: bool) -> None:
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            threads.append(threading.Thread(target=answer, args=(conn, recorded), daemon=True))
            threads[-1].start()

    acceptors = [threading.Thread(target=serve, args=(listener, i == 1), daemon=True)
                 for i, listener in enumerate(listeners)]
    for acceptor in acceptors:
        acceptor.start()
    try:
        yield f"http://127.0.0.1:{listeners[0].getsockname()[1]}/token", elsewhere
    finally:
        stop.set()
        for thread in [*acceptors, *threads]:
            thread.join(5)
        for listener in listeners:
            listener.close()


@contextmanager
def full_backlog() -> Iterator[str]:
    """"127.0.0.1:PORT" of a socket that listens but never accepts, its accept queue already full: Linux
    drops a further SYN, so a connect there waits until its own timeout (a silent host, on loopback)."""
    with socket.socket() as server, socket.socket() as queued:
        server.bind(("127.0.0.1", 0))
        server.listen(0)
        queued.connect(server.getsockname())  # fills the queue of one
        yield f"127.0.0.1:{server.getsockname()[1]}"
