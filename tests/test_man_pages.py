"""Man pages: one per command and subcommand, current with the click definitions, and clean roff."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import click
import pytest
from generated_docs import REGENERATE, generator
from services import require_command

from leader_election_cli.errors import ExitCode

ROOT = Path(__file__).resolve().parent.parent


generate_docs = generator()
PAGES = {page.slug: page for page in generate_docs.pages()}
GENERATED = generate_docs.man_pages()


def test_every_command_and_subcommand_has_a_page() -> None:
    from leader_election_cli.cli.toolkit import SUBCOMMANDS

    expected = {"kafka-leader-election", "kafka-leaders", *(f"kafka-leaders-{name}" for name in SUBCOMMANDS)}
    assert {path.stem for path in GENERATED} == expected


def test_the_committed_pages_are_current() -> None:
    stale = [str(path) for path, text in GENERATED.items()
             if not (ROOT / path).exists() or (ROOT / path).read_text() != text]
    stale += [str(path) for path in generate_docs.obsolete(GENERATED) if path.parts[0] == "man"]
    assert not stale, f"stale man pages {stale}: run {REGENERATE}"


def render(text: str) -> tuple[str, str]:
    """(the page as man shows it, groff's warnings), with every warning enabled."""
    require_command("groff", "groff-base")
    result = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-rLL=100n"], input=text, capture_output=True,
                            text=True, check=True, timeout=60)
    return re.sub(r".\x08", "", result.stdout), result.stderr


@pytest.mark.parametrize("slug", sorted(PAGES))
def test_a_page_renders_without_warnings_and_shows_every_option_as_typed(slug: str) -> None:
    page = PAGES[slug]
    shown, warnings = render(GENERATED[Path("man") / f"{slug}.1"])
    assert warnings == ""
    flat = " ".join(shown.split())
    for param in page.command.get_params(page.ctx):
        if isinstance(param, click.Option) and not param.hidden:
            for name in param.opts:  # plain ASCII hyphens, so a copied option works in a shell
                assert name in flat, f"{name} missing from {slug}(1)"
    for section in ("NAME", "SYNOPSIS", "OPTIONS", "EXIT STATUS", "SEE ALSO"):
        assert re.search(rf"^{section}$", shown, re.MULTILINE), f"{slug}(1) has no {section} section"


@pytest.mark.parametrize("slug", sorted(PAGES))
def test_a_page_lists_the_exit_codes_its_command_documents(slug: str) -> None:
    """Each command says what its own codes mean (`snapshot` never refuses for safety; `status` exits 1
    for --fail-above); its page lists exactly those, all documented ones, 0 and 2 always."""
    text = GENERATED[Path("man") / f"{slug}.1"]
    section = text.split(".SH EXIT STATUS\n", 1)[1].split(".SH ", 1)[0]
    listed = re.findall(r"^\.B (\d+)$", section, re.MULTILINE)
    in_help = re.findall(r"^\s+(\d+)\s", PAGES[slug].command.epilog.split("Exit codes:", 1)[1], re.MULTILINE)
    assert listed == in_help
    assert {"0", "2"} <= set(listed) <= {str(int(code)) for code in ExitCode}


@pytest.mark.parametrize("slug", sorted(slug for slug, page in PAGES.items()
                                        if not isinstance(page.command, click.Group)))
def test_every_command_page_has_examples(slug: str) -> None:
    text = GENERATED[Path("man") / f"{slug}.1"]
    assert ".SH EXAMPLES\n" in text, f"{slug}: add an 'Examples:' paragraph to the command's epilog"
    examples = text.split(".SH EXAMPLES\n", 1)[1].split(".SH ", 1)[0]
    assert PAGES[slug].name.replace("-", "\\-") in examples


def test_the_toolkit_pages_name_the_environment_variable_and_the_drop_in_does_not() -> None:
    assert "KAFKA_BOOTSTRAP_SERVERS" not in GENERATED[Path("man/kafka-leader-election.1")]
    assert ".B KAFKA_BOOTSTRAP_SERVERS" in GENERATED[Path("man/kafka-leaders-status.1")]


def test_roff_escaping_keeps_backslashes_and_leading_dots_literal() -> None:
    escaped = generate_docs._roff(".hidden 'quote' back\\slash --flag")
    shown, warnings = render(f'.TH T 1\n.SH X\n.nf\n{escaped}\n.fi\n')
    assert warnings == ""
    assert ".hidden 'quote' back\\slash --flag" in shown


def test_the_readmes_manpath_line_finds_the_pages_of_an_old_pipx(tmp_path: Path) -> None:
    """pipx < 1.5 leaves the pages in the tool's virtualenv: the README's MANPATH line finds them there,
    and the system's pages are still found (its trailing colon)."""
    require_command("man", "man-db")
    readme = (ROOT / "README.md").read_text()
    (line,) = [line for line in readme.splitlines() if line.startswith('export MANPATH="')]
    venvs = tmp_path / "pipx" / "venvs"
    pages = venvs / "leader-election-cli" / "share" / "man" / "man1"
    pages.mkdir(parents=True)
    for page in (ROOT / "man").glob("*.1"):
        shutil.copy(page, pages)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}  # no pipx on PATH: the fallback directory
    system = subprocess.run(["man", "-w", "man"], capture_output=True, text=True, env=env, timeout=60).stdout.strip()
    # the README's line, with this test's pipx home in place of the user's
    script = re.sub(r"~/\.local/pipx/venvs", str(venvs), line) + "; man -w kafka-leader-election; man -w man"
    done = subprocess.run(["bash", "--norc", "-c", script], capture_output=True, text=True, env=env, timeout=60)
    found = done.stdout.splitlines()
    assert found and found[0] == str(pages / "kafka-leader-election.1"), done.stderr
    assert not system or found[1:] == [system]
