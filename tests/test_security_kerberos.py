"""SASL/GSSAPI against the sandbox and a real MIT Kerberos KDC this module starts (Debian's krb5-kdc):
keytab and ticket-cache logins elect; keytab problems are exit 2, an unreachable KDC exit 3, a key the
KDC refuses exit 4. The failures found before a ticket is asked for need keytabs and a krb5.conf, never a
KDC. Where the KDC's programs or gssapi are missing the tests skip with the reason (tests/services.py), and
fail under CI=true."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import security_fixtures
from click.testing import CliRunner
from services import require_gssapi

from leader_election_cli.cli.drop_in_command import command as drop_in
from leader_election_cli.cli.toolkit import cli as toolkit
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.sasl_gssapi import KerberosAcceptor

KRB5 = "com.sun.security.auth.module.Krb5LoginModule"
TOOLS = ("drop-in", "elect")


@pytest.fixture(scope="module")
def sb(kdc: security_fixtures.Kdc) -> Iterator[Sandbox]:
    with Sandbox(brokers=2, kerberos=KerberosAcceptor(str(kdc.broker_keytab))) as sandbox:
        sandbox.create_topic("t1", assignment={0: [1, 2]})
        yield sandbox


def config(jaas_options: str) -> str:
    return ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n"
            f"sasl.jaas.config={KRB5} required {jaas_options};\ndefault.api.timeout.ms=5000\nrequest.timeout.ms=4000\n")


def elect(sb: Sandbox, tool: str, text: str, tmp_path: Path) -> tuple[int, str, int]:
    path = tmp_path / "client.properties"
    path.write_text(text)
    sb.set_leader("t1", 0, 2)
    before = sb.request_count()
    if tool == "drop-in":
        result = CliRunner().invoke(drop_in, ["--bootstrap-server", sb.bootstrap_servers, "--election-type",
                                              "preferred", "--topic", "t1", "--partition", "0", "--command-config",
                                              str(path)], catch_exceptions=False)
    else:
        result = CliRunner().invoke(toolkit, ["elect", "--bootstrap-server", sb.bootstrap_servers, "-p", "t1:0",
                                              "--command-config", str(path)], catch_exceptions=False)
    output = result.stdout + result.stderr
    assert "Traceback" not in output
    return result.exit_code, output, sb.request_count() - before


@pytest.mark.parametrize("tool", TOOLS)
def test_keytab_login_election(sb: Sandbox, kdc: security_fixtures.Kdc, tmp_path: Path, tool: str) -> None:
    code, output, _ = elect(sb, tool, config(f'useKeyTab=true storeKey=true keyTab="{kdc.client_keytab}" '
                                             f'principal="{kdc.client_principal}"'), tmp_path)
    assert code == 0, output
    assert sb.partition_state("t1", 0).leader == 1


@pytest.mark.parametrize("tool", TOOLS)
def test_ticket_cache_login_election(sb: Sandbox, kdc: security_fixtures.Kdc, tmp_path: Path, tool: str) -> None:
    cache = tmp_path / "krb5cc"
    kdc.kinit(cache)
    code, output, _ = elect(sb, tool, config(f'useTicketCache=true ticketCache="FILE:{cache}"'), tmp_path)
    assert code == 0, output
    assert sb.partition_state("t1", 0).leader == 1


@dataclass(frozen=True)
class OfflineRealm:
    """Keytabs and a krb5.conf whose KDC does not answer (127.0.0.1:1): what the failures found before any
    ticket is asked for need, with no KDC."""

    sandbox: Sandbox
    conf: Path
    client_keytab: Path
    realm: str = security_fixtures.Kdc.REALM

    @property
    def client_principal(self) -> str:
        return f"leader-tool@{self.realm}"


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OfflineRealm]:
    require_gssapi()
    directory, realm = tmp_path_factory.mktemp("offline-realm"), security_fixtures.Kdc.REALM
    conf = directory / "krb5.conf"
    conf.write_text(f"[libdefaults]\n default_realm = {realm}\n dns_lookup_kdc = false\n rdns = false\n"
                    f" udp_preference_limit = 1\n[realms]\n {realm} = {{\n  kdc = 127.0.0.1:1\n }}\n")
    brokers = security_fixtures.write_keytab(directory / "kafka.keytab", [f"kafka/127.0.0.1@{realm}"])
    client = security_fixtures.write_keytab(directory / "client.keytab", [f"leader-tool@{realm}"])
    with Sandbox(brokers=2, kerberos=KerberosAcceptor(str(brokers))) as sandbox:
        sandbox.create_topic("t1", assignment={0: [1, 2]})
        yield OfflineRealm(sandbox, conf, client)


@pytest.mark.parametrize("case, expected, words", [
    ("keytab missing", 2, "cannot be read"),
    ("principal not in keytab", 2, "is not in the keyTab"),
    ("empty ticket cache", 4, "No valid Kerberos ticket"),
    ("KDC unreachable", 3, "Could not reach the Kerberos KDC"),
])
def test_failures_before_a_ticket(offline: OfflineRealm, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str,
                                  expected: int, words: str) -> None:
    """Found before any ticket is asked for: no KDC needed, gssapi only."""
    monkeypatch.setenv("KRB5_CONFIG", str(offline.conf))
    text = config({
        "keytab missing": f'useKeyTab=true keyTab="{tmp_path}/none.keytab" principal="{offline.client_principal}"',
        "principal not in keytab": f'useKeyTab=true keyTab="{offline.client_keytab}" '
                                   f'principal="someone-else@{offline.realm}"',
        "empty ticket cache": f'useTicketCache=true ticketCache="FILE:{tmp_path}/no-cache"',
        "KDC unreachable": f'useKeyTab=true keyTab="{offline.client_keytab}" principal="{offline.client_principal}"',
    }[case])
    code, output, requests = elect(offline.sandbox, "elect", text, tmp_path)
    assert code == expected and requests == 0, output
    assert words in output
    assert offline.sandbox.partition_state("t1", 0).leader == 2


def test_a_key_the_kdc_refuses(sb: Sandbox, kdc: security_fixtures.Kdc, tmp_path: Path) -> None:
    code, output, requests = elect(sb, "elect", config(f'useKeyTab=true keyTab="{kdc.stale_keytab}" '
                                                       f'principal="stale@{kdc.REALM}"'), tmp_path)
    assert code == 4 and requests == 0, output
    assert "refused" in output
    assert sb.partition_state("t1", 0).leader == 2
