"""What every handler reads: the request as the broker sees it, the sandbox's settings, the authorizer."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from leader_election_cli.sandbox.controller.cluster import Cluster
from leader_election_cli.sandbox.versions import DEFAULT_VERSION, VERSIONS, KafkaVersion

# AclOperation codes, and the operations each resource type supports (for authorized_operations).
ALTER = 7
UNSET_OPERATIONS = -2147483648  # authorized operations not asked for
CLUSTER_OPERATIONS = {5, 7, 8, 9, 10, 11, 12}  # CREATE ALTER DESCRIBE CLUSTER_ACTION ... IDEMPOTENT_WRITE
TOPIC_OPERATIONS = {3, 4, 5, 6, 7, 8, 10, 11}
# BrokerServer: the forwarding channel's retryTimeoutMs (60000), after which NodeToControllerRequestThread
# gives up a request no controller took and ForwardingManagerImpl answers it REQUEST_TIMED_OUT
FORWARDING_TIMEOUT_S = 60.0


@dataclass
class Settings:
    """Sandbox-wide options the handlers read."""

    cluster_alter: set[str] | None = None  # principals with ALTER on CLUSTER; None = no authorizer
    max_versions: dict[int, int] = field(default_factory=dict)  # set_max_version overrides
    kafka_version: KafkaVersion = VERSIONS[DEFAULT_VERSION]  # the release the brokers are
    encoded: dict[tuple[Any, ...], bytes] = field(default_factory=dict)  # the last all-topics Metadata
    forwarding_timeout_s: float = FORWARDING_TIMEOUT_S  # how long a broker holds a request for a controller


@dataclass
class Context:
    """One request as the broker sees it."""

    broker_id: int
    cluster: Cluster
    settings: Settings
    version: int
    principal: str = "ANONYMOUS"  # the SASL user name once authenticated
    security_protocol: str = "PLAINTEXT"
    connection_id: str = ""

    @property
    def on_controller(self) -> bool:
        """Whether the request came to a dedicated controller's listener (not a broker's)."""
        return self.broker_id not in self.cluster.broker_ids

    def may(self, operation: int) -> bool:
        """The sandbox's authorizer: only ALTER on CLUSTER is restricted, to `cluster_alter`."""
        acl = self.settings.cluster_alter
        return operation != ALTER or acl is None or self.principal in acl

    def allowed(self, operations: set[int]) -> set[int]:
        return {op for op in operations if self.may(op)}


class Encoded(NamedTuple):
    """A response body already encoded (a cached answer)."""

    body: bytes
