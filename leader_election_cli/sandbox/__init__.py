"""A simulated multi-broker Kafka cluster on the real wire protocol, for tests and rehearsals."""

from leader_election_cli.sandbox.control import Sandbox

__all__ = ["Sandbox"]
