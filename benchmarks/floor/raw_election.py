"""The floor of a one-partition election: a fresh Python process that sends ApiVersions v0 and
ElectLeaders v1 over one raw socket, and nothing else (no client library, no metadata read).

    python benchmarks/floor/raw_election.py HOST:PORT TOPIC PARTITION

Exits 0 when the controller answered the partition with NONE or ELECTION_NOT_NEEDED, else 1. Used by
benchmarks/drop_in.py as the figure the tool's wall time is compared with.
"""

import socket
import struct
import sys

CLIENT_ID = b"floor"


def request(sock: socket.socket, api_key: int, version: int, correlation_id: int, body: bytes) -> bytes:
    header = struct.pack(">hhih", api_key, version, correlation_id, len(CLIENT_ID)) + CLIENT_ID
    frame = header + body
    sock.sendall(struct.pack(">i", len(frame)) + frame)
    size = struct.unpack(">i", read(sock, 4))[0]
    answer = read(sock, size)
    if struct.unpack_from(">i", answer)[0] != correlation_id:
        raise SystemExit("answer to another request")
    return answer[4:]


def read(sock: socket.socket, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = sock.recv(left)
        if not chunk:
            raise SystemExit("connection closed")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def main() -> int:
    address, topic, partition = sys.argv[1], sys.argv[2].encode(), int(sys.argv[3])
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host.encode(), int(port)), timeout=30) as sock:  # bytes: no IDNA codec to load
        request(sock, 18, 0, 1, b"")  # ApiVersions v0
        body = (struct.pack(">bi", 0, 1) + struct.pack(">h", len(topic)) + topic
                + struct.pack(">ii", 1, partition) + struct.pack(">i", 30_000))  # PREFERRED, [topic [partition]]
        answer = request(sock, 43, 1, 2, body)  # ElectLeaders v1
    # throttle_time_ms, error_code, [topic, [partition_id, error_code, error_message]]
    _, top = struct.unpack_from(">ih", answer)
    offset = 6 + 4
    (name_size,) = struct.unpack_from(">h", answer, offset)
    offset += 2 + name_size + 4
    _, code = struct.unpack_from(">ih", answer, offset)
    return 0 if top == 0 and code in (0, 84) else 1


if __name__ == "__main__":
    sys.exit(main())
