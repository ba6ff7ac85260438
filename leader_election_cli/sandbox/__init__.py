"""A simulated multi-broker Kafka cluster on the real wire protocol, for tests and rehearsals."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from leader_election_cli.sandbox.control import Sandbox

__all__ = ["Sandbox"]


def __getattr__(name: str) -> Any:
    """`Sandbox` is imported when first asked for, so that the light modules here (versions, sizing)
    can be read by `kafka-leaders sandbox --help` without kafka-python."""
    if name == "Sandbox":
        from leader_election_cli.sandbox.control import Sandbox

        return Sandbox
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
