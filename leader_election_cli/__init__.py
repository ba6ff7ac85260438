"""leader-election-cli: a drop-in for Kafka's kafka-leader-election.sh, and a leadership toolkit.

The operations behind the commands are a Python API (each takes a `Connection` and returns a report
whose `exit_code` is the command's)::

    from leader_election_cli import Connection, Election, ElectionType, elect

    report = elect(Connection("kafka1:9092"), Election(ElectionType.PREFERRED, partitions=None))

Names load on first use, so importing the package (and every command's --help) stays fast.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_API = {
    "Connection": "leader_election_cli.operations.connection",
    "Hooks": "leader_election_cli.operations.hooks",
    "Election": "leader_election_cli.operations.elect",
    "elect": "leader_election_cli.operations.elect",
    "prefer": "leader_election_cli.operations.moves",
    "demote": "leader_election_cli.operations.moves",
    "restore": "leader_election_cli.operations.moves",
    "status": "leader_election_cli.operations.status",
    "rebalance": "leader_election_cli.operations.rebalance",
    "balance": "leader_election_cli.operations.balance",
    "can_stop": "leader_election_cli.operations.maintenance",
    "roll": "leader_election_cli.operations.roll",
    "RollSettings": "leader_election_cli.operations.roll",
    "ElectionType": "leader_election_cli.model",
    "ControllerMode": "leader_election_cli.model",
    "TopicPartition": "leader_election_cli.model",
    "Outcome": "leader_election_cli.model",
    "ElectionReport": "leader_election_cli.reports.election",
    "MoveReport": "leader_election_cli.reports.moves",
    "StatusReport": "leader_election_cli.reports.balance",
    "RebalanceRun": "leader_election_cli.reports.balance",
    "BalanceReport": "leader_election_cli.reports.balance_plan",
    "CanStopReport": "leader_election_cli.reports.maintenance",
    "RollReport": "leader_election_cli.reports.maintenance",
    "ExitCode": "leader_election_cli.errors",
    "LeaderElectionError": "leader_election_cli.errors",
}
__all__ = ["__version__", *_API]


def __getattr__(name: str) -> Any:
    if name not in _API:
        raise AttributeError(f"module 'leader_election_cli' has no attribute {name!r}")
    return getattr(importlib.import_module(_API[name]), name)
