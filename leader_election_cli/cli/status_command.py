"""`kafka-leaders status` (how unbalanced leadership is) and `rebalance` (the cron job that fixes it)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from leader_election_cli.cli.common import (
    configure_logging,
    connection,
    document_on_failure,
    fail,
    hooks,
    run,
    show,
)
from leader_election_cli.cli.moves_command import DEFAULT_BATCH_SIZE, output_option
from leader_election_cli.cli.options import (
    COMMAND_SETTINGS,
    INTERVAL_SECONDS,
    Command,
    Finite,
    IntRange,
    connection_options,
    verbatim,
)
from leader_election_cli.errors import ExitCode, InputError, exit_code_help, shown
from leader_election_cli.gc_pause import cyclic_gc_paused
from leader_election_cli.render.modes import TOOLKIT_MODES, is_json, resolve

if TYPE_CHECKING:
    from leader_election_cli.reports.balance import RebalanceRun

IMBALANCE_NOTE = """\
A broker's imbalance ratio is Kafka's (leader.imbalance.per.broker.percentage): of the partitions whose
preferred replica it is, the share led by another broker or by none."""

# -- status -------------------------------------------------------------------------------------------

STATUS_EXAMPLES = """\
Examples:
  kafka-leaders status --bootstrap-server localhost:9092
  kafka-leaders status --fail-above 10 --output json     (with KAFKA_BOOTSTRAP_SERVERS set)"""


STATUS_EXIT_CODES = exit_code_help({0: "the report was printed, and no broker is above --fail-above",
                                   1: "a broker is above --fail-above (they are listed), or an internal error",
                                   5: None, 130: "interrupted"})
REBALANCE_EXIT_CODES = exit_code_help({
    0: "nothing to do, or every partition elected has its preferred leader (or a dry run finished)",
    1: "a partition failed to elect (each one is listed), the --audit-log or --metrics-file could not be "
       "written (said on stderr), or an internal error",
    5: "refused: another run holds the lock"})


@click.command(cls=Command, epilog=verbatim(STATUS_EXAMPLES, IMBALANCE_NOTE, STATUS_EXIT_CODES),
               context_settings=COMMAND_SETTINGS)
@connection_options
@click.option("--fail-above", type=Finite(0, 100), metavar="PCT",
              help="Exit 1 when any broker's imbalance ratio is above PCT percent (for monitoring).")
@output_option
def status(**o: Any) -> None:
    """Show leadership balance: per broker, the partitions it leads, those it is the preferred replica
    for and its imbalance ratio; for the cluster, partitions not led by their preferred replica,
    under-replicated, under min.insync.replicas, leaderless or offline, and pending reassignments; and
    the most leaders on a broker beside the least maximum new replica orders reach (kafka-leaders
    balance: the optimum, and how many partitions it changes)."""
    sys.exit(run(lambda: _status(o), o["debug"]))


@cyclic_gc_paused()
def _status(o: dict[str, Any]) -> int:
    from leader_election_cli.operations.status import status
    from leader_election_cli.reports.balance import StatusUnread

    configure_logging(o["debug"])
    output = resolve(o["output"], sys.stdout, TOOLKIT_MODES)
    connection_ = connection(o)
    with document_on_failure(output, lambda exc: StatusUnread(exc.message, exc.exit_code)):
        report = status(connection_, o["fail_above"], hooks(output))
    show(report, output, o["color"])
    return int(report.exit_code)


# -- rebalance ----------------------------------------------------------------------------------------

REBALANCE_EXAMPLES = """\
Examples:
  kafka-leaders rebalance --bootstrap-server localhost:9092 --dry-run -v
  crontab, every 5 minutes (silent unless something was done):
  */5 * * * * KAFKA_BOOTSTRAP_SERVERS=kafka1:9092 kafka-leaders rebalance --threshold 10 \\
      --audit-log /var/log/kafka-leaders/rebalance.jsonl \\
      --metrics-file /var/lib/node_exporter/textfile/ --output table"""


@click.command(cls=Command, epilog=verbatim(REBALANCE_EXAMPLES, IMBALANCE_NOTE, REBALANCE_EXIT_CODES),
               context_settings=COMMAND_SETTINGS)
@connection_options
@click.option("--threshold", type=Finite(0, 100), default=10, show_default=True, metavar="PCT",
              help="Act when a broker's imbalance ratio is above PCT percent (Kafka's default is 10).")
@click.option("--batch-size", type=IntRange(min=1), default=DEFAULT_BATCH_SIZE, show_default=True,
              metavar="N", help="Elect at most N partitions per request (never more than 5,000).")
@click.option("--batch-interval", type=INTERVAL_SECONDS, default=0.0, metavar="SECONDS",
              help="Pause between batches.")
@click.option("--dry-run", is_flag=True, help="Show what would be elected; send nothing (and take no lock).")
@click.option("--lock-file", metavar="PATH",
              help="Lock against overlapping runs (a file, or a directory such as locks/, created when missing, for "
                   "one per cluster); held by another run: exit 5 (default: one per cluster in "
                   "$XDG_RUNTIME_DIR/kafka-leaders/, else ~/.cache/kafka-leaders/ ($XDG_CACHE_HOME), mode 0700).")
@click.option("--audit-log", metavar="FILE",
              help="Append one JSON line per run: what was found, what was done (missing directories are created).")
@click.option("--metrics-file", metavar="FILE|DIR",
              help="Write Prometheus text-format metrics of the run, every series labelled with the cluster id "
                   "(e.g. for node_exporter's textfile collector). A directory (an existing one, or a path ending in "
                   "/, created) gets kafka_leaders_<cluster>.prom "
                   "(--cluster-name, else the cluster id), so several clusters can share it.")
@click.option("--cluster-name", metavar="NAME",
              help="Name the cluster in the metrics (a cluster_name label) and in a --metrics-file directory's "
                   "file name.")
@click.option("-v", "--verbose", is_flag=True, help="Report even when there is nothing to do.")
@output_option
def rebalance(**o: Any) -> None:
    """Elect the preferred replica where leadership is unbalanced: the cron job.

    When any broker's imbalance ratio is above the threshold, elect the preferred replica of the
    partitions that can take it (preferred replica alive and in sync, no reassignment pending) whose
    preferred broker is above the threshold, in batches, as Kafka's own automatic rebalance does.
    Silent when there is nothing to do, unless -v.
    """
    sys.exit(run(lambda: _rebalance(o), o["debug"]))


@cyclic_gc_paused()
def _rebalance(o: dict[str, Any]) -> int:
    from leader_election_cli.operations.rebalance import rebalance

    configure_logging(o["debug"])
    output = resolve(o["output"], sys.stdout, TOOLKIT_MODES)
    connection_ = connection(o)
    if o["lock_file"] is not None and not o["lock_file"].strip():
        raise InputError("--lock-file is empty", hint="Give --lock-file a file path, or leave it out for the default.")
    audit_log = _output_file(o["audit_log"], "--audit-log", device_ok=True)
    metrics_file = _output_file(o["metrics_file"], "--metrics-file", directory_ok=True)
    run_ = rebalance(connection_, o["threshold"], dry_run=o["dry_run"], batch_size=o["batch_size"],
                     batch_interval=o["batch_interval"], lock_file=_lock_file(o["lock_file"], o["dry_run"]),
                     hooks=hooks(output))
    if metrics_file is not None and metrics_file.is_dir():
        from leader_election_cli.render.records import metrics_file_name

        metrics_file /= metrics_file_name(run_, o["cluster_name"], connection_.bootstrap_servers)
    written = _record(run_, connection_.bootstrap_servers, audit_log, None if run_.lock_held else metrics_file,
                      o["cluster_name"])
    # A run stopped before the balance was read has no table, but --output json still gets its document.
    if (run_.before is not None or is_json(output)) and (o["verbose"] or not run_.nothing_to_do):
        show(run_, output, o["color"])
    if run_.stopped_by is not None:
        raise run_.stopped_by
    return int(run_.exit_code) if written else int(ExitCode.PARTITION_FAILED)


def _lock_file(written: str | None, dry_run: bool) -> Path | None:
    """--lock-file: a file, or a directory for the cluster's lock ("locks/" is created, unless a dry run)."""
    from leader_election_cli.local_files import named_path

    return named_path(written, "--lock-file", create=not dry_run) if written else None


def _output_file(path: str | None, option: str, *, directory_ok: bool = False, device_ok: bool = False
                 ) -> Path | None:
    """A file this run will write, checked before anything is sent: never a symlink or a FIFO; a directory
    (an existing one, or a path ending in "/", created: `local_files.names_a_directory`) only when
    `directory_ok`, a character device (/dev/null, a terminal) only when `device_ok` (a line appended to
    it). Missing directories above it are created (mode 0755), or the one that cannot be is named."""
    from leader_election_cli.local_files import kind_of, make_directories, names_a_directory

    if path is None:
        return None
    if not path.strip():
        raise InputError(f"{option} is empty", hint=f"Give {option} a file path.")
    file = Path(path)
    if file.is_symlink():  # written by name, never through a link someone may have planted
        raise InputError(f"{option} {shown(path)} is a symbolic link, which is never followed",
                         hint=f"Give {option} the path of the file itself.")
    if names_a_directory(path):
        if directory_ok:
            return make_directories(file, option, path)
        what = "is a directory" if file.is_dir() else "names a directory (it ends in /)"
        raise InputError(f"{option} {shown(path)} {what}", hint=f"Give {option} a file path.")
    if file.exists() and not file.is_file() and not (device_ok and file.is_char_device()):
        raise InputError(f"{option} {shown(path)} is {kind_of(file.stat().st_mode)}, not a regular file",
                         hint=f"Give {option} a file path.")
    make_directories(file.parent, option, path)
    return file


def _record(run_: RebalanceRun, servers: str, audit_log: Path | None, metrics_file: Path | None,
            cluster_name: str | None) -> bool:
    """Append the audit line and write the metrics; False (and a one-line message each) if either fails."""
    from leader_election_cli.render import records
    from leader_election_cli.reports.balance import audit_record

    labels = records.metrics_labels(run_, cluster_name)
    writes = (("--audit-log", audit_log, lambda path: records.append_audit_line(path, audit_record(run_, servers))),
              ("--metrics-file", metrics_file, lambda path: records.write_metrics(path, run_, labels)))
    written = True
    for option, path, write in writes:
        if path is None:
            continue
        try:
            write(path)
        except OSError as exc:
            fail(f"Could not write the {option} file {path}: {exc.strerror or exc}", f"Check the {option} path.")
            written = False
    return written
