"""DescribeConfigs, AlterConfigs and IncrementalAlterConfigs, as a broker answers them.

The configs, their sources and synonyms, and what may change are the controller's (controller/configs.py and
controller/config_control.py); here they become answers, one result per requested resource. In KRaft mode a
broker forwards both alterations to the controller (`KafkaApis.forwardToController`, registry.FORWARDED_APIS).
The sandbox's authorizer restricts only ALTER on CLUSTER, so ALTER_CONFIGS and DESCRIBE_CONFIGS are allowed.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import (
    AlterConfigsResponse,
    DescribeConfigsResponse,
    IncrementalAlterConfigsResponse,
)

from leader_election_cli import kafka_errors as ke
from leader_election_cli.sandbox.apis.context import Context
from leader_election_cli.sandbox.controller.configs import (
    BROKER_RESOURCE,
    DEFAULT_CONFIG,
    SET,
    TOPIC_RESOURCE,
    Described,
    catalog,
    describe_broker,
    describe_default_broker,
    describe_topic,
)
from leader_election_cli.sandbox.controller.model import LOG_DIR, Mode, Topic


def static_broker_configs(ctx: Context, broker: int) -> dict[str, str]:
    """What a sandbox broker's server.properties would set: its ids, listener, log directory, role, and the
    controller settings the sandbox was given (those that differ from Kafka's defaults)."""
    c = ctx.cluster
    known = catalog(c.release.configs).brokers(zk=c.mode is Mode.ZK)
    configs = {"broker.id": str(broker), "log.dirs": LOG_DIR}
    if c.mode is Mode.KRAFT:
        voter = c.voters is not None and broker in c.voters
        roles = "controller" if broker not in c.broker_ids else "broker,controller" if voter else "broker"
        configs.update({"node.id": str(broker), "process.roles": roles})  # (a dedicated controller's own listener)
    if broker in c.addresses:
        host, port = c.addresses[broker]
        configs["listeners"] = configs["advertised.listeners"] = f"{ctx.security_protocol}://{host}:{port}"
    configs.update({name: value for name, value in c.broker_configs.items()
                    if name in known and value != known[name].default})
    return configs


def topic_configs(ctx: Context, topic: Topic) -> list[Described]:
    """Every config of a topic as this broker describes it."""
    c = ctx.cluster
    return describe_topic(topic.configs, c.dynamic_configs.get(str(ctx.broker_id), {}), c.dynamic_configs[""],
                          static_broker_configs(ctx, ctx.broker_id))


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
    c = ctx.cluster
    if resource.resource_type == TOPIC_RESOURCE:
        topic = c.topics.get(name)
        if topic is None:
            return ke.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.", []
        described = topic_configs(ctx, topic)
    elif resource.resource_type == BROKER_RESOURCE:
        if name == "":
            described = describe_default_broker(c.dynamic_configs[""], c.release.configs)
        elif name == str(ctx.broker_id):
            described = describe_broker(c.dynamic_configs.get(name, {}), c.dynamic_configs[""],
                                        static_broker_configs(ctx, ctx.broker_id), zk=c.mode is Mode.ZK,
                                        listing=c.release.configs)
        else:
            return (ke.INVALID_REQUEST, f"Unexpected broker id, expected {ctx.broker_id} or empty string, "
                    f"but received {name}", [])
    else:
        return ke.INVALID_REQUEST, f"Unsupported resource type {resource.resource_type}", []
    wanted = resource.configuration_keys
    Entry = DescribeConfigsResponse.DescribeConfigsResult.DescribeConfigsResourceResult
    return ke.NONE, None, [Entry(
        name=d.name, value=d.value, read_only=d.read_only, config_source=d.source,
        is_default=d.source == DEFAULT_CONFIG, is_sensitive=d.sensitive, config_type=d.type, documentation=None,
        synonyms=[Entry.DescribeConfigsSynonym(name=n, value=v, source=s) for n, v, s in d.synonyms]
        if synonyms else []) for d in described if wanted is None or d.name in wanted]


def describe_configs_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    R = DescribeConfigsResponse
    return R(version=ctx.version, throttle_time_ms=0, results=[
        R.DescribeConfigsResult(error_code=code, error_message=message, resource_type=r.resource_type,
                                resource_name=r.resource_name, configs=[]) for r in req.resources])


# -- AlterConfigs and IncrementalAlterConfigs ---------------------------------------------------------

def alter_configs(ctx: Context, req: Any) -> Any:
    """AlterConfigs: each resource's dynamic configs become the ones given (`legacyAlterConfigs`)."""
    resources = [(r.resource_type, r.resource_name, [(cfg.name, SET, cfg.value) for cfg in r.configs])
                 for r in req.resources]
    answers = ctx.cluster.alter_configs(resources, incremental=False, validate_only=bool(req.validate_only))
    return _altered(ctx, AlterConfigsResponse, req, answers)


def incremental_alter_configs(ctx: Context, req: Any) -> Any:
    """IncrementalAlterConfigs: SET, DELETE, APPEND, SUBTRACT on each resource's dynamic configs."""
    resources = [(r.resource_type, r.resource_name,
                  [(cfg.name, cfg.config_operation, cfg.value) for cfg in r.configs]) for r in req.resources]
    answers = ctx.cluster.alter_configs(resources, incremental=True, validate_only=bool(req.validate_only))
    return _altered(ctx, IncrementalAlterConfigsResponse, req, answers)


def _altered(ctx: Context, response: Any, req: Any, answers: list[tuple[int, str | None]]) -> Any:
    Result = response.AlterConfigsResourceResponse
    return response(version=ctx.version, throttle_time_ms=0, responses=[
        Result(error_code=code, error_message=message, resource_type=r.resource_type, resource_name=r.resource_name)
        for r, (code, message) in zip(req.resources, answers, strict=True)])


def alter_configs_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return _altered(ctx, AlterConfigsResponse, req, [(code, message)] * len(req.resources))


def incremental_alter_configs_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return _altered(ctx, IncrementalAlterConfigsResponse, req, [(code, message)] * len(req.resources))
