"""DescribeConfigs: topics' and brokers' configs, their sources and synonyms."""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import (
    DescribeConfigsResponse,
)

from leader_election_cli import kafka_errors as ke
from leader_election_cli.sandbox.apis.context import (
    Context,
)
from leader_election_cli.sandbox.controller.model import (
    DEFAULT_CONFIGS,
    REBALANCE_DEFAULTS,
)

TOPIC_RESOURCE, BROKER_RESOURCE = 2, 4
DYNAMIC_TOPIC_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 4, 5  # ConfigSource
BROKER_DEFAULTS = {**DEFAULT_CONFIGS, **REBALANCE_DEFAULTS}  # every modelled config's Kafka default
CONFIG_TYPES = {"min.insync.replicas": 3, "unclean.leader.election.enable": 1,  # ConfigType: INT, BOOLEAN,
                "auto.leader.rebalance.enable": 1, "leader.imbalance.check.interval.seconds": 5,  # LONG
                "leader.imbalance.per.broker.percentage": 3}


def describe_configs(ctx: Context, req: Any) -> Any:
    R = DescribeConfigsResponse
    results = []
    with ctx.cluster.lock:
        for resource in req.resources:
            code, message, configs = _describe_resource(ctx, resource, bool(req.include_synonyms))
            results.append(R.DescribeConfigsResult(error_code=code, error_message=message,
                                                   resource_type=resource.resource_type,
                                                   resource_name=resource.resource_name, configs=configs))
    return R(version=ctx.version, throttle_time_ms=0, results=results)


def _describe_resource(ctx: Context, resource: Any, synonyms: bool) -> tuple[int, str | None, list[Any]]:
    name = resource.resource_name
    if resource.resource_type == TOPIC_RESOURCE:
        topic = ctx.cluster.topics.get(name)
        if topic is None:
            return ke.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.", []
        values = {key: (topic.config(key), DYNAMIC_TOPIC_CONFIG if key in topic.configs else DEFAULT_CONFIG)
                  for key in sorted(set(DEFAULT_CONFIGS) | set(topic.configs))}
    elif resource.resource_type == BROKER_RESOURCE:
        if name not in ("", str(ctx.broker_id)):
            return (ke.INVALID_REQUEST, f"Unexpected broker id, expected {ctx.broker_id} or empty string, "
                    f"but received {name}", [])
        values = {key: (value, DEFAULT_CONFIG) for key, value in DEFAULT_CONFIGS.items()}
        values.update({key: (value, DEFAULT_CONFIG if value == BROKER_DEFAULTS[key] else STATIC_BROKER_CONFIG)
                       for key, value in ctx.cluster.broker_configs.items()})
        values = dict(sorted(values.items()))
    else:
        return ke.INVALID_REQUEST, f"Unsupported resource type {resource.resource_type}", []
    wanted = resource.configuration_keys
    Entry = DescribeConfigsResponse.DescribeConfigsResult.DescribeConfigsResourceResult
    configs = []
    for key, (value, source) in values.items():
        if wanted is not None and key not in wanted:
            continue
        chain = [(key, value, source)]
        if source != DEFAULT_CONFIG:
            chain.append((key, BROKER_DEFAULTS.get(key), DEFAULT_CONFIG))
        configs.append(Entry(
            name=key, value=value, read_only=False, config_source=source, is_default=source == DEFAULT_CONFIG,
            is_sensitive=False, config_type=CONFIG_TYPES.get(key, 2), documentation=None,
            synonyms=[Entry.DescribeConfigsSynonym(name=n, value=v, source=src) for n, v, src in chain]
            if synonyms else []))
    return ke.NONE, None, configs


def describe_configs_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    R = DescribeConfigsResponse
    return R(version=ctx.version, throttle_time_ms=0, results=[
        R.DescribeConfigsResult(error_code=code, error_message=message, resource_type=r.resource_type,
                                resource_name=r.resource_name, configs=[]) for r in req.resources])
