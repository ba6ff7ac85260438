"""Packaging: the wheel `pipx install .` builds, the version, lazy start-up, KAFKA_BOOTSTRAP_SERVERS."""

from __future__ import annotations

import email
import importlib.metadata
import importlib.util
import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import click
import pytest
from commands import BIN
from generated_docs import generator

from leader_election_cli import __version__
from leader_election_cli.cli.common import BOOTSTRAP_ENV

ROOT = Path(__file__).resolve().parent.parent
# Never imported by --help: the client library, schema validation, Spark, TLS and rich's rendering.
HEAVY = ("kafka", "jsonschema", "pyspark", "pyarrow", "kazoo", "cryptography",
         "rich.console", "rich.table", "rich.progress", "rich.markdown", "rich.syntax")


PAGES = list(generator().pages())


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    """A wheel built as `pipx install .` builds it (isolated build), from a copy of the source tree."""
    source = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    for name in ("leader_election_cli", "man"):
        shutil.copytree(ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    dist = tmp_path_factory.mktemp("dist")
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(dist), str(source)],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    (built,) = dist.glob("*.whl")
    return zipfile.ZipFile(built)


def _member(wheel: zipfile.ZipFile, suffix: str) -> str:
    (name,) = [n for n in wheel.namelist() if n.endswith(suffix)]
    return wheel.read(name).decode()


def test_the_wheel_declares_both_commands(wheel: zipfile.ZipFile) -> None:
    scripts = _member(wheel, ".dist-info/entry_points.txt").split("[console_scripts]")[1].split("[")[0]
    declared = dict(line.split(" = ") for line in scripts.strip().splitlines())
    assert declared == {"kafka-leader-election": "leader_election_cli.cli.drop_in:main",
                        "kafka-leaders": "leader_election_cli.cli.toolkit:main"}
    assert set(declared) == set(generator().PROGRAMS)  # what the completions and man pages are made for


def test_the_wheel_carries_the_schemas_the_spark_logging_and_the_man_pages(wheel: zipfile.ZipFile) -> None:
    names = set(wheel.namelist())
    package = ROOT / "leader_election_cli"
    data = sorted((package / "schemas").glob("*.json")) + sorted((package / "pipeline").glob("*.properties"))
    assert len(data) > 4
    for path in data:
        assert wheel.read(path.relative_to(ROOT).as_posix()) == path.read_bytes()
    pages = {n.rsplit("/", 1)[1] for n in names if "/share/man/man1/" in n and ".data/data/" in n}
    assert pages == {path.name for path in (ROOT / "man").glob("*.1")}


def test_the_wheel_has_the_package_version_and_the_extras(wheel: zipfile.ZipFile) -> None:
    metadata = email.message_from_string(_member(wheel, ".dist-info/METADATA"))
    assert metadata["Name"] == "leader-election-cli"
    assert metadata["Version"] == __version__
    assert {"spark", "zookeeper", "test"} <= set(metadata.get_all("Provides-Extra"))
    assert set(metadata.get_all("Requires-Dist")) >= {"pyspark>=3.5; extra == \"spark\"",
                                                      "kazoo>=2.10; extra == \"zookeeper\""}


@pytest.mark.parametrize("prog", ["kafka-leader-election", "kafka-leaders"])
def test_version_prints_the_installed_package_version(prog: str) -> None:
    result = subprocess.run([str(BIN / prog), "--version"], capture_output=True, text=True, timeout=60)
    installed = importlib.metadata.version("leader-election-cli")
    assert (result.returncode, result.stdout, installed) == (0, f"{prog}, version {__version__}\n", __version__)


_PROBE = """
import contextlib, io, json, sys
prog, *args = sys.argv[1:]
module = "drop_in" if prog == "kafka-leader-election" else "toolkit"
sys.argv = [prog, *args]
main = __import__(f"leader_election_cli.cli.{module}", fromlist=["main"]).main
with contextlib.redirect_stdout(io.StringIO()) as out:
    try:
        main()
    except SystemExit as exit:
        code = exit.code
print(json.dumps({"code": code, "help": out.getvalue(), "modules": sorted(sys.modules)}))
"""


@pytest.mark.parametrize("name", [page.name for page in PAGES])
def test_help_imports_nothing_heavy(name: str) -> None:
    result = subprocess.run([sys.executable, "-c", _PROBE, *name.split(), "--help"], capture_output=True,
                            text=True, timeout=60)
    probe = json.loads(result.stdout)
    assert (probe["code"], result.stderr) == (0, "")
    assert probe["help"].startswith(f"Usage: {name} ")
    loaded = [m for m in probe["modules"] if any(m == h or m.startswith(h + ".") for h in HEAVY)]
    assert loaded == [], f"`{name} --help` imports {loaded[:5]}: import them inside the command body"


@pytest.mark.parametrize("module", ["drop_in", "toolkit"])
def test_an_entry_point_leaves_the_final_collection_nothing_to_walk(module: str) -> None:
    """`main` freezes what is left for the exit: the interpreter's final collection would walk it for
    a twentieth of a one-partition election's wall time (`benchmarks/drop_in.py`)."""
    probe = (f"import gc, sys; from leader_election_cli.cli.{module} import main\n"
             "try:\n    main()\nexcept SystemExit:\n    print(gc.get_freeze_count())")
    result = subprocess.run([sys.executable, "-c", probe, "--version"], capture_output=True, text=True, timeout=60)
    assert int(result.stdout.splitlines()[-1]) > 10_000  # every object tracked at the end


def _bootstrap_option(command: click.Command, ctx: click.Context) -> click.Option | None:
    return next((p for p in command.get_params(ctx) if isinstance(p, click.Option) and p.name == "bootstrap_server"),
                None)


@pytest.mark.parametrize("name", [page.name for page in PAGES if page.name.startswith("kafka-leaders ")])
def test_toolkit_commands_read_kafka_bootstrap_servers(name: str) -> None:
    page = next(page for page in PAGES if page.name == name)
    option = _bootstrap_option(page.command, page.ctx)
    if option is None:
        pytest.skip(f"{name} does not connect to a cluster")
    assert option.envvar == BOOTSTRAP_ENV, \
        f"{name}: declare --bootstrap-server with leader_election_cli.cli.options.connection_options"


def test_the_drop_in_keeps_kafkas_required_bootstrap_server(tmp_path: Path) -> None:
    page = next(page for page in PAGES if page.name == "kafka-leader-election")
    assert _bootstrap_option(page.command, page.ctx).envvar is None
    result = subprocess.run([str(BIN / "kafka-leader-election"), "--election-type", "preferred",
                             "--all-topic-partitions"], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                            env={"PATH": str(BIN), BOOTSTRAP_ENV: "127.0.0.1:9"})
    assert result.returncode == 2
    assert result.stderr.splitlines()[0] == "Missing required option(s): bootstrap-server"


ELECTION_MODULES = """import atexit, json, sys
atexit.register(lambda: print(json.dumps(sorted(sys.modules)), file=sys.stderr))
from leader_election_cli.cli.drop_in import main
sys.argv = ["kafka-leader-election", *sys.argv[1:]]
main()"""


@pytest.mark.parametrize("tls", [False, True], ids=["PLAINTEXT", "SSL"])
def test_a_one_partition_election_imports_no_kafka_python(tmp_path: Path, tls: bool) -> None:
    """PLAINTEXT and SSL elections go through our own transport (cluster/socket_client.py): kafka-python's
    modules (60-75 ms of imports) are loaded only for SASL or for the requests an election does not make.
    A plain command line with Kafka's lines needs neither click nor rich (`cli/drop_in.py`)."""
    from leader_election_cli.sandbox import Sandbox

    with Sandbox(brokers=2, tls=tls) as sb:
        sb.create_topic("t", assignment={0: [1, 2]})
        sb.set_leader("t", 0, 2)
        config = tmp_path / "client.properties"
        config.write_text(f"security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location={sb.ca_file}\n"
                          if tls else "")
        done = subprocess.run([sys.executable, "-c", ELECTION_MODULES, "--bootstrap-server", sb.bootstrap_servers,
                               "--election-type", "preferred", "--topic", "t", "--partition", "0",
                               "--command-config", str(config), "--output", "text"],
                              capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stdout) == (0, "Successfully completed leader election (PREFERRED) for "
                                                     "partitions t-0\n"), done.stderr
        assert sb.partition_state("t", 0).leader == 1
    modules = json.loads(done.stderr.splitlines()[-1])
    assert [m for m in modules if m.split(".")[0] in ("kafka", "click", "rich")] == []
    unused = {"planning.balance", "planning.reorders", "planning.risk", "config.login", "config.jaas",
              "selection.files", "selection.topics", "render.election_json"}  # what this election does not use
    assert [m for m in modules if m.removeprefix("leader_election_cli.") in unused] == []


def test_an_election_loads_no_solver() -> None:
    """The election's own modules (operation, reports, renderers) leave OR-Tools, NumPy and Spark alone:
    they are the balance solver's and analyze's, and cost an election a tenth of a second and its memory."""
    probe = ("import json, sys\n"
             "import leader_election_cli.cli.drop_in_run, leader_election_cli.cli.elect_command\n"
             "import leader_election_cli.operations.elect, leader_election_cli.render.output\n"
             "print(json.dumps(sorted(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    heavy = ("numpy", "ortools", "pandas", "pyspark", "pyarrow", "matplotlib")
    assert [m for m in json.loads(done.stdout) if m.split(".")[0] in heavy] == []


# Every base dependency installs from a wheel, for each Python the project supports on Linux x86_64 and
# aarch64, glibc 2.17 to 2.28 (manylinux2014 .. manylinux_2_28: Debian 10 and later, Ubuntu 20.04 and later).
PYTHONS = ("3.10", "3.11", "3.12", "3.13")
PLATFORMS = ("x86_64", "aarch64")


def _platform_tags(arch: str) -> list[str]:
    tags = [f"manylinux_2_{minor}_{arch}" for minor in range(17, 29)] + [f"manylinux2014_{arch}"]
    return [option for tag in tags for option in ("--platform", tag)]


@pytest.mark.parametrize("arch", PLATFORMS)
@pytest.mark.parametrize("python", PYTHONS)
def test_every_base_dependency_has_a_wheel(wheel: zipfile.ZipFile, tmp_path: Path, python: str, arch: str) -> None:
    """pip resolves the wheel's dependencies for that Python and platform, wheels only (`--only-binary :all:`),
    without installing them: a dependency published as source only (pyjks's twofish was) fails here."""
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--quiet",
                           "--report", str(report), "--only-binary", ":all:", *_platform_tags(arch),
                           "--python-version", python, "--target", str(tmp_path / "target"), wheel.filename],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    urls = [item["download_info"]["url"] for item in json.loads(report.read_text())["install"]]
    assert len(urls) > 8 and all(url.endswith(".whl") for url in urls), urls


def test_the_base_install_needs_no_compiler(wheel: zipfile.ZipFile, tmp_path: Path) -> None:
    """The project's wheel and every dependency install from wheels into a fresh virtualenv (no build, so no
    compiler), and the installed command runs and reads a JKS store."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", "--only-binary", ":all:",
                           wheel.filename], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    version = subprocess.run([str(venv / "bin" / "kafka-leaders"), "--version"], capture_output=True, text=True,
                             timeout=60)
    assert version.stdout == f"kafka-leaders, version {__version__}\n", version.stderr
    probe = ("import importlib.metadata as m, json; from leader_election_cli.config import stores;"
             "print(json.dumps(sorted(d.metadata['Name'].lower() for d in m.distributions())))")
    installed = json.loads(subprocess.run([str(venv / "bin" / "python"), "-c", probe], capture_output=True,
                                          text=True, timeout=60, check=True).stdout)
    assert "pyjks" not in installed and "twofish" not in installed and "ortools" in installed
