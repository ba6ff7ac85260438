"""`kafka-leaders analyze` before any Spark starts: a missing PySpark, bad options and local inputs that
cannot be right are one-line errors."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from leader_election_cli.cli.toolkit import cli


def analyze(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["analyze", *args], catch_exceptions=False)
    return result.exit_code, result.stderr


HINT = ("Hint: Add the [spark] extra to the installed tool: pipx inject leader-election-cli 'pyspark>=3.5' "
        "'pyarrow>=14' 'matplotlib>=3.7' 'pandas<3,>=2' (keeps the extras installed, which pipx install --force "
        "'.[spark]' drops); in a virtualenv: pip install '.[spark]' in the project's directory. It needs Java 17 "
        "or newer too.\n")


def test_without_pyspark_it_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "pyspark", None)  # what an environment without the extra looks like
    assert analyze("snapshots.jsonl", "--out", str(tmp_path)) == (
        2, "kafka-leaders analyze needs PySpark, which is not installed\n" + HINT)


def test_every_missing_part_of_the_extra_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert analyze("snapshots.jsonl", "--out", str(tmp_path), "--plot") == (
        2, "kafka-leaders analyze needs pyarrow and matplotlib, which are not installed\n" + HINT)


@pytest.mark.parametrize(("args", "message"), [
    (["--conf", "spark.driver.memory"], "--conf 'spark.driver.memory' is not KEY=VALUE"),
    (["--batch-size", "0"], "Invalid value for '--batch-size'"),
    (["--threshold", "-1"], "Invalid value for '--threshold'"),
])
def test_bad_options_are_refused_before_spark_starts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                      args: list[str], message: str) -> None:
    monkeypatch.setitem(sys.modules, "pyspark", None)  # proves no Spark was needed to refuse them
    code, err = analyze("snapshots.jsonl", "--out", str(tmp_path), *args)
    assert code == 2 and err.startswith(message) and "Traceback" not in err


def test_snapshots_and_out_are_required() -> None:
    code, err = analyze("--out", "x")
    assert code == 2 and "Missing argument 'SNAPSHOT...'" in err


@pytest.fixture
def no_spark(monkeypatch: pytest.MonkeyPatch):
    """The pipeline's job module, with starting Spark made a test failure."""
    pytest.importorskip("pyspark")
    from leader_election_cli.pipeline import job

    monkeypatch.setattr(job, "spark_session", lambda *args, **kwargs: pytest.fail("Spark was started"))
    for name in ("HADOOP_CONF_DIR", "YARN_CONF_DIR", "SPARK_CONF_DIR", "HADOOP_HOME", "SPARK_HOME"):
        monkeypatch.delenv(name, raising=False)
    return job


@pytest.mark.parametrize("case", ["no match", "no glob match", "file: URI", "out is a file"])
def test_local_input_errors_are_found_before_spark_starts(no_spark: object, tmp_path: Path, case: str) -> None:
    """A typo costs no JVM start (it took 14 s to say "No snapshot file matches")."""
    (tmp_path / "s.jsonl").write_text("{}\n")
    (tmp_path / "taken").write_text("")
    snapshots, out = {"no match": (str(tmp_path / "typo.jsonl"), "o"),
                      "no glob match": (str(tmp_path / "2023-*.jsonl"), "o"),
                      "file: URI": ((tmp_path / "typo.jsonl").as_uri(), "o"),
                      "out is a file": (str(tmp_path / "s.jsonl"), "taken")}[case]
    code, err = analyze(snapshots, "--out", str(tmp_path / out))
    assert code == 2
    assert err.startswith("--out" if case == "out is a file" else f"No snapshot file matches {snapshots}")


@pytest.mark.parametrize(("out", "message"), [
    ("taken/", "--out {tmp}/taken/ is a file: it must be a directory (made if missing)"),
    ("taken/sub/", "--out {tmp}/taken/sub/ is below {tmp}/taken, which is not a directory"),
    ("taken/sub", "--out {tmp}/taken/sub is below {tmp}/taken, which is not a directory"),
])
def test_an_out_that_cannot_be_a_directory_is_refused_before_spark_starts(no_spark: object, tmp_path: Path,
                                                                          out: str, message: str) -> None:
    """`--out FILE/` started Spark and said "is a file" about FILE only then; `--out FILE/sub` was "Spark job
    failed: ...ParentNotDirectoryException", exit 1."""
    (tmp_path / "s.jsonl").write_text("{}\n")
    (tmp_path / "taken").write_text("")
    code, err = analyze(str(tmp_path / "s.jsonl"), "--out", f"{tmp_path}/{out}")
    assert (code, err) == (2, message.format(tmp=tmp_path) + "\nHint: Choose a directory for the tables, plans and "
                                                              "summary.\n")


def test_an_out_ending_in_a_slash_is_the_directory_without_it(no_spark: object, tmp_path: Path) -> None:
    """A missing `--out DIR/` is made as DIR is: nothing refuses it before Spark starts (nor a path through a
    file and back out of it, which Hadoop's Path reads without the file)."""
    (tmp_path / "s.jsonl").write_text("{}\n")
    (tmp_path / "taken").write_text("")
    for out in ("new/", "new/deeper/", "new//", "taken/../new/"):
        with pytest.raises(pytest.fail.Exception, match="Spark was started"):
            CliRunner().invoke(cli, ["analyze", str(tmp_path / "s.jsonl"), "--out", f"{tmp_path}/{out}"],
                               catch_exceptions=False)


@pytest.mark.parametrize("pattern, args, environment", [
    ("hdfs:///snapshots/x.jsonl", [], {}),  # another file system: Spark's to judge
    ("file://namenode/x.jsonl", [], {}),  # a host
    ("/no/such/{a,b}.jsonl", [], {}),  # a Hadoop glob Python reads otherwise
    ("/no/such/x.jsonl", ["--master", "yarn"], {"HADOOP_CONF_DIR": "/etc/hadoop/conf"}),  # may be HDFS
    ("/no/such/x.jsonl", ["--conf", "spark.hadoop.fs.defaultFS=hdfs://nn:8020"], {}),
    ("/no/such/x.jsonl", [], {"HADOOP_CONF_DIR": "/etc/hadoop/conf"}),
    ("/no/such/x.jsonl", [], {"SPARK_CONF_DIR": "/etc/spark/conf"}),
])
def test_paths_that_may_not_be_local_are_left_to_spark(no_spark: object, monkeypatch: pytest.MonkeyPatch,
                                                       pattern: str, args: list[str],
                                                       environment: dict[str, str]) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(pytest.fail.Exception, match="Spark was started"):
        CliRunner().invoke(cli, ["analyze", pattern, "--out", "/no/such/out", *args], catch_exceptions=False)


def test_a_path_named_with_glob_characters_is_not_refused_as_a_match_of_nothing(no_spark: object,
                                                                                tmp_path: Path) -> None:
    """`snapshots[eu]` matches nothing as a glob, but it is there: it was "No snapshot file matches"."""
    (tmp_path / "snapshots[eu]").mkdir()
    with pytest.raises(pytest.fail.Exception, match="Spark was started"):
        CliRunner().invoke(cli, ["analyze", str(tmp_path / "snapshots[eu]"), "--out", str(tmp_path / "o")],
                           catch_exceptions=False)


def test_a_file_uri_is_read_as_hadoop_reads_it(no_spark: object, tmp_path: Path) -> None:
    """'?' and '#' are part of a file: path for Hadoop, not a query or a fragment."""
    (tmp_path / "a#b.jsonl").write_text("{}\n")
    (tmp_path / "s1.jsonl").write_text("{}\n")
    for pattern in (f"file://{tmp_path}/a#b.jsonl", f"file:{tmp_path}/s?.jsonl"):
        with pytest.raises(pytest.fail.Exception, match="Spark was started"):
            CliRunner().invoke(cli, ["analyze", pattern, "--out", str(tmp_path / "o")], catch_exceptions=False)


@pytest.mark.parametrize("args", [["--master", "yarn"], ["--conf", "spark.master=spark://h:7077"],
                                  ["--master", "k8s://https://h:6443"]])
def test_a_driver_local_path_with_a_cluster_master_is_refused_before_spark_starts(no_spark: object,
                                                                                  args: list[str]) -> None:
    """Executors elsewhere cannot read or write this machine's files: say what to use instead."""
    code, err = analyze("/data/s.jsonl", "--out", "/data/out", *args)
    assert code == 2 and err.startswith("--out /data/out is on this machine's local file system, which executors")
    assert "hdfs://..., s3a://..., or a shared mount named as a file: URI" in err
    code, err = analyze("/data/s.jsonl", "--out", "file:///mnt/shared/out", *args)
    assert code == 2 and err.startswith("Snapshot path /data/s.jsonl is on this machine's local file system")


def test_an_unreadable_spark_defaults_file_is_an_input_error(no_spark: Any, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Spark's launcher stops on a spark-defaults.conf it cannot read: say which file and what to do, before
    any JVM (it was "Internal error: OSError"). /proc/self/mem is a file that even root cannot read."""
    monkeypatch.setattr(no_spark, "starts_a_jvm", lambda: True)  # as in a new process (another test may run one)
    (tmp_path / "s.jsonl").write_text("{}\n")
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "spark-defaults.conf").symlink_to("/proc/self/mem")
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path / "conf"))
    code, err = analyze(str(tmp_path / "s.jsonl"), "--out", str(tmp_path / "o"))
    assert (code, err) == (2, f"Unable to read Spark's defaults file {tmp_path}/conf/spark-defaults.conf: Input/output "
                              "error\nHint: Make it readable, or point SPARK_CONF_DIR at another directory.\n")


@pytest.mark.parametrize("args", [["--master", "local[0]"], ["--master", "local[x]"], ["--master", "locall"],
                                  ["--conf", "spark.master=local[00]"]])
def test_a_local_master_spark_would_not_run_is_refused_before_spark_starts(no_spark: Any, tmp_path: Path,
                                                                           args: list[str]) -> None:
    """Spark said it after its JVM had started, as a cluster failure (exit 3): "Asked to run locally with 0
    threads", or "Could not parse Master URL"."""
    (tmp_path / "s.jsonl").write_text("{}\n")
    code, err = analyze(str(tmp_path / "s.jsonl"), "--out", str(tmp_path / "o"), *args)
    master = args[1].removeprefix("spark.master=")
    assert (code, err.splitlines()[0]) == (2, f"--master {master} is not a local master Spark runs")


@pytest.mark.parametrize("master", ["bogus://x", "spak://h:7077", "yarn-cluster", "mesos://h:5050"])
def test_a_master_spark_submit_would_not_run_is_refused_before_spark_starts(no_spark: Any, tmp_path: Path,
                                                                            master: str) -> None:
    """spark-submit's own rule: yarn, or spark..., k8s..., local... (a typo heard that --out was local)."""
    (tmp_path / "s.jsonl").write_text("{}\n")
    code, err = analyze(str(tmp_path / "s.jsonl"), "--out", str(tmp_path / "o"), "--master", master)
    assert (code, err.splitlines()[0]) == (2, f"--master {master} is not a master Spark runs: it must be yarn or "
                                              "start with spark, k8s or local")


def test_spark_s_masters_are_accepted() -> None:
    pytest.importorskip("pyspark")
    from leader_election_cli.pipeline import cluster_mode

    for master in ("local", "local[1]", "local[*]", "local[2,3]", "local[*, 4]", "local-cluster[2, 1, 1024]",
                   "yarn", "spark://h1:7077,h2:7077", "k8s://https://h:6443"):
        cluster_mode.check_master(master)
