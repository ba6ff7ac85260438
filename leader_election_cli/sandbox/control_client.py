"""The client of a sandbox's control socket (sandbox/remote.py serves it): one request line out, one answer line
back, bounded in size and time so that a socket which is not a sandbox answering (a huge line, bytes without
an end, silence) cannot hold or flood the caller. Light: `kafka-leaders sandbox-ctl` imports it for its help."""

from __future__ import annotations

import errno
import json
import socket
import time
from typing import Any

# A client reads at most this much of an answer line (a status of 100 brokers is about 2 KB), within this
# time in all (a request waits for the one before it, a start only until the broker listens): anything
# else is not a sandbox answering
MAX_ANSWER = 64 * 1024
ANSWER_TIMEOUT = 30.0


def request(path: str, message: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
    """Send one request to the control socket at `path` and return its answer, a JSON object with a boolean
    `ok`. OSError when the socket cannot be reached or gives no whole answer line within `timeout` seconds
    in all (a socket that trickles bytes cannot hold the caller longer); ValueError when the answer is not
    one line of at most MAX_ANSWER bytes holding such an object. `timeout`: ANSWER_TIMEOUT unless given."""
    timeout = ANSWER_TIMEOUT if timeout is None else timeout
    deadline = time.monotonic() + timeout
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout)
        sock.connect(path)
        sock.sendall((json.dumps(message) + "\n").encode())
        data = bytearray()
        while not data.endswith(b"\n"):
            left = deadline - time.monotonic()
            try:
                if left <= 0:
                    raise TimeoutError
                sock.settimeout(left)
                chunk = sock.recv(MAX_ANSWER + 1 - len(data))
            except TimeoutError:
                raise TimeoutError(errno.ETIMEDOUT, f"no whole answer line within {timeout:g} s") from None
            if not chunk:
                break
            data += chunk
            if len(data) > MAX_ANSWER:
                raise ValueError(f"an answer longer than {MAX_ANSWER} bytes")
    try:
        answer = json.loads(data)
    except RecursionError:
        raise ValueError("an answer nested too deeply") from None
    if not isinstance(answer, dict) or type(answer.get("ok")) is not bool:
        raise ValueError("an answer without a true or false \"ok\"")
    return answer
