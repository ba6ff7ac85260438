"""The drop-in over SASL and TLS: success, bad password, no ALTER on CLUSTER, and secrets kept out."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from leader_election_cli.cli.drop_in_command import command
from leader_election_cli.sandbox import Sandbox

ADMIN_SECRET = "s3cr3t-admin-Pa55"
BOB_SECRET = "b0b-Pa55-word"
WRONG_SECRET = "wr0ng-Pa55-guess"
ELECT_LEADERS = 43


@pytest.fixture(scope="module")
def sasl_sandbox():
    with Sandbox(brokers=3, mode="kraft", sasl_users={"admin": ADMIN_SECRET, "bob": BOB_SECRET},
                 cluster_alter={"admin"}) as sb:
        sb.create_topic("t1", assignment={0: [1, 2, 3]})
        yield sb


def properties(tmp_path: Path, user: str, password: str, mechanism: str = "SCRAM-SHA-256",
               protocol: str = "SASL_PLAINTEXT", extra: str = "") -> str:
    module = ("org.apache.kafka.common.security.plain.PlainLoginModule" if mechanism == "PLAIN"
              else "org.apache.kafka.common.security.scram.ScramLoginModule")
    path = tmp_path / "client.properties"
    path.write_text(f"security.protocol={protocol}\nsasl.mechanism={mechanism}\n"
                    f'sasl.jaas.config={module} required username="{user}" password="{password}";\n'
                    f"default.api.timeout.ms=5000\nrequest.timeout.ms=3000\n{extra}")
    return str(path)


def elect(sb: Sandbox, config: str, *extra: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(command, ["--bootstrap-server", sb.bootstrap_servers, "--election-type", "preferred",
                                          "--topic", "t1", "--partition", "0", "--command-config", config,
                                          *extra], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_sasl_success(sasl_sandbox: Sandbox, tmp_path: Path, mechanism: str) -> None:
    sasl_sandbox.set_leader("t1", 0, 2)
    code, out, err = elect(sasl_sandbox, properties(tmp_path, "admin", ADMIN_SECRET, mechanism), "--output", "text")
    assert (code, out) == (0, "Successfully completed leader election (PREFERRED) for partitions t1-0\n")
    assert sasl_sandbox.partition_state("t1", 0).leader == 1


@pytest.mark.parametrize("output", ["text", "json", "table"])
def test_bad_password_is_an_authentication_failure_without_the_secret(sasl_sandbox: Sandbox, tmp_path: Path,
                                                                      output: str) -> None:
    before = sasl_sandbox.request_count(ELECT_LEADERS)
    code, out, err = elect(sasl_sandbox, properties(tmp_path, "admin", WRONG_SECRET), "--output", output, "--debug")
    assert code == 4
    assert "Authentication failed" in err
    assert WRONG_SECRET not in out + err
    assert sasl_sandbox.request_count(ELECT_LEADERS) == before


def test_user_without_alter_on_cluster_is_not_authorized(sasl_sandbox: Sandbox, tmp_path: Path) -> None:
    sasl_sandbox.set_leader("t1", 0, 2)
    code, out, err = elect(sasl_sandbox, properties(tmp_path, "bob", BOB_SECRET), "--output", "text")
    assert code == 4
    assert out == "Not authorized to perform leader election\n"
    assert err.splitlines()[0] == "Not authorized to perform leader election"
    assert sasl_sandbox.partition_state("t1", 0).leader == 2
    assert BOB_SECRET not in out + err


def test_secrets_never_reach_any_output_even_with_debug(sasl_sandbox: Sandbox, tmp_path: Path) -> None:
    key_secret = "k3y-Pa55phrase-xyz"
    config = properties(tmp_path, "admin", ADMIN_SECRET, extra=f"ssl.key.password={key_secret}\nbogus.key=1\n")
    for output in ("text", "json", "table"):
        code, out, err = elect(sasl_sandbox, config, "--output", output, "--debug")
        assert code == 0
        assert "bogus.key" in err  # an unknown key is a warning, not a failure
        for secret in (ADMIN_SECRET, key_secret):
            assert secret not in out + err


def test_tls_with_the_sandbox_ca(tmp_path: Path) -> None:
    with Sandbox(brokers=1, tls=True) as sb:
        sb.create_topic("t1", assignment={0: [1]})
        config = tmp_path / "tls.properties"
        config.write_text(f"security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location={sb.ca_file}\n")
        code, out, _ = elect(sb, str(config), "--output", "text")
        assert (code, out) == (0, "Valid replica already elected for partitions t1-0\n")
        # the system's CAs: the sandbox's certificate is not trusted
        config.write_text("security.protocol=SSL\ndefault.api.timeout.ms=3000\nrequest.timeout.ms=3000\n")
        code, out, err = elect(sb, str(config), "--output", "text")
        assert code == 3
        assert err.startswith(f"TLS handshake with {sb.bootstrap_servers} failed: ")
        assert "CERTIFICATE_VERIFY_FAILED" in err and "Hint: Check ssl.truststore.*" in err


def test_debug_log_of_a_real_process_hides_the_password(sasl_sandbox: Sandbox, tmp_path: Path) -> None:
    config = properties(tmp_path, "admin", ADMIN_SECRET, mechanism="PLAIN")  # PLAIN sends it in clear
    done = subprocess.run([sys.executable, "-m", "leader_election_cli", "--bootstrap-server",
                           sasl_sandbox.bootstrap_servers, "--election-type", "preferred", "--all-topic-partitions",
                           "--command-config", config, "--debug"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0
    assert "[hidden]" in done.stderr  # kafka-python did log its configuration
    assert ADMIN_SECRET not in done.stdout + done.stderr
