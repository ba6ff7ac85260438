"""`kafka-leaders sandbox`: a simulated Kafka cluster in the foreground, until Ctrl-C or SIGTERM."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from leader_election_cli.cli.common import run
from leader_election_cli.cli.options import COMMAND_SETTINGS, Command, IntRange, Seconds, verbatim
from leader_election_cli.cli.sandbox_ctl_command import CONTROL_ENV  # the control socket, for commands --run starts
from leader_election_cli.errors import ExitCode, InputError, exit_code_help, shown
from leader_election_cli.gc_pause import long_lived_heap
from leader_election_cli.local_files import check_regular_file
from leader_election_cli.sandbox.controller.quorum import BROKER_SESSION_TIMEOUT_S
from leader_election_cli.sandbox.sizing import DEFAULT_MAX_LOG_BYTES, MAX_PARTITIONS, size_problem
from leader_election_cli.sandbox.versions import DEFAULT_VERSION, VERSIONS, ZK_DEFAULT_VERSION

if TYPE_CHECKING:
    from leader_election_cli.sandbox.remote import ControlServer
    from leader_election_cli.sandbox.sasl_gssapi import KerberosAcceptor
    from leader_election_cli.sandbox.sasl_oauth import OAuthValidation

MAX_CREDENTIAL_FILE_BYTES = 16 << 20  # certificates, keys, CAs and keytabs: a few KiB each

EXAMPLES = """\
Examples:
  kafka-leaders sandbox --scenario imbalanced
  kafka-leaders sandbox --mode zk --brokers 5 --topics 3 --partitions 12 --scenario broker-down
  kafka-leaders sandbox --kafka-version 4.0 --feature eligible.leader.replicas.version=1 --scenario leaderless
  kafka-leaders sandbox --sasl-user admin:admin-secret --tls --ready-file /tmp/sandbox.json
  kafka-leaders sandbox --oauth-jwks-url https://idp.example.com/jwks --oauth-required-scope kafka
  kafka-leaders sandbox --kerberos-keytab kafka.keytab --kerberos-principal kafka/127.0.0.1@EXAMPLE.COM
  kafka-leaders sandbox --scenario imbalanced --run 'kafka-leader-election --bootstrap-server {bootstrap}
      --election-type preferred --all-topic-partitions'
Otherwise, in another terminal:
  kafka-leader-election --bootstrap-server 127.0.0.1:PORT --election-type preferred --all-topic-partitions"""

SCENARIO_HELP = ("balanced: every leader on its preferred replica; imbalanced: the leaders of a fixed "
                 "pseudo-random pick of partitions (each with odds of one in three) moved off their preferred "
                 "replica (a preferred election fixes them); broker-down: the "
                 "last broker stopped; leaderless: broker 1 stopped while the only ISR member of the "
                 "partitions it prefers (only an unclean election, or broker 1's return, brings them back); "
                 "no-controller (kraft): as imbalanced, with two of the three controllers stopped: no quorum "
                 "leader, so elections and reassignments time out (REQUEST_TIMED_OUT after 60 s) while Metadata "
                 "still answers; "
                 "skewed: every preferred replica on the first third of the brokers, as after adding brokers "
                 "(leaders are preferred, yet badly spread: only new replica orders help).")


EXIT_CODES = exit_code_help({0: "stopped by Ctrl-C or SIGTERM; with --run, the command's own exit code",
                            1: "an internal error",
                            2: "usage or input error (bad options, an unknown Kafka version or feature, a cluster "
                               f"over {MAX_PARTITIONS:,} partitions or the memory available, a port taken)",
                            3: None, 4: None, 5: None, 130: "stopped by Ctrl-C or SIGTERM while it was being built"})
VERSION_HELP = (f"The Kafka release the brokers are, with its ApiVersions, features, configs and controller rules: "
                f"{', '.join(VERSIONS)} (default: {DEFAULT_VERSION}; {ZK_DEFAULT_VERSION} with --mode zk, the last "
                "release with ZooKeeper).")


class BuildInterrupted(Exception):
    """Ctrl-C or SIGTERM while the sandbox was being built."""


@click.command(cls=Command, epilog=verbatim(EXAMPLES, EXIT_CODES), context_settings=COMMAND_SETTINGS)
@click.option("--brokers", type=IntRange(1, 100), default=3, show_default=True, help="Number of brokers.")
@click.option("--mode", type=click.Choice(["kraft", "zk"]), default="kraft", show_default=True,
              help="Controller mode: its election rules, errors and ApiVersions.")
@click.option("--kafka-version", metavar="VERSION", help=VERSION_HELP)
@click.option("--feature", "features", multiple=True, metavar="NAME=LEVEL",
              help="Set a finalized feature level as kafka-features upgrade/downgrade does, e.g. "
                   "eligible.leader.replicas.version=0 to turn ELR off in 4.1 or 4.2 (on by default there; off in "
                   "4.0); repeatable.")
@click.option("--zookeeper", metavar="HOST:PORT[/CHROOT]",
              help="With --mode zk: register the cluster in this ZooKeeper as Kafka does and serve the elections "
                   "started through it (kafka-leader-election --zookeeper).")
@click.option("--topics", type=IntRange(0, 10_000), default=2, show_default=True, help="Topics to create.")
@click.option("--partitions", type=IntRange(1, MAX_PARTITIONS), default=6, show_default=True,
              help=f"Partitions per topic (at most {MAX_PARTITIONS:,} in all, and what the memory available holds).")
@click.option("--replication-factor", type=IntRange(1, 100), metavar="N",
              help="Replicas per partition (default: 3, or the broker count if lower).")
@click.option("--scenario", type=click.Choice(["balanced", "imbalanced", "broker-down", "leaderless", "no-controller",
                                               "skewed"]),
              default="balanced", show_default=True, help=SCENARIO_HELP)
@click.option("--topic-config", "topic_configs", multiple=True, metavar="KEY=VALUE",
              help="A config of every topic the scenario creates (repeatable), checked as Kafka's CreateTopics "
                   "checks it, e.g. min.insync.replicas=2.")
@click.option("--racks", metavar="RACK[,RACK...]",
              help="Give the brokers a broker.rack, in turn: --racks a,b with 4 brokers puts 1 and 3 in a, "
                   "2 and 4 in b.")
@click.option("--placement", type=click.Choice(["kafka", "random"]), default="kafka", show_default=True,
              help="Where the scenario's replicas go: as Kafka places them (round-robin; on distinct racks with "
                   "--racks), or at random (seeded), as a cluster reassigned over the years may have them.")
@click.option("--ready-file", type=click.Path(dir_okay=False), metavar="PATH",
              help="Write {bootstrap_servers, brokers, mode, kafka_version, ...} as JSON here once every listener "
                   "is up.")
@click.option("--sasl-user", "sasl_users", multiple=True, metavar="USER:PASSWORD",
              help="Require SASL (PLAIN, SCRAM-SHA-256/512) and accept this user; repeatable.")
@click.option("--tls", is_flag=True, help="Serve TLS with a CA and certificate generated at start.")
@click.option("--tls-cert", type=click.Path(exists=True, dir_okay=False), metavar="PEM",
              help="With --tls: present this certificate chain (PEM, the broker's certificate first) instead.")
@click.option("--tls-key", type=click.Path(exists=True, dir_okay=False), metavar="PEM",
              help="With --tls-cert: its private key (PEM, unencrypted).")
@click.option("--tls-client-ca", type=click.Path(exists=True, dir_okay=False), metavar="PEM",
              help="With --tls: require client certificates signed by this CA (Kafka's ssl.client.auth=required).")
@click.option("--oauth-jwks-url", metavar="URL",
              help="Accept SASL/OAUTHBEARER tokens signed by a key of this JWKS document, as Kafka's "
                   "OAuthBearerValidatorCallbackHandler with sasl.oauthbearer.jwks.endpoint.url does (signature, "
                   "expiry and subject checked).")
@click.option("--oauth-unsecured", is_flag=True,
              help="Accept Kafka's unsecured SASL/OAUTHBEARER development tokens (alg none; "
                   "unsecuredLoginStringClaim_sub on the client).")
@click.option("--oauth-required-scope", metavar="SCOPE",
              help="With an OAUTHBEARER listener: refuse tokens without this scope.")
@click.option("--oauth-expected-audience", metavar="AUD[,AUD...]",
              help="With --oauth-jwks-url: refuse tokens whose aud claim names none of these (Kafka's "
                   "sasl.oauthbearer.expected.audience).")
@click.option("--oauth-expected-issuer", metavar="ISSUER",
              help="With --oauth-jwks-url: refuse tokens whose iss claim is not this (Kafka's "
                   "sasl.oauthbearer.expected.issuer).")
@click.option("--oauth-scope-claim-name", metavar="NAME", default="scope", show_default=True,
              help="Kafka's sasl.oauthbearer.scope.claim.name: the claim holding the token's scopes.")
@click.option("--oauth-sub-claim-name", metavar="NAME", default="sub", show_default=True,
              help="Kafka's sasl.oauthbearer.sub.claim.name: the claim holding the token's principal.")
@click.option("--kerberos-keytab", type=click.Path(dir_okay=False), metavar="FILE",
              help="Accept SASL/GSSAPI (Kerberos) with the service keys of this keytab, as the broker's "
                   "Krb5LoginModule keyTab; KRB5_CONFIG names the realm's KDC as for any Kerberos program.")
@click.option("--kerberos-principal", metavar="SERVICE/HOST@REALM",
              help="With --kerberos-keytab: the brokers' principal (the broker's JAAS principal), which must be "
                   "in the keytab; clients set sasl.kerberos.service.name to SERVICE (default: any principal "
                   "of the keytab).")
@click.option("--port-base", type=IntRange(1, 65535), metavar="PORT",
              help="Listen on PORT, PORT+1, ... (default: ports chosen by the OS).")
@click.option("--auto-leader-rebalance/--no-auto-leader-rebalance", default=True, show_default=True,
              help="Kafka's auto.leader.rebalance.enable: the controller moves leaders back to their preferred "
                   "replicas at every check, as a real cluster does (zk mode: only for brokers above "
                   "leader.imbalance.per.broker.percentage, 10).")
@click.option("--leader-imbalance-check-interval", type=Seconds(min=0.1, max=86_400), default=300,
              show_default=True, metavar="SECONDS", help="Kafka's leader.imbalance.check.interval.seconds.")
@click.option("--catch-up-seconds", type=Seconds(min=0, max=3600), default=3, show_default=True, metavar="SECONDS",
              help="How long a broker restarted by kafka-leaders sandbox-ctl takes to come back: fenced for the "
                   "first fifth (at most 2 s), then its replicas rejoin the ISRs, spread over the rest. A KRaft "
                   "controller restarted lags behind the quorum's leader as long (fetching for the second half). "
                   "The replicas a reassignment adds catch up as long, then it completes.")
@click.option("--broker-session-timeout", type=Seconds(min=0, max=3600), default=BROKER_SESSION_TIMEOUT_S,
              show_default=True, metavar="SECONDS",
              help="Kafka's broker.session.timeout.ms: how long a broker crashed by kafka-leaders sandbox-ctl "
                   "kill-broker stays registered, alive in Metadata and in its ISRs before the controller fences it.")
@click.option("--max-log-bytes", type=IntRange(0, 2**40), default=DEFAULT_MAX_LOG_BYTES, show_default=True,
              metavar="BYTES", help="The records the brokers keep, all partitions together (in memory); past it "
                                    "the oldest batches go first and their partitions' log start offsets move on. "
                                    "Consumer groups are bounded too: 10,000 groups, 100,000 committed offsets and "
                                    "64 MiB of members' metadata in all, 1,000 members a group (group.max.size); past "
                                    "them the empty group used longest ago goes first, else Kafka's refusal "
                                    "(COORDINATOR_NOT_AVAILABLE, INVALID_COMMIT_OFFSET_SIZE, GROUP_MAX_SIZE_REACHED).")
@click.option("--run", "command", metavar="COMMAND",
              help="Run COMMAND against the sandbox ({bootstrap} is replaced by its bootstrap address, also "
                   "exported as KAFKA_BOOTSTRAP_SERVERS), then stop and exit with COMMAND's exit code.")
@click.option("--debug", is_flag=True, help="Log every connection problem the brokers see.")
def sandbox(**options: Any) -> None:
    """Run a local simulated Kafka cluster on the real wire protocol; point any Kafka tool at it.

    It prints the bootstrap address and a summary of the scenario, then serves until Ctrl-C or SIGTERM.
    """
    sys.exit(run(lambda: _sandbox(options), options["debug"]))


def parse_users(values: tuple[str, ...]) -> dict[str, str]:
    users = {}
    for value in values:
        user, sep, password = value.partition(":")
        if not sep or not user or not password:
            raise InputError("--sasl-user needs USER:PASSWORD: a user name, a colon and a password (the value given "
                             "is not shown: it may hold a password)",
                             "Give the user name, a colon and the password, e.g. --sasl-user admin:secret.")
        users[user] = password
    return users


def parse_racks(value: str | None, brokers: int) -> dict[int, str]:
    """--racks a,b,c: broker i gets the ((i - 1) mod 3)-th name."""
    if value is None:
        return {}
    names = [name.strip() for name in value.split(",")]
    if not all(names):
        raise InputError(f"--racks {value!r} has an empty rack name", "Give comma-separated names, e.g. --racks a,b,c.")
    if len(names) > brokers:  # a rack with no broker would be named nowhere: refuse, not ignore
        raise InputError(f"--racks names {len(names)} racks for {brokers} broker(s): "
                         f"{', '.join(repr(n) for n in names[brokers:])} would hold no broker",
                         f"Give at most {brokers} names, or more --brokers.")
    return {b: names[(b - 1) % len(names)] for b in range(1, brokers + 1)}


@dataclass(frozen=True)
class _Checked:
    """The options checked before anything starts, in the form the sandbox takes them."""

    users: dict[str, str]
    replication_factor: int
    racks: dict[int, str]
    version: str | None
    features: dict[str, int]
    argv: list[str] | None  # --run's words
    oauth: OAuthValidation | None = None
    kerberos: KerberosAcceptor | None = None
    topic_configs: dict[str, str] | None = None


def _sandbox(o: dict[str, Any]) -> int:
    import logging

    logging.basicConfig(level=logging.WARNING if o["debug"] else logging.ERROR, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return _serve(o, _checked(o))


def _checked(o: dict[str, Any]) -> _Checked:
    """Every option checked (one line and exit 2 when bad) before a port is opened."""
    rf = o["replication_factor"] or min(3, o["brokers"])
    if rf > o["brokers"]:
        raise InputError(f"--replication-factor {rf} needs at least {rf} brokers, but --brokers is {o['brokers']}",
                         "Lower --replication-factor or raise --brokers.")
    if o["port_base"] and o["port_base"] + o["brokers"] - 1 > 65535:
        raise InputError(f"--port-base {o['port_base']} leaves no room for {o['brokers']} brokers below 65536")
    if o["scenario"] == "no-controller" and o["mode"] != "kraft":
        raise InputError("--scenario no-controller needs --mode kraft",
                         "A ZooKeeper-mode cluster has no controller quorum to lose: stop its brokers instead.")
    if o["zookeeper"] and o["mode"] != "zk":
        raise InputError("--zookeeper needs --mode zk", "Only ZooKeeper-mode clusters keep their state in ZooKeeper.")
    if (o["tls_cert"] or o["tls_key"] or o["tls_client_ca"]) and not o["tls"]:
        raise InputError("--tls-cert, --tls-key and --tls-client-ca need --tls", "Add --tls.")
    if bool(o["tls_cert"]) != bool(o["tls_key"]):
        raise InputError("--tls-cert and --tls-key go together", "Give both, or neither to generate a CA.")
    for option in ("tls_cert", "tls_key", "tls_client_ca", "kerberos_keytab"):
        if o[option] is not None:  # a FIFO blocked here before any port opened, /dev/zero was read without end
            check_regular_file(o[option], what="--" + option.replace("_", "-"), limit=MAX_CREDENTIAL_FILE_BYTES,
                               hint="Give a regular file.")
    too_big = size_problem(o["topics"] * o["partitions"], rf)
    if too_big:
        raise InputError(f"--topics {o['topics']} x --partitions {o['partitions']}: {too_big}",
                         "Lower --topics or --partitions.")
    version, features = parse_version_options(o)
    return _Checked(parse_users(o["sasl_users"]), rf, parse_racks(o["racks"], o["brokers"]), version, features,
                    parse_run(o["command"]) if o["command"] is not None else None, parse_oauth(o),
                    parse_kerberos(o), parse_topic_configs(o["topic_configs"]))


def parse_topic_configs(values: tuple[str, ...]) -> dict[str, str]:
    """--topic-config KEY=VALUE, each checked as the controller checks a CreateTopics config."""
    from leader_election_cli.sandbox.controller.configs import catalog, topic_config_problem

    configs: dict[str, str] = {}
    for value in values:
        key, sep, setting = value.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--topic-config {value!r} is not KEY=VALUE", "Write it as min.insync.replicas=2.")
        key = key.strip()
        configs[key] = setting
        problem = topic_config_problem({key: setting})
        if problem:
            unknown = key not in catalog().topic
            raise InputError(f"--topic-config {shown(value)}: {shown(problem)}",
                             "Use a topic config of Kafka 4.1 (kafka-configs.sh --describe --all lists them)."
                             if unknown else f"Give {key} a value Kafka accepts.")
    return configs


def parse_oauth(o: dict[str, Any]) -> OAuthValidation | None:
    """The OAUTHBEARER validator the --oauth-* options ask for (None: no OAUTHBEARER listener)."""
    from urllib.parse import urlsplit

    from leader_election_cli.sandbox.sasl_oauth import OAuthValidation

    url = o["oauth_jwks_url"]
    audience = tuple(name.strip() for name in (o["oauth_expected_audience"] or "").split(",") if name.strip())
    if url is None and (audience or o["oauth_expected_issuer"] is not None):
        raise InputError("--oauth-expected-audience and --oauth-expected-issuer need --oauth-jwks-url",
                         "Kafka checks them only for signed tokens: add --oauth-jwks-url URL.")
    if url is not None and o["oauth_unsecured"]:
        raise InputError("--oauth-jwks-url and --oauth-unsecured exclude each other",
                         "Give --oauth-jwks-url to check signed tokens, or --oauth-unsecured for development tokens.")
    if url is None and not o["oauth_unsecured"]:
        if o["oauth_required_scope"] is not None or (o["oauth_scope_claim_name"], o["oauth_sub_claim_name"]) != (
                "scope", "sub"):
            raise InputError("--oauth-required-scope, --oauth-scope-claim-name and --oauth-sub-claim-name need an "
                             "OAUTHBEARER listener", "Add --oauth-jwks-url URL or --oauth-unsecured.")
        return None
    if url is not None:
        try:
            parts = urlsplit(url)
            ok = parts.scheme in ("http", "https", "file") and bool(parts.netloc or parts.scheme == "file")
        except ValueError:
            ok = False
        if not ok:
            raise InputError(f"--oauth-jwks-url {shown(url)} is not an http, https or file URL",
                             "Give the JWKS document's URL, e.g. --oauth-jwks-url https://idp.example.com/jwks.")
    for option in ("oauth_required_scope", "oauth_scope_claim_name", "oauth_sub_claim_name"):
        value = o[option]
        if value is not None and (not value.strip() or value != value.strip()):
            raise InputError(f"--{option.replace('_', '-')} is empty or has spaces around the name",
                             "Give the name alone.")
    return OAuthValidation(jwks_url=url, required_scope=o["oauth_required_scope"],
                           scope_claim=o["oauth_scope_claim_name"], sub_claim=o["oauth_sub_claim_name"],
                           expected_audience=audience, expected_issuer=o["oauth_expected_issuer"])


def parse_kerberos(o: dict[str, Any]) -> KerberosAcceptor | None:
    """The GSSAPI acceptor of --kerberos-keytab/--kerberos-principal, its keytab read now (None: no GSSAPI)."""
    from leader_election_cli.sandbox.sasl_gssapi import KerberosAcceptor

    keytab, principal = o["kerberos_keytab"], o["kerberos_principal"]
    if keytab is None:
        if principal is not None:
            raise InputError("--kerberos-principal needs --kerberos-keytab", "Add --kerberos-keytab FILE.")
        return None
    if principal is not None and (not principal or any(c.isspace() for c in principal) or
                                  principal.startswith(("/", "@")) or principal.endswith(("/", "@"))):
        raise InputError(f"--kerberos-principal {shown(principal)} is not a Kerberos principal",
                         "Give SERVICE/HOST@REALM, e.g. --kerberos-principal kafka/127.0.0.1@EXAMPLE.COM.")
    acceptor = KerberosAcceptor(str(Path(keytab).resolve()), principal)
    try:
        acceptor.check()
    except ValueError as e:
        raise InputError(f"--kerberos-keytab {keytab} cannot serve Kerberos: {e}",
                         "Give a keytab holding the brokers' service keys (and --kerberos-principal one of them).") \
            from None
    except ImportError:
        raise InputError("--kerberos-keytab needs the gssapi package",
                         "Install it: pip install gssapi (it needs MIT Kerberos's libraries).") from None
    return acceptor


def _serve(o: dict[str, Any], c: _Checked) -> int:
    """Build, print, write the ready file, then serve (or run --run's command) until a signal.

    Until it serves, Ctrl-C and SIGTERM stop the build at once (the handler raises in the main thread,
    between two steps of the Python loops that build partitions); then they only end the serving."""
    def interrupt(signum: int, _frame: object) -> None:
        raise BuildInterrupted(signal.Signals(signum).name)

    stop = threading.Event()
    ready = Path(o["ready_file"]) if o["ready_file"] else None
    previous = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    sb = None
    control = None
    written: tuple[int, int] | None = None  # the ready file this run wrote (device, inode): only it is removed
    try:
        sb = _new_sandbox(o, c)
        _start_and_build(sb, o, c)
        with long_lived_heap():  # the built cluster lives as long as it serves
            show(sb, o, c)  # before the ready file: what it prints is the state clients first meet
            sys.stdout.flush()
            control = start_control(sb, o["catch_up_seconds"])
            if ready is not None:
                written = write_ready_file(ready, sb, control)
            for sig in previous:
                signal.signal(sig, lambda *_: stop.set())
            if c.argv is not None:
                return run_against(sb, c.argv, control.path)
            click.echo("Serving until Ctrl-C or SIGTERM.")
            stop.wait()
            click.echo("Stopping the sandbox.", err=True)
    except BuildInterrupted as e:
        click.echo(f"Stopped by {e} while building the sandbox; nothing was served.", err=True)
        return int(ExitCode.INTERRUPTED)
    finally:
        for sig in previous:
            signal.signal(sig, signal.SIG_IGN)  # a second signal must not cut the clean-up short
        if control is not None:
            control.stop()
        if sb is not None:
            sb.stop()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if written is not None:
            remove_ready_file(ready, written)
    return 0


def start_control(sb: Any, catch_up_seconds: float) -> ControlServer:
    """The control socket (under TMPDIR, or /tmp when TMPDIR is too long for a socket's path); a directory
    that cannot be made there is an input error."""
    from leader_election_cli.sandbox.remote import ControlServer

    try:
        return ControlServer(sb, catch_up_seconds).start()
    except OSError as e:
        raise InputError(f"cannot make the sandbox's control socket: {e.strerror or e}",
                         "Point TMPDIR at a writable directory with a short path, e.g. TMPDIR=/tmp.") from None


def _start_and_build(sb: Any, o: dict[str, Any], c: _Checked) -> None:
    """Open the listeners (a port taken is an input error), then create the scenario's topics."""
    from leader_election_cli.sandbox.scenarios import build

    try:
        sb.start()
    except OSError as e:
        raise InputError(f"cannot listen on the sandbox ports: {e.strerror or e}",
                         "Choose another --port-base, or leave it out to let the OS pick free ports.") from None
    if o["topics"] * o["partitions"] >= 100_000:
        click.echo(f"Building {o['topics'] * o['partitions']:,} partitions (Ctrl-C stops).", err=True)
    build(sb, o["scenario"], o["topics"], o["partitions"], c.replication_factor, c.topic_configs, o["placement"])


def _new_sandbox(o: dict[str, Any], c: _Checked) -> Any:
    """The sandbox the options describe; a bad --tls-cert, --tls-key or --tls-client-ca is an input error."""
    from leader_election_cli.sandbox import Sandbox

    try:
        return Sandbox(o["brokers"], o["mode"], port_base=o["port_base"], sasl_users=c.users or None, tls=o["tls"],
                       tls_certificate=(o["tls_cert"], o["tls_key"]) if o["tls_cert"] else None,
                       tls_client_ca=o["tls_client_ca"], oauth=c.oauth, kerberos=c.kerberos,
                       zookeeper=o["zookeeper"], racks=c.racks, max_log_bytes=o["max_log_bytes"],
                       broker_session_timeout_s=o["broker_session_timeout"],
                       reassignment_catch_up_s=o["catch_up_seconds"],
                       kafka_version=c.version, features=c.features, broker_configs={
                           "auto.leader.rebalance.enable": str(o["auto_leader_rebalance"]).lower(),
                           "leader.imbalance.check.interval.seconds": f"{o['leader_imbalance_check_interval']:g}"})
    except ValueError as e:
        raise InputError(f"Cannot start the sandbox: {e}", "Check --tls-cert, --tls-key and --tls-client-ca.") \
            from None


def parse_version_options(o: dict[str, Any]) -> tuple[str | None, dict[str, int]]:
    """--kafka-version and --feature, checked as the sandbox will use them (one line and exit 2 if bad)."""
    from leader_election_cli.sandbox.versions import finalized_features, parse_feature, resolve

    mode = o["mode"]
    try:
        version = resolve(o["kafka_version"], mode)
        features = dict(parse_feature(f) for f in o["features"])
        finalized_features(version, mode, features)
    except ValueError as e:
        raise InputError(str(e), "See --kafka-version and --feature in kafka-leaders sandbox --help.") from None
    return version.name, features


def parse_run(command: str) -> list[str]:
    """--run's words, as a POSIX shell splits them, checked before the sandbox starts."""
    example = "e.g. --run 'kafka-leader-election --bootstrap-server {bootstrap} ...'"
    try:
        argv = shlex.split(command)
    except ValueError as exc:  # "No closing quotation", "No escaped character"
        raise InputError(f"--run {shown(command)} cannot be split into words: {exc}",
                         f"Close every quote in the command; {example}") from None
    if not argv:
        raise InputError("--run needs a command", example)
    return argv


def run_against(sb: Any, words: list[str], control: str) -> int:
    """Run one command against the running sandbox ({bootstrap} in its words replaced) and return its exit
    code; KAFKA_SANDBOX_CONTROL names the control socket (kafka-leaders sandbox-ctl reads it)."""
    argv = [word.replace("{bootstrap}", sb.bootstrap_servers) for word in words]
    click.echo(f"+ {shlex.join(argv)}", err=True)  # as `set -x` shows a command
    env = {**os.environ, "KAFKA_BOOTSTRAP_SERVERS": sb.bootstrap_servers, CONTROL_ENV: control}
    try:
        code = subprocess.run(argv, env=env).returncode
    except OSError as e:
        raise InputError(f"cannot run {argv[0]}: {e.strerror or e}", "Check the command given to --run.") from None
    return 128 - code if code < 0 else code  # killed by a signal: 128 + its number, as a shell says (-9 was 247)


def write_ready_file(path: Path, sb: Any, control: ControlServer | None = None) -> tuple[int, int]:
    """Written whole (a temporary file, then linked into place) so a watcher never reads half of it, and
    never over a file that is there already (a user's file, or a stale one a watcher would take for this
    sandbox's). Returns the file's (device, inode), so that only this file is removed at the end."""
    from leader_election_cli.local_files import write_atomically

    document = {
        "schema_version": 1,  # schemas/sandbox-ready.schema.json
        "bootstrap_servers": sb.bootstrap_servers,
        "brokers": {str(b): f"{host}:{port}" for b, (host, port) in sb.brokers.items()},
        "mode": sb.mode,
        "kafka_version": sb.kafka_version.name,
        "security_protocol": sb.security_protocol,
        "ca_file": sb.ca_file,
    }
    if control is not None:
        document.update(control=control.path, catch_up_seconds=control.catch_up_seconds)
    try:
        write_atomically(path, (json.dumps(document, indent=2) + "\n").encode(), replace=False)
        info = path.lstat()
    except FileExistsError:
        raise InputError(f"--ready-file {path} already exists: it is never overwritten (nor removed)",
                         "Remove it first, or point --ready-file at a new path.") from None
    except OSError as e:
        raise InputError(f"cannot write --ready-file {path}: {e.strerror or e}",
                         "Point --ready-file at a writable location.") from None
    return info.st_dev, info.st_ino


def remove_ready_file(path: Path, written: tuple[int, int]) -> None:
    """Remove the ready file this run wrote, and nothing else (it may have been replaced meanwhile)."""
    try:
        info = path.lstat()
        if (info.st_dev, info.st_ino) == written:
            path.unlink()
    except OSError:
        pass


def _security(sb: Any, o: dict[str, Any], c: _Checked) -> list[str]:
    """What a client needs to know to log in: the protocol, the users and mechanisms, the CA file."""
    detail = [f"security.protocol={sb.security_protocol}"]
    if c.users:
        detail.append("SASL users: " + ", ".join(sorted(c.users)) + " (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512)")
    if c.oauth is not None:
        detail.append("OAUTHBEARER: " + (f"tokens signed by a key of {c.oauth.jwks_url}" if c.oauth.jwks_url
                                          else "unsecured development tokens")
                      + (f", scope {c.oauth.required_scope} required" if c.oauth.required_scope else ""))
    if c.kerberos is not None:
        detail.append(f"GSSAPI: {c.kerberos.principal or 'any principal'} of {o['kerberos_keytab']}")
    if sb.ca_file:
        detail.append(f"CA file: {sb.ca_file}")
    return detail


def _broker_table(summary: Any) -> Any:
    """One row per broker: address, rack (when any has one), state, leaders, preferred replicas."""
    from leader_election_cli.render.tables import make_table

    racks = any(b.rack for b in summary.brokers)
    table = make_table(f"{summary.partitions} partitions", *(
        (column, "right" if column in ("leads", "preferred for") else "left")
        for column in ("broker", "address", *(("rack",) if racks else ()), "state", "leads", "preferred for")))
    for b in summary.brokers:
        table.add_row(str(b.broker), b.address, *((b.rack or "",) if racks else ()),
                      "up" if b.live else "[red]down[/red]", str(b.leaders), str(b.preferred))
    return table


def show(sb: Any, o: dict[str, Any], c: _Checked) -> None:
    """The sandbox's summary on stdout: release, features, addresses, security, brokers, the scenario."""
    from rich.console import Console

    from leader_election_cli.render.tables import print_line, print_table
    from leader_election_cli.sandbox.scenarios import summarize

    console = Console(highlight=False)
    summary = summarize(sb)
    console.print(f"Kafka sandbox: Kafka {sb.kafka_version.release}, {len(sb.brokers)} brokers, {sb.mode} mode, "
                  f"scenario {o['scenario']}")
    if sb.cluster.features:
        from leader_election_cli.sandbox.versions import METADATA_VERSION, metadata_version_name

        print_line(console, "Features: " + ", ".join(
            f"{name}={level}" + (f" ({metadata_version_name(level)})" if name == METADATA_VERSION else "")
            for name, level in sorted(sb.cluster.features.items())))
    print_line(console, f"Bootstrap servers: [bold]{sb.bootstrap_servers}[/bold]")
    if o["zookeeper"]:
        print_line(console, f"ZooKeeper: [bold]{o['zookeeper']}[/bold]")
    if sb.security_protocol != "PLAINTEXT":
        print_line(console, "; ".join(_security(sb, o, c)))
    print_table(console, _broker_table(summary))
    if o["auto_leader_rebalance"]:
        print_line(console, f"auto.leader.rebalance.enable=true: the controller elects preferred leaders every "
                      f"{o['leader_imbalance_check_interval']:g} s, as Kafka does (--no-auto-leader-rebalance "
                      "keeps leaders where they are).")
    for label, names in (("led off their preferred replica", summary.off_preferred),
                         ("without a leader", summary.leaderless),
                         ("under min.insync.replicas", summary.under_min_isr)):
        if names:
            shown = ", ".join(names[:8]) + (f", ... ({len(names) - 8} more)" if len(names) > 8 else "")
            print_line(console, f"{len(names)} partition(s) {label}: {shown}")

