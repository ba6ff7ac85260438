"""Calls into the driver JVM that an exception cut: ended at once, so that no later call reads or loses to them.

Py4J (0.10.9) keeps one connection per Python thread, served by one JVM thread. A call cut by an exception
raised in its wait (a stop signal's `Stopped`, pytest-timeout's failure) leaves that JVM thread working on
it, and the connection with its answer still to come. On a KeyboardInterrupt (a `Stopped` is one) Py4J
also sends a cancel over every connection it holds, the cut one included: the JVM runs a cancel by shutting
down *every* connection it has at that moment and interrupting its thread, and reads the one sent over the
cut connection only once the cut call has finished. So a cancel could go off seconds later and cut a call
made since, such as the stop of the session after a stop signal (its context never cleared: "Only one
SparkContext should be running in this JVM").
"""

from __future__ import annotations

from contextlib import suppress

from pyspark import SparkContext

CANCEL_COMMAND = "z"  # Py4J's CancelCommand: an address, a Python-side port, a JVM-side port
NO_PORT = -1
CANCEL_TIMEOUT_S = 30.0  # the JVM closes the connection as it runs the cancel: milliseconds, unless it hangs


def forget_interrupted_call() -> None:
    """End every call into the JVM an exception cut, now, and leave this thread a fresh connection.

    Sends Py4J's own cancel over a new connection, for every connection (the JVM-side port they all share),
    and waits until the JVM has closed that new one: every older connection was shut down before it (the
    JVM keeps them in the order they came), each cut call's thread interrupted, and the cancels Py4J left
    queued on them can no longer be read. A JVM that is gone or never started is left alone."""
    client = getattr(SparkContext._gateway, "_gateway_client", None)
    if client is None or not hasattr(client, "get_thread_connection"):
        return
    connection = client.get_thread_connection()
    if connection is not None:
        connection.close()
    with suppress(Exception):  # a JVM that has exited (nothing runs there any more), or hangs past the timeout
        _cancel_every_connection(client)


def _cancel_every_connection(client: object) -> None:
    connection = client._create_new_connection()  # connected and authenticated; this thread's from now on
    try:
        jvm_port = connection.socket.getpeername()[1]
        connection.socket.sendall(f"{CANCEL_COMMAND}\n127.0.0.1\n{NO_PORT}\n{jvm_port}\n".encode())
        connection.socket.settimeout(CANCEL_TIMEOUT_S)
        with suppress(ConnectionError):  # closed with a reset: as closed as with an end of stream
            connection.socket.recv(1)  # a cancel answers nothing: this returns as the JVM closes it
    finally:
        connection.close()
