"""A bootstrap that fails says why, naming the one server that failed, with the setting to change: a refused
port (at once, not after the API timeout), a server that answers in another protocol (HTTP, TLS, random
bytes), TLS against a plaintext listener, SASL against a listener without it. Both transports (ours for
PLAINTEXT and SSL, kafka-python's for SASL), both commands; the drop-in keeps Kafka's first line."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from leader_election_cli.cli.drop_in_command import command as drop_in
from leader_election_cli.cli.toolkit import cli as toolkit
from leader_election_cli.sandbox import Sandbox

SASL = ('security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\nsasl.jaas.config=org.apache.kafka.common.'
        'security.scram.ScramLoginModule required username="admin" password="pw";\n')
KAFKAS_SASL_LINE = ("java.util.concurrent.ExecutionException: org.apache.kafka.common.errors."
                    "IllegalSaslStateException: Unexpected handshake request with client mechanism SCRAM-SHA-256, "
                    "enabled mechanisms are []")
TIMEOUT_LINE = "Timeout waiting for election results"


@contextlib.contextmanager
def answering(reply: bytes) -> Iterator[str]:
    """A server on 127.0.0.1 that answers whatever comes first with `reply`, then closes."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.1)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:  # a timeout too
                continue
            with conn, contextlib.suppress(OSError):
                conn.settimeout(5)
                conn.recv(65536)
                conn.sendall(reply)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(10)
        listener.close()


HTTP_ANSWER = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
RANDOM_BYTES = bytes.fromhex("5a17c0ffee00deadbeef0102030405060708090a0b0c0d0e0f")


@pytest.fixture(scope="module")
def plaintext() -> Iterator[Sandbox]:
    with Sandbox(brokers=1) as sb:
        sb.create_topic("t1", assignment={0: [1]})
        yield sb


def config(tmp_path: Path, text: str) -> str:
    path = tmp_path / "client.properties"
    path.write_text(text)
    return str(path)


def elect(servers: str, *extra: str) -> tuple[int, str, str, float]:
    started = time.monotonic()
    result = CliRunner().invoke(drop_in, ["--bootstrap-server", servers, "--election-type", "preferred",
                                          "--all-topic-partitions", "--output", "text", *extra],
                                catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr, time.monotonic() - started


def status(servers: str, *extra: str) -> tuple[int, str, float]:
    started = time.monotonic()
    result = CliRunner().invoke(toolkit, ["status", "--bootstrap-server", servers, *extra], catch_exceptions=False)
    return result.exit_code, result.stderr, time.monotonic() - started


@pytest.mark.parametrize("sasl", [False, True], ids=["ours", "kafka-python"])
def test_a_refused_port_is_said_at_once_naming_it(tmp_path: Path, sasl: bool,
                                                   refused_address: Callable[[], str]) -> None:
    """It waited the whole API timeout (30 s by default) and said only 'Could not reach any broker'."""
    address = refused_address()
    extra = ["--command-config", config(tmp_path, SASL)] if sasl else []
    code, out, err, took = elect(address, *extra)
    assert (code, out) == (3, TIMEOUT_LINE + "\n")  # Kafka's line, which it prints once its timeout passes
    lines = err.splitlines()
    assert lines[0] == f"{address} refused the connection (3 attempts)"
    assert lines[1].startswith("Hint: Nothing listens there: check the host and port in --bootstrap-server")
    assert took < 15  # well within the 30 s default: a few attempts with backoff
    code, err, _ = status(address, *extra)
    assert code == 3 and err.startswith(f"{address} refused the connection")


def test_every_refusing_server_is_named(refused_address: Callable[[], str]) -> None:
    first, second = refused_address(), refused_address()
    code, err, took = status(f"{first},{second}")
    assert code == 3 and took < 15
    said = err.splitlines()[0].split("; ")
    assert sorted(said) == sorted(f"{a} refused the connection (3 attempts)" for a in (first, second))


@pytest.mark.parametrize("sasl", [False, True], ids=["ours", "kafka-python"])
@pytest.mark.parametrize(("reply", "said"), [
    (HTTP_ANSWER, "answered in HTTP, not in Kafka's protocol"),
    (RANDOM_BYTES, "answered, but not in Kafka's protocol (a frame of 1511506175 bytes)"),
    (b"\x15\x03\x03\x00\x02\x02\x46", "answered in TLS: the listener expects security.protocol=SSL or SASL_SSL"),
], ids=["http", "random", "tls"])
def test_a_server_that_is_not_kafka_is_said_to_be_so(tmp_path: Path, sasl: bool, reply: bytes, said: str) -> None:
    """It waited the whole API timeout (kafka-python: each attempt its request timeout) and said 'Could not
    reach any broker'."""
    extra = ["--command-config", config(tmp_path, SASL)] if sasl else []
    with answering(reply) as address:
        code, out, err, took = elect(address, *extra)
    assert (code, out) == (3, TIMEOUT_LINE + "\n")
    lines = err.splitlines()
    assert lines[0] == f"{address} {said}"
    assert lines[1].startswith("Hint: That listener speaks TLS: set security.protocol=SSL" if "TLS" in said
                               else "Hint: That port is not a Kafka listener")
    assert took < 15


def test_tls_to_a_plaintext_listener_names_it_and_the_setting(plaintext: Sandbox, tmp_path: Path,
                                                               refused_address: Callable[[], str]) -> None:
    """It said `[SSL: UNEXPECTED_EOF_WHILE_READING]` with a trust store hint, naming the whole bootstrap list."""
    closed = refused_address()
    for servers in (plaintext.bootstrap_servers, f"{plaintext.bootstrap_servers},{closed}"):
        code, out, err, _ = elect(servers, "--command-config", config(tmp_path, "security.protocol=SSL\n"))
        assert (code, out) == (3, TIMEOUT_LINE + "\n")
        lines = err.splitlines()
        assert lines[0] == (f"{plaintext.bootstrap_servers} does not speak TLS: it closed the TLS handshake, and "
                            "answers Kafka's protocol without TLS")
        assert lines[1].startswith("Hint: Set security.protocol=PLAINTEXT")
        assert "truststore" not in err and closed not in err


def test_sasl_to_a_plaintext_listener_is_a_connection_mismatch_not_credentials(
        plaintext: Sandbox, tmp_path: Path, refused_address: Callable[[], str]) -> None:
    """It said 'Authentication failed ... check the credentials', exit 4, naming the whole bootstrap list."""
    closed = refused_address()
    servers = f"{plaintext.bootstrap_servers},{closed}"
    code, out, err, _ = elect(servers, "--command-config", config(tmp_path, SASL))
    assert (code, out) == (3, "")
    lines = err.splitlines()
    assert lines[0] == KAFKAS_SASL_LINE  # Kafka's first line, then the cause
    assert lines[1] == (f"{plaintext.bootstrap_servers} does not speak SASL: its listener answered the SASL handshake "
                        "with ILLEGAL_SASL_STATE (no SASL mechanism enabled there)")
    assert lines[2].startswith("Hint: Set security.protocol=PLAINTEXT")
    assert "credentials" not in err and closed not in err
    code, err, _ = status(servers, "--command-config", config(tmp_path, SASL))
    assert code == 3 and err.splitlines()[0] == lines[1]  # the toolkit: our line alone


def test_a_tls_failure_names_the_one_server_that_failed(tmp_path: Path, refused_address: Callable[[], str]) -> None:
    """An untrusted certificate: the line named the whole bootstrap list."""
    closed = refused_address()
    with Sandbox(brokers=1, tls=True) as sb:
        code, err, _ = status(f"{sb.bootstrap_servers},{closed}", "--command-config",
                              config(tmp_path, "security.protocol=SSL\n"))
    assert code == 3
    assert err.startswith(f"TLS handshake with {sb.bootstrap_servers} failed: [SSL: CERTIFICATE_VERIFY_FAILED]"), err
