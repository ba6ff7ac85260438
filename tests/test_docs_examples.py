"""docs/commands/*.md: one page per command, each example run for real and its output compared.

A ```console block is a shell session: `$ ` starts a command (a trailing backslash continues it on the
next line) and the lines up to the next command are its output, stdout and stderr as a terminal shows
them. A block whose first line is

    # with a sandbox running: kafka-leaders sandbox --port-base 9092 --scenario imbalanced ...

runs against a fresh sandbox built with those options but on ports the OS chooses: the page's
addresses 127.0.0.1:9092, :9093, ... stand for brokers 1, 2, ... in the commands and in the output. A
command that starts its own sandbox with --port-base N also gets OS-chosen ports, and the addresses it
prints are numbered from N in order of appearance. `...` in an output line matches any text (a cluster
id, a time). A block is one bash session (`export` and `$?` carry over) in a fresh directory, with the
project's commands first on PATH.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from generated_docs import REGENERATE, generator

from leader_election_cli.cli.sandbox_command import sandbox as sandbox_command
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.scenarios import build

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "commands"
BIN = Path(sys.executable).parent
SANDBOX_LINE = "# with a sandbox running: kafka-leaders sandbox "
ADDRESS = re.compile(r"(?<![\d.])127\.0\.0\.1:(\d+)(?!\d)")
PORT_BASE = re.compile(r"\s--port-base[ =](\d+)")
STEP_END = "::end of docs example step::"


@dataclass(frozen=True)
class Step:
    command: str
    output: list[str]


@dataclass(frozen=True)
class Example:
    page: str
    line: int  # where the block starts in the page
    sandbox: list[str] | None  # `kafka-leaders sandbox` arguments, when the block needs one
    steps: list[Step]

    @property
    def id(self) -> str:
        return f"{self.page}:{self.line}"


def examples(path: Path) -> Iterator[Example]:
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() != "```console":
            i += 1
            continue
        start, body = i + 1, []
        i += 1
        while lines[i].strip() != "```":
            body.append(lines[i])
            i += 1
        sandbox = None
        if body and body[0].startswith(SANDBOX_LINE):
            sandbox = shlex.split(body.pop(0)[len(SANDBOX_LINE):])
        yield Example(path.name, start, sandbox, list(_steps(body)))


def _steps(body: list[str]) -> Iterator[Step]:
    command: list[str] = []
    output: list[str] = []
    continued = False
    for line in body:
        if continued:
            command.append(line)
        elif line.startswith("$ "):
            if command:
                yield Step("\n".join(command), output)
            command, output = [line[2:]], []
        else:
            output.append(line)
        continued = bool(command) and command[-1].endswith("\\") and not output
    if command:
        yield Step("\n".join(command), output)


ALL = [example for page in sorted(DOCS.glob("*.md")) for example in examples(page)]


def _start(arguments: list[str]) -> tuple[Sandbox, dict[str, str]]:
    """The sandbox the block names, on OS-chosen ports; {page address: real address}."""
    o = sandbox_command.make_context("sandbox", list(arguments)).params
    assert o["port_base"], "give the block's sandbox --port-base, so the page shows the addresses it would get"
    assert not (o["sasl_users"] or o["tls"] or o["zookeeper"] or o["command"]), "docs sandboxes are plain"
    sb = Sandbox(o["brokers"], o["mode"]).start()
    build(sb, o["scenario"], o["topics"], o["partitions"], o["replication_factor"] or min(3, o["brokers"]))
    return sb, {f"127.0.0.1:{o['port_base'] + b - 1}": f"{host}:{port}" for b, (host, port) in sb.brokers.items()}


def _session(steps: list[Step], shown: dict[str, str], cwd: Path) -> list[list[str]]:
    """Run the steps in one bash session (so `export`, `cd` and `$?` carry over); each step's output with
    the page's addresses put back."""
    script, bases = [], []
    for step in steps:
        command = ADDRESS.sub(lambda m: shown.get(m.group(), m.group()), step.command)
        own_base = PORT_BASE.search(command)
        bases.append(int(own_base.group(1)) if own_base else None)
        script += [PORT_BASE.sub("", command), f"__status=$?; printf '\\n%s\\n' '{STEP_END}'; (exit $__status)"]
    environment = {k: v for k, v in os.environ.items() if k != "KAFKA_BOOTSTRAP_SERVERS"}
    environment.update(PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", COLUMNS="100", TERM="dumb",
                       NO_COLOR="1", PYTHONUNBUFFERED="1")
    result = subprocess.run(["bash", "--norc", "-c", "\n".join(script)], cwd=cwd, env=environment,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            timeout=600)
    segments = result.stdout.split(f"\n{STEP_END}\n")
    assert len(segments) == len(steps) + 1, f"the session ended early:\n{result.stdout}"
    real = {value: key for key, value in shown.items()}
    return [_page_addresses(segment, real, base) for segment, base in zip(segments, bases)]


def _page_addresses(output: str, real: dict[str, str], own_base: int | None) -> list[str]:
    """Output lines with real addresses replaced by the page's; a command's own sandbox numbered from its base."""
    numbered: dict[str, str] = {}

    def page_address(match: re.Match[str]) -> str:
        if match.group() in real:
            return real[match.group()]
        if own_base is None:
            return match.group()
        return numbered.setdefault(match.group(), f"127.0.0.1:{own_base + len(numbered)}")

    lines = [ADDRESS.sub(page_address, line).rstrip() for line in output.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _matches(expected: list[str], actual: list[str]) -> bool:
    if len(expected) != len(actual):
        return False
    return all(re.fullmatch(".*?".join(map(re.escape, want.rstrip().split("..."))), got)
               for want, got in zip(expected, actual))


def _params() -> list[pytest.param]:
    return [pytest.param(example, id=example.id,
                         marks=[pytest.mark.spark] if any("kafka-leaders analyze" in s.command
                                                          for s in example.steps) else [])
            for example in ALL]


@pytest.mark.parametrize("example", _params())
def test_the_example_prints_what_the_page_shows(example: Example, tmp_path: Path) -> None:
    sb, shown = _start(example.sandbox) if example.sandbox is not None else (None, {})
    try:
        outputs = _session(example.steps, shown, tmp_path)
    finally:
        if sb is not None:
            sb.stop()
    for step, actual in zip(example.steps, outputs):
        expected = [line.rstrip() for line in step.output]
        while expected and not expected[-1]:
            expected.pop()
        assert _matches(expected, actual), f"{example.id}: `{step.command}` printed:\n" + "\n".join(actual)


def test_every_command_has_a_page_with_examples() -> None:
    slugs = {page.slug for page in generator().pages()}
    assert {path.stem for path in DOCS.glob("*.md")} == slugs
    without = sorted(slugs - {example.page[:-3] for example in ALL if example.steps})
    assert not without, f"pages without a console example: {without}"


def test_the_reference_blocks_are_current() -> None:
    stale = [str(path) for path, text in generator().command_pages().items()
             if not (ROOT / path).exists() or (ROOT / path).read_text() != text]
    assert not stale, f"stale reference in {stale}: run {REGENERATE}"


def test_the_parser_reads_sessions_as_a_terminal_shows_them(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("text\n```console\n# with a sandbox running: kafka-leaders sandbox --port-base 9092\n"
                    "$ a \\\n    --b\nout 1\n\n$ c\n```\n```text\n$ not run\n```\n")
    (example,) = examples(page)
    assert (example.line, example.sandbox) == (2, ["--port-base", "9092"])
    assert example.steps == [Step("a \\\n    --b", ["out 1", ""]), Step("c", [])]
    assert _matches(["id ... taken at ..."], ["id abc taken at 12:00"])
    assert not _matches(["id ..."], ["id 1", "more"])
