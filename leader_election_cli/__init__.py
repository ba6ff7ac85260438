"""leader-election-cli: a drop-in for Kafka's kafka-leader-election.sh, and a leadership toolkit."""

__version__ = "0.1.0"
