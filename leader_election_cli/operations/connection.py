"""Where and how an operation reaches the cluster: one value, built once from the user's options."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from leader_election_cli.cluster.admin import ClusterConnection
    from leader_election_cli.config.settings import ClientSettings

@dataclass(frozen=True)
class Connection:
    """The bootstrap servers (brokers, or `controllers`), the admin client's config file, and the time limit of
    each request batch (`timeout_ms`, None: the config file's default.api.timeout.ms)."""

    bootstrap_servers: str
    command_config: str | None = None
    timeout_ms: int | None = None
    controllers: bool = False  # the bootstrap servers are KRaft controllers (--bootstrap-controller, KIP-919)

    @classmethod
    def of(cls, bootstrap_servers: str | None, command_config: str | None = None,
           timeout_seconds: float | None = None) -> Connection:
        """From command-line values: seconds become milliseconds here, once."""
        return cls(bootstrap_servers or "", command_config, int(timeout_seconds * 1000) if timeout_seconds else None)

    def settings(self, warn: Callable[[str], None]) -> ClientSettings:
        """The config file's client settings bounded by the timeout; each of its warnings to `warn`."""
        from leader_election_cli.config.settings import load_client_settings

        settings = load_client_settings(self.command_config, self.timeout_ms)
        for warning in settings.warnings:
            warn(f"Warning: {warning}")
        return settings

    def open(self, settings: ClientSettings) -> ClusterConnection:
        """Connect (a context manager that closes the connection)."""
        from leader_election_cli.cluster.admin import ClusterConnection

        return ClusterConnection.connect(self.bootstrap_servers, settings)
