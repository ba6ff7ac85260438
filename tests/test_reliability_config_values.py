"""No value from the config file in any output (issue 18, class 5). Every value of each broken file carries a
unique marker, one setting is wrong (or a line ending in '\\' runs into the next), and all the output of a
real process run with --debug (stdout, stderr, the protocol log, a traceback) is searched for it."""

from __future__ import annotations

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

MARK = "Zq7MarkerValue"
UNUSED = "127.0.0.1:1"
PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"
OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
KRB5 = "com.sun.security.auth.module.Krb5LoginModule"
JAAS = f'sasl.jaas.config={PLAIN} required username="u{MARK}" password="p{MARK}";'
SASL = f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n{JAAS}\n"

BROKEN = {  # what is wrong -> the file
    "security.protocol": f"security.protocol={MARK}\n",
    "security.protocol runs into a secret": f"security.protocol=SASL_SSL\\\nssl.key.password:{MARK}\n",
    "sasl.mechanism": f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism={MARK}\n{JAAS}\n",
    "sasl.mechanism runs into the JAAS line": f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\\\n{JAAS}\n",
    "sasl.jaas.config": f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config={MARK} {MARK}\n",
    "sasl.jaas.config control flag": f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                                     f"sasl.jaas.config={PLAIN} {MARK} username=u password=p;\n",
    "keyTab": f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n"
              f'sasl.jaas.config={KRB5} required useKeyTab=true keyTab="/nonexistent/{MARK}" principal="c{MARK}";\n',
    "sasl.login.callback.handler.class": f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"
                                         f"sasl.jaas.config={OAUTH} required;\n"
                                         f"sasl.login.callback.handler.class={MARK}\n",
    "sasl.login.refresh.window.factor": f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"
                                        f"sasl.jaas.config={OAUTH} required;\n"
                                        f"sasl.login.refresh.window.factor={MARK}\n",
    "sasl.login.connect.timeout.ms": f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"
                                     f"sasl.jaas.config={OAUTH} required;\nsasl.login.connect.timeout.ms={MARK}\n",
    "sasl.oauthbearer.header.urlencode": f"security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"
                                         f"sasl.jaas.config={OAUTH} required;\n"
                                         f"sasl.oauthbearer.header.urlencode={MARK}\n",
    "request.timeout.ms": f"request.timeout.ms={MARK}\n",
    "request.timeout.ms runs into a secret": f"request.timeout.ms=100\\\n{JAAS}\n",
    "default.api.timeout.ms": f"default.api.timeout.ms=1{MARK}\n",
    "retry.backoff.ms": f"retry.backoff.ms={MARK}\n",
    "ssl.truststore.location": f"security.protocol=SSL\nssl.truststore.location=/nonexistent/{MARK}\n",
    "ssl.truststore.location runs into a secret": f"security.protocol=SSL\nssl.truststore.location=/etc/hosts\\\n"
                                                  f"ssl.key.password:{MARK}\n",
    "ssl.keystore.location": f"security.protocol=SSL\nssl.keystore.location=/nonexistent/{MARK}\n"
                             f"ssl.keystore.password={MARK}\n",
    "ssl.truststore.type": f"security.protocol=SSL\nssl.truststore.type={MARK}\nssl.truststore.location=/etc/hosts\n",
    "ssl.keystore.type": f"security.protocol=SSL\nssl.keystore.type={MARK}\nssl.keystore.key=k{MARK}\n",
    "ssl.endpoint.identification.algorithm": f"security.protocol=SSL\nssl.endpoint.identification.algorithm={MARK}\n",
    "ssl.endpoint.identification.algorithm runs into a secret": f"security.protocol=SSL\n"
                                                                f"ssl.endpoint.identification.algorithm=https\\\n"
                                                                f"ssl.key.password={MARK}\n",
    "ssl.truststore.certificates": f"security.protocol=SSL\nssl.truststore.certificates={MARK}\n",
    "client.id too long": "client.id=" + MARK * 3000 + "\n",
    "config.providers": f"config.providers={MARK}\n",
    "an unknown key (a warning, then the connection fails)": f"unknown.key.here={MARK}\n{SASL}",
    "a line that is no key (a warning)": f"{MARK}\n{SASL}",
    # issue 34: a key ending in '\\' joined to a lowercase value made a key that looked like one and was shown
    "ssl.key.password runs into its value (a warning)": f"ssl.key.password\\\n{MARK.lower()}\n{SASL}",
    "a secret's key runs into its value (a warning)": f"my.own.secret\\\n{MARK.lower()}\n{SASL}",
}

COMMANDS = {
    "kafka-leaders status": [sys.executable, "-c", "from leader_election_cli.cli.toolkit import main; main()",
                             "status", "--bootstrap-server", UNUSED, "--timeout", "1", "--debug", "--command-config"],
    "kafka-leader-election": [sys.executable, "-m", "leader_election_cli", "--bootstrap-server", UNUSED,
                              "--timeout", "1", "--election-type", "preferred", "--all-topic-partitions", "--debug",
                              "--command-config"],
}


def run_all(tmp_path: Path, argv: list[str]) -> dict[str, subprocess.CompletedProcess[str]]:
    def one(case: tuple[int, str]) -> tuple[str, subprocess.CompletedProcess[str]]:
        number, name = case
        path = tmp_path / f"broken-{number}.properties"
        path.write_text(BROKEN[name])
        return name, subprocess.run([*argv, str(path)], capture_output=True, text=True, timeout=60)

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(pool.map(one, enumerate(BROKEN)))


@pytest.mark.parametrize("command", ["kafka-leaders status"])  # both commands: benchmarks/hostile_world.py
def test_no_value_of_a_broken_config_file_reaches_any_output(command: str, tmp_path: Path) -> None:
    results = run_all(tmp_path, COMMANDS[command])
    for name, result in results.items():
        output = result.stdout + result.stderr
        assert MARK not in output and MARK.lower() not in output.lower(), f"{name}: {output[-2000:]}"
        assert result.returncode in (2, 3, 4), f"{name}: exit {result.returncode}: {output[-2000:]}"
    refused = {name for name, result in results.items() if result.returncode == 2}
    assert refused >= set(BROKEN) - {"an unknown key (a warning, then the connection fails)",
                                      "a line that is no key (a warning)", "request.timeout.ms runs into a secret",
                                      *(name for name in BROKEN if "runs into its value" in name)}


def test_messages_name_the_key_and_its_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.properties"
    path.write_text(f"# a comment\nclient.id=ops\nrequest.timeout.ms={MARK}\n")
    result = subprocess.run([*COMMANDS["kafka-leaders status"], str(path)], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 2
    assert "Invalid value for configuration request.timeout.ms (line 3): Not a number of type INT" in result.stderr
