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


@pytest.mark.parametrize("name", ["plan", "status", "demote", "rebalance"])
def test_tables_fit_60_columns_with_whole_headers(sb: Sandbox, name: str) -> None:
    shown = ESCAPE.sub("", on_a_terminal(command(sb, name), columns=60))
    table_lines = [line for line in shown.splitlines() if line[:1] in "┏┃┡│└"]
    assert table_lines and all(len(line) <= 60 for line in table_lines), shown
    header_lines = [line for line in table_lines if line.startswith("┃")]
    cells = [cell.strip() for line in header_lines for cell in line.strip("┃").split("┃")]
    assert all(header in cells for header in HEADERS[name]), shown  # each header whole, on one line
    if name != "status":  # the long topic name wraps, whole
        first_cells = "".join(line.split("│")[1].strip() for line in table_lines if line.startswith("│"))
        assert TOPIC not in shown and TOPIC in first_cells, shown


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
