"""docs/commands/*.md: one page per command, each example run for real and its output compared.

A ```console block is a shell session: `$ ` starts a command (a trailing backslash continues it on the
next line) and the lines up to the next command are its output, stdout and stderr as a terminal shows
them. A block whose first line is

    # with a sandbox running: kafka-leaders sandbox --scenario imbalanced --ready-file sandbox.json ...

runs against a fresh sandbox built with those options, on ports the OS chooses (as the command picks
them: a page never names a port, so readers' sandboxes never collide): its ready file is written in the
block's directory and $BOOTSTRAP holds its bootstrap servers, as a reader gets them from the ready file.
In the output, 127.0.0.1:PORT1, PORT2, ... stand for brokers 1, 2, ...; the addresses printed by a
command that starts its own sandbox are numbered PORT1, PORT2, ... in order of appearance. `...` in an
output line matches any text (a cluster id, a time). A block is one bash session (`export` and `$?` carry
over) in a fresh directory, with the project's commands first on PATH.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from commands import BIN
from generated_docs import REGENERATE, generator

from leader_election_cli.cli.sandbox_command import sandbox as sandbox_command
from leader_election_cli.cli.sandbox_command import write_ready_file
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.remote import ControlServer
from leader_election_cli.sandbox.scenarios import build

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs" / "commands"
SANDBOX_LINE = "# with a sandbox running: kafka-leaders sandbox "
ADDRESS = re.compile(r"(?<![\d.])127\.0\.0\.1:(\d+)(?!\d)")
OWN_SANDBOX = re.compile(r"(^|[\s;&|(])kafka-leaders sandbox\s")
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


def _start(arguments: list[str], cwd: Path) -> tuple[Sandbox, dict[str, str]]:
    """The sandbox the block names, on OS-chosen ports, its ready file (if named) in `cwd`;
    {real address: page address}."""
    o = sandbox_command.make_context("sandbox", list(arguments)).params
    assert not o["port_base"], "a docs sandbox picks its own ports: no --port-base"
    assert not (o["sasl_users"] or o["tls"] or o["zookeeper"] or o["command"]), "docs sandboxes are plain"
    sb = Sandbox(o["brokers"], o["mode"]).start()
    build(sb, o["scenario"], o["topics"], o["partitions"], o["replication_factor"] or min(3, o["brokers"]))
    if o["ready_file"]:  # with its control socket, as the command serves it (sandbox-ctl's examples)
        control = ControlServer(sb, o["catch_up_seconds"]).start()
        sb.stop = _stopping_first(control.stop, sb.stop)  # type: ignore[method-assign]
        write_ready_file(cwd / o["ready_file"], sb, control)
    return sb, {f"{host}:{port}": f"127.0.0.1:PORT{b}" for b, (host, port) in sb.brokers.items()}


def _stopping_first(first: Callable[[], None], then: Callable[[], None]) -> Callable[[], None]:
    def stop() -> None:
        first()
        then()
    return stop


def _session(steps: list[Step], sb: Sandbox | None, shown: dict[str, str], cwd: Path) -> list[list[str]]:
    """Run the steps in one bash session (so `export`, `cd` and `$?` carry over), with $BOOTSTRAP set to
    the block's sandbox; each step's output with the page's addresses put in."""
    script = [f"export BOOTSTRAP={shlex.quote(sb.bootstrap_servers)}"] if sb is not None else []
    own = []
    for step in steps:
        assert not ADDRESS.search(step.command), f"`{step.command}` names a port: use $BOOTSTRAP or {{bootstrap}}"
        own.append(bool(OWN_SANDBOX.search(step.command)))
        script += [step.command, f"__status=$?; printf '\\n%s\\n' '{STEP_END}'; (exit $__status)"]
    environment = {k: v for k, v in os.environ.items() if k != "KAFKA_BOOTSTRAP_SERVERS"}
    environment.update(PATH=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", COLUMNS="100", TERM="dumb",
                       NO_COLOR="1", PYTHONUNBUFFERED="1")
    result = subprocess.run(["bash", "--norc", "-c", "\n".join(script)], cwd=cwd, env=environment,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            timeout=600)
    segments = result.stdout.split(f"\n{STEP_END}\n")
    assert len(segments) == len(steps) + 1, f"the session ended early:\n{result.stdout}"
    # the last segment is what follows the last step
    return [_page_addresses(segment, shown, numbered) for segment, numbered in zip(segments, own, strict=False)]


def _page_addresses(output: str, shown: dict[str, str], own_sandbox: bool) -> list[str]:
    """Output lines with real addresses replaced by the page's: the block's sandbox's brokers by number, a
    command's own sandbox's in order of appearance (both as 127.0.0.1:PORT1, PORT2, ...)."""
    numbered: dict[str, str] = {}

    def page_address(match: re.Match[str]) -> str:
        if match.group() in shown:
            return shown[match.group()]
        if not own_sandbox:
            return match.group()
        return numbered.setdefault(match.group(), f"127.0.0.1:PORT{len(numbered) + 1}")

    lines = [ADDRESS.sub(page_address, line).rstrip() for line in output.splitlines()]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _matches(expected: list[str], actual: list[str]) -> bool:
    if len(expected) != len(actual):
        return False
    return all(re.fullmatch(".*?".join(map(re.escape, want.rstrip().split("..."))), got)
               for want, got in zip(expected, actual, strict=True))


def _params() -> list[pytest.param]:
    return [pytest.param(example, id=example.id,
                         marks=[pytest.mark.spark] if any("kafka-leaders analyze" in s.command
                                                          for s in example.steps) else [])
            for example in ALL]


@pytest.mark.parametrize("example", _params())
def test_the_example_prints_what_the_page_shows(example: Example, tmp_path: Path) -> None:
    sb, shown = _start(example.sandbox, tmp_path) if example.sandbox is not None else (None, {})
    try:
        outputs = _session(example.steps, sb, shown, tmp_path)
    finally:
        if sb is not None:
            sb.stop()
    for step, actual in zip(example.steps, outputs, strict=True):
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
    page.write_text("text\n```console\n# with a sandbox running: kafka-leaders sandbox --ready-file s.json\n"
                    "$ a \\\n    --b\nout 1\n\n$ c\n```\n```text\n$ not run\n```\n")
    (example,) = examples(page)
    assert (example.line, example.sandbox) == (2, ["--ready-file", "s.json"])
    assert example.steps == [Step("a \\\n    --b", ["out 1", ""]), Step("c", [])]
    assert _matches(["id ... taken at ..."], ["id abc taken at 12:00"])
    assert not _matches(["id ..."], ["id 1", "more"])
