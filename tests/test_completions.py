"""Shell completion: the committed scripts are click's own and current; `--topic` completes topic names.

Completions run as a shell runs them: the committed bash script is sourced in a real bash, or the
command is started with click's `_<PROG>_COMPLETE` variable, against a sandbox over TCP.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from commands import BIN
from generated_docs import REGENERATE, generator

from leader_election_cli.cli.completion import CACHE_SECONDS, cache_file
from leader_election_cli.cli.options import rejoin_colon_words
from leader_election_cli.sandbox import Sandbox

ROOT = Path(__file__).resolve().parent.parent
METADATA = 3


@pytest.fixture(scope="module")
def sb(module_sandbox_factory: Callable[..., Sandbox]) -> Sandbox:
    sandbox = module_sandbox_factory(3)
    for name in ("orders", "orders.eu", "payments"):
        sandbox.create_topic(name, partitions=2, replication_factor=3)
    return sandbox


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    """A clean environment: the venv's commands first, an empty cache, no KAFKA_BOOTSTRAP_SERVERS."""
    environment = {k: v for k, v in os.environ.items() if k != "KAFKA_BOOTSTRAP_SERVERS"}
    return {**environment, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
            "XDG_CACHE_HOME": str(tmp_path / "cache")}


def complete(words: str, env: dict[str, str]) -> tuple[list[str], str]:
    """(the values offered, stderr) for completing the last word of `words`, click's bash protocol."""
    prog = words.split()[0]
    cword = len(words.split()) - (0 if words.endswith(" ") else 1)
    variable = "_" + prog.replace("-", "_").upper() + "_COMPLETE"
    result = subprocess.run([str(BIN / prog)], capture_output=True, text=True, timeout=60,
                            env={**env, variable: "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(cword)})
    assert result.returncode == 0, result.stderr
    return [line.split(",", 1)[1] for line in result.stdout.splitlines() if line.startswith("plain,")], result.stderr


def test_the_committed_scripts_are_what_click_generates() -> None:
    scripts = generator().completion_scripts()
    assert sorted(map(str, scripts)) == [
        "completions/bash/kafka-leader-election", "completions/bash/kafka-leaders",
        "completions/fish/kafka-leader-election.fish", "completions/fish/kafka-leaders.fish",
        "completions/zsh/_kafka-leader-election", "completions/zsh/_kafka-leaders"]
    stale = [str(path) for path, text in scripts.items()
             if not (ROOT / path).exists() or (ROOT / path).read_text() != text]
    assert not stale, f"stale completion scripts {stale}: run {REGENERATE}"


def test_the_bash_script_completes_topic_names_in_a_real_bash(sb: Sandbox, env: dict[str, str]) -> None:
    line = f"kafka-leader-election --bootstrap-server {sb.bootstrap_servers} --topic ord"
    script = (f"source {ROOT / 'completions/bash/kafka-leader-election'}\n"
              f"COMP_WORDS=({line}); COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1))\n"
              "_kafka_leader_election_completion kafka-leader-election\n"
              'printf "%s\\n" "${COMPREPLY[@]}"\n')
    result = subprocess.run(["bash", "--norc", "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert (result.returncode, result.stdout.split(), result.stderr) == (0, ["orders", "orders.eu"], "")


def test_a_host_port_that_bash_split_at_its_colons_is_put_back_together(sb: Sandbox, env: dict[str, str]) -> None:
    """Interactive bash splits words at ':' (COMP_WORDBREAKS): the command saw `127.0.0.1 : PORT` and
    offered nothing. A real shell's split is what COMP_WORDS carries here."""
    split = sb.bootstrap_servers.replace(":", " : ")
    for command in ("kafka-leader-election", "kafka-leaders elect"):
        offered, err = complete(f"{command} --bootstrap-server {split} --topic p", env)
        assert (offered, err) == (["payments"], ""), command
        offered, _ = complete(f"{command} --bootstrap-server={split} --topic p", env)
        assert offered == ["payments"], command


def test_rejoin_colon_words() -> None:
    assert rejoin_colon_words(["--bootstrap-server", "h1", ":", "1,h2", ":", "2", "--topic"]) == [
        "--bootstrap-server", "h1:1,h2:2", "--topic"]
    assert rejoin_colon_words(["-p", "orders", ":", "0,1"]) == ["-p", "orders:0,1"]
    assert rejoin_colon_words([":", "x"]) == [":", "x"]


@pytest.mark.parametrize("command", ["kafka-leader-election", "kafka-leaders elect", "kafka-leaders prefer"])
def test_every_topic_option_completes_from_the_bootstrap_server_flag(sb: Sandbox, env: dict[str, str],
                                                                     command: str) -> None:
    offered, err = complete(f"{command} --bootstrap-server {sb.bootstrap_servers} --topic p", env)
    assert (offered, err) == (["payments"], "")


def test_kafka_bootstrap_servers_is_enough(sb: Sandbox, env: dict[str, str]) -> None:
    env["KAFKA_BOOTSTRAP_SERVERS"] = sb.bootstrap_servers
    assert complete("kafka-leaders elect --topic ", env)[0] == ["orders", "orders.eu", "payments"]
    assert complete("kafka-leader-election --topic o", env)[0] == ["orders", "orders.eu"]


def test_names_are_cached_briefly_per_cluster(sb: Sandbox, env: dict[str, str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    words = f"kafka-leaders elect --bootstrap-server {sb.bootstrap_servers} --topic "
    before = sb.request_count(METADATA)
    assert complete(words, env)[0] == ["orders", "orders.eu", "payments"]
    asked = sb.request_count(METADATA)
    assert asked > before
    sb.create_topic("audit", partitions=1, replication_factor=1)
    assert complete(words, env)[0] == ["orders", "orders.eu", "payments"]  # from the cache: not asked again
    assert sb.request_count(METADATA) == asked
    monkeypatch.setenv("XDG_CACHE_HOME", env["XDG_CACHE_HOME"])
    cached = cache_file(sb.bootstrap_servers, None)
    expired = cached.stat().st_mtime - CACHE_SECONDS - 1
    os.utime(cached, (expired, expired))
    assert complete(words, env)[0] == ["audit", "orders", "orders.eu", "payments"]
    assert sb.request_count(METADATA) > asked


def test_an_unreachable_cluster_offers_nothing_and_says_nothing(env: dict[str, str],
                                                                  refused_address: Callable[[], str]) -> None:
    offered, err = complete(f"kafka-leaders prefer --bootstrap-server {refused_address()} --topic o", env)
    assert (offered, err) == ([], "")
    assert not list(Path(env["XDG_CACHE_HOME"]).rglob("*.json"))  # a failure is not remembered


def test_an_unreadable_config_file_offers_nothing_and_says_nothing(sb: Sandbox, env: dict[str, str],
                                                                   tmp_path: Path) -> None:
    words = (f"kafka-leader-election --bootstrap-server {sb.bootstrap_servers} "
             f"--command-config {tmp_path / 'missing.properties'} --topic o")
    assert complete(words, env) == ([], "")


def test_without_a_bootstrap_server_nothing_is_offered(env: dict[str, str]) -> None:
    assert complete("kafka-leaders elect --topic o", env) == ([], "")


def test_commands_and_options_complete_too(env: dict[str, str]) -> None:
    assert complete("kafka-leaders re", env)[0] == ["rebalance", "restore"]
    assert "--all-topic-partitions" in complete("kafka-leader-election --all", env)[0]
