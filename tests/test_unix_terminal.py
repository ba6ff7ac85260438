"""The tables on a real pseudo-terminal: colour only where wanted (NO_COLOR, TERM=dumb, --color/--no-color),
no highlighting of words, and usable at 60 columns (cells wrap, headers never)."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import termios
from collections.abc import Callable

import pytest
from commands import BIN

from leader_election_cli.sandbox import Sandbox

TOPIC = "a-rather-long-topic-name-for-the-orders-of-customers"
ESCAPE = re.compile(r"\x1b\[[0-9;]*m")
HEADERS = {
    "plan": ["Topic", "Partition", "Outcome", "Leader", "Error"],
    "status": ["Broker", "Alive", "Leads", "Preferred", "Not led", "Imbalance"],
    "demote": ["Topic", "Partition", "Outcome", "Replicas", "Leader", "Reason"],
    "rebalance": ["Broker", "Alive", "Leads", "Preferred", "Not led", "Imbalance", "Topic", "Partition", "Outcome"],
}


@pytest.fixture(scope="module")
def sb(module_sandbox_factory: Callable[..., Sandbox]) -> Sandbox:
    sandbox = module_sandbox_factory(3, topics={TOPIC: {p: [1, 2, 3] for p in range(3)}})
    sandbox.set_leader(TOPIC, 0, 2)
    return sandbox


def command(sb: Sandbox, name: str) -> list[str]:
    b = ["--bootstrap-server", sb.bootstrap_servers]
    return {"plan": [f"{BIN}/kafka-leaders", "plan", *b, "--all-topic-partitions"],
            "status": [f"{BIN}/kafka-leaders", "status", *b],
            "demote": [f"{BIN}/kafka-leaders", "demote", *b, "--broker", "2", "--dry-run"],
            "rebalance": [f"{BIN}/kafka-leaders", "rebalance", *b, "--threshold", "0", "--dry-run"],
            "drop-in": [f"{BIN}/kafka-leader-election", *b, "--election-type", "preferred", "--all-topic-partitions",
                        "--dry-run"]}[name]


def on_a_terminal(args: list[str], columns: int = 60, **env: str) -> str:
    """What `args` shows on a pseudo-terminal `columns` wide (stdin, stdout and stderr all on it)."""
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "COLUMNS")}
    environment.update({"TERM": "xterm-256color", **env})
    process = subprocess.Popen(args, stdin=child, stdout=child, stderr=child, env=environment, close_fds=True)
    os.close(child)
    chunks = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # EIO: the child side is closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(main)
    assert process.wait(timeout=60) == 0, b"".join(chunks).decode()
    return b"".join(chunks).decode().replace("\r\n", "\n")


ANALYZE_SUMMARY = f"""
import sys
from datetime import datetime
from rich.console import Console
from leader_election_cli.pipeline import report
from leader_election_cli.pipeline.summary import ClusterSummary, Summary
cluster = ClusterSummary("{TOPIC}", 3, datetime(2024, 5, 1, 12), 1200, 6, 5, 40, 3, 1, 0, 38, 0.25, 4, 2,
                         down_brokers=(6,), planned=38, plan_files=1, plan_dir="c")
summary = Summary("out", 3, 3600, {{}}, 3, 10.0, 1000, (cluster,), {{"cluster_health": "out/cluster_health"}},
                  "out/plans")
report.render(summary, Console(width=None if sys.stdout.isatty() else 10_000))
"""


def wide_command(sb: Sandbox, name: str) -> list[str]:
    """Every table the tools draw, on a sandbox with the long topic name (analyze: its summary, rendered by
    the command's own code from a made-up result, without Spark)."""
    import sys

    b = ["--bootstrap-server", sb.bootstrap_servers]
    extra = {"balance": [f"{BIN}/kafka-leaders", "balance", *b],
             "prefer": [f"{BIN}/kafka-leaders", "prefer", *b, "--topic", TOPIC, "--partition", "1", "--leader", "3",
                        "--dry-run"],
             "analyze": [sys.executable, "-c", ANALYZE_SUMMARY]}
    return extra[name] if name in extra else command(sb, name)


@pytest.mark.parametrize("name", ["plan", "status", "demote", "rebalance", "drop-in", "balance", "prefer", "analyze"])
def test_every_table_is_readable_at_60_columns(sb: Sandbox, name: str) -> None:
    """Within 60 columns, every header whole, and no name or word broken: a table whose columns can narrow
    to their longest word, or one block per row (each value after its header)."""
    shown = ESCAPE.sub("", on_a_terminal(wide_command(sb, name), columns=60))
    lines = [line for line in shown.splitlines() if not line.startswith("  kafka-")]  # a command to copy: whole
    assert all(len(line) <= 60 for line in lines), shown
    assert any(TOPIC in line for line in lines), shown  # the long name whole, on one line
    words = {word for line in lines for word in re.split(r"[\s│┃]+", line)}
    if "┃" in shown:  # a table: every header whole in its cell
        assert all(header in shown for header in HEADERS.get(name, [])), shown
    else:  # blocks: each value after its header (empty values left out)
        assert any(line.split("  ")[0] in ("Topic", "Broker", "cluster") for line in lines), shown
    broken = [w for w in words if w and TOPIC.startswith(w) and w != TOPIC and len(w) > 8]
    assert broken == [], shown


@pytest.mark.parametrize("name", ["plan", "status", "demote", "drop-in"])
def test_a_terminal_gets_colours_by_default(sb: Sandbox, name: str) -> None:
    assert ESCAPE.search(on_a_terminal(command(sb, name))), "the control case: colours on a terminal"


@pytest.mark.parametrize("name", ["plan", "status", "demote", "rebalance", "drop-in"])
@pytest.mark.parametrize("how", [{"NO_COLOR": "1"}, {"TERM": "dumb"}, {"flag": "--no-color"}])
def test_no_colour_when_asked(sb: Sandbox, name: str, how: dict[str, str]) -> None:
    env = {k: v for k, v in how.items() if k != "flag"}
    shown = on_a_terminal(command(sb, name) + ([how["flag"]] if "flag" in how else []), **env)
    assert "\x1b[" not in shown, shown


def test_color_forces_colours_into_a_pipe(sb: Sandbox) -> None:
    done = subprocess.run(command(sb, "plan") + ["--output", "table", "--color"], capture_output=True, text=True,
                          timeout=60)
    assert ESCAPE.search(done.stdout), done.stdout


def test_no_word_is_highlighted(sb: Sandbox) -> None:
    """Only the outcome is styled: rich's highlighter would colour the numbers of the summary line."""
    shown = on_a_terminal(command(sb, "plan"), columns=100)
    summary = next(line for line in shown.splitlines() if "partition(s):" in line)
    assert "\x1b[" not in summary, repr(summary)
    rows = [line for line in shown.splitlines() if line.startswith("│")]
    assert all(ESCAPE.sub("", line).count("│") == 6 for line in rows)
    assert all(re.search(r"│\s+\d+ │", line) and not re.search(r"\x1b\[[0-9;]*m\d", line) for line in rows[:1])
