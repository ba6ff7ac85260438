"""AlterConfigs and IncrementalAlterConfigs as the controller carries them out (`ConfigurationControlManager`).

What each change means, and Kafka's errors, are configs.py's. One result per requested resource, each judged
alone: a topic that does not exist is UNKNOWN_TOPIC_OR_PARTITION ("The topic 'x' does not exist.", as
`QuorumController` answers), a broker resource is "" (the cluster-wide default) or a broker id. A request with
`validate_only` checks everything and changes nothing.
"""

from __future__ import annotations

from leader_election_cli import kafka_errors as ke
from leader_election_cli.sandbox.controller.configs import (
    BROKER_RESOURCE,
    SET,
    TOPIC_RESOURCE,
    altered,
    broker_config_problem,
    topic_config_problem,
)

Ops = list[tuple[str, int, str | None]]  # (config name, OpType, value)


class ConfigControl:
    """`Cluster`'s dynamic configs: each topic's own, and the brokers' (by broker id; "" = cluster default)."""

    def alter_configs(self, resources: list[tuple[int, str, Ops]], *, incremental: bool,
                      validate_only: bool) -> list[tuple[int, str | None]]:
        """(error code, message) for each resource: `incrementalAlterConfigs` (the ops change the current
        configs) or `legacyAlterConfigs` (SETs only, that replace the resource's dynamic configs)."""
        with self.lock:
            answers = [self._alter_resource(kind, name, ops, incremental, validate_only)
                       for kind, name, ops in resources]
            if not validate_only and any(code == ke.NONE for code, _ in answers):
                self.version += 1
            return answers

    def _alter_resource(self, kind: int, name: str, ops: Ops, incremental: bool,
                        validate_only: bool) -> tuple[int, str | None]:
        if kind == TOPIC_RESOURCE:
            topic = self.topics.get(name)
            if topic is None:
                return ke.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist."
            current = topic.configs
        elif kind == BROKER_RESOURCE:
            if name and not (name.isdigit() and int(name) >= 0):
                return ke.INVALID_REQUEST, f"Invalid broker name {name}"
            current = self.dynamic_configs.get(name, {})
        else:
            return ke.INVALID_REQUEST, f"Unsupported resource type {kind}"
        configs, error = altered(current if incremental else {}, ops if incremental else
                                 [(n, SET, v) for n, _, v in ops], kind, self.release.configs)
        if error:
            return error
        if kind == TOPIC_RESOURCE:
            problem = topic_config_problem(configs)
            if problem:
                return ke.INVALID_CONFIG, problem
        else:
            refused = broker_config_problem(configs, self.release.configs)
            if refused:
                return refused
        if not validate_only:
            current.clear()
            current.update(configs)
            if kind == BROKER_RESOURCE:
                self.dynamic_configs.setdefault(name, current)
        return ke.NONE, None
