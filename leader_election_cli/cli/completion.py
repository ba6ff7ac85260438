"""Tab completion of topic names for `--topic`: ask the cluster briefly, remember the answer briefly.

A shell calls the command once per Tab press (click's `_<PROG>_COMPLETE` mechanism), so a completion
must be quick and quiet: it asks the cluster named by `--bootstrap-server` (or `KAFKA_BOOTSTRAP_SERVERS`)
with a short timeout, keeps the topic names for a minute in the user's cache directory, and offers
nothing at all, without a word, when anything goes wrong.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import time
from pathlib import Path

import click
from click.shell_completion import CompletionItem

from leader_election_cli.cli.common import BOOTSTRAP_ENV
from leader_election_cli.local_files import cache_directory

TIMEOUT_MS = 1500
CACHE_SECONDS = 60.0


def complete_topics(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    """click's `shell_complete` callback: the cluster's topic names that start with `incomplete`."""
    bootstrap = _given(ctx, "bootstrap_server") or os.environ.get(BOOTSTRAP_ENV)
    if not bootstrap:
        return []
    config = _given(ctx, "command_config") or _given(ctx, "admin_config")
    try:
        names = topic_names(bootstrap, config)
    except Exception:  # a completion never complains: no suggestions is the only failure mode
        return []
    return [CompletionItem(name) for name in names if name.startswith(incomplete)]


def _given(ctx: click.Context, name: str) -> str | None:
    """An option's value on the command line so far; the drop-in collects repeats in a tuple."""
    value = ctx.params.get(name)
    if isinstance(value, tuple):
        return value[-1] if value else None
    return value


def topic_names(bootstrap: str, config: str | None) -> list[str]:
    """The sorted topic names, from the cache when fresh, else from the cluster (then cached)."""
    cache = cache_file(bootstrap, config)
    with contextlib.suppress(OSError, ValueError):
        if time.time() - cache.stat().st_mtime < CACHE_SECONDS:
            return list(json.loads(cache.read_text())["topics"])
    names = _ask_cluster(bootstrap, config)
    with contextlib.suppress(OSError):
        cache.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = cache.with_name(f".{cache.name}.{os.getpid()}")
        temporary.write_text(json.dumps({"topics": names}))
        temporary.replace(cache)
    return names


def cache_file(bootstrap: str, config: str | None) -> Path:
    """One file per cluster and config file, under $XDG_CACHE_HOME (or ~/.cache)."""
    import hashlib  # here: OpenSSL's loading is a tenth of every start-up otherwise

    key = hashlib.sha256(f"{bootstrap}\0{config or ''}".encode()).hexdigest()[:16]
    return cache_directory() / f"topics-{key}.json"


def _ask_cluster(bootstrap: str, config: str | None) -> list[str]:
    from leader_election_cli.cli.common import configure_logging
    from leader_election_cli.operations.connection import Connection

    configure_logging(debug=False)
    with contextlib.redirect_stderr(io.StringIO()):  # nothing may reach the terminal mid-prompt
        connection = Connection(bootstrap, config, TIMEOUT_MS)
        with connection.open(connection.settings(lambda _warning: None)) as cluster:
            return sorted(cluster.describe().topics())
