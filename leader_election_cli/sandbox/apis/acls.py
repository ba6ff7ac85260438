"""DescribeAcls, CreateAcls and DeleteAcls as a broker without an authorizer answers them (`AclApis`: no
`authorizer.class.name`): SECURITY_DISABLED, DescribeAcls at the top level ("No Authorizer is configured on the
broker", no resources), CreateAcls on each creation and DeleteAcls on each filter ("No Authorizer is
configured.", `getErrorResponse` of a `SecurityDisabledException`; no matching ACLs). Java's admin client and
`kafka-acls.sh` report `SecurityDisabledException`, kafka-python `SecurityDisabledError`.

The sandbox's only authorization (`Settings.cluster_alter`, ALTER on CLUSTER for elections and reassignments) is
no ACL store a client could list or change: it answers so with it too.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import CreateAclsResponse, DeleteAclsResponse, DescribeAclsResponse

from leader_election_cli import kafka_errors as ke
from leader_election_cli.sandbox.apis.context import Context

NO_AUTHORIZER = "No Authorizer is configured."
NO_AUTHORIZER_ON_BROKER = "No Authorizer is configured on the broker"


def describe_acls(ctx: Context, req: Any) -> Any:
    return describe_acls_error(ctx, req, ke.SECURITY_DISABLED, NO_AUTHORIZER_ON_BROKER)


def describe_acls_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return DescribeAclsResponse(version=ctx.version, throttle_time_ms=0, error_code=code, error_message=message,
                                resources=[])


def create_acls(ctx: Context, req: Any) -> Any:
    return create_acls_error(ctx, req, ke.SECURITY_DISABLED, NO_AUTHORIZER)


def create_acls_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    R = CreateAclsResponse
    return R(version=ctx.version, throttle_time_ms=0,
             results=[R.AclCreationResult(error_code=code, error_message=message) for _ in req.creations])


def delete_acls(ctx: Context, req: Any) -> Any:
    return delete_acls_error(ctx, req, ke.SECURITY_DISABLED, NO_AUTHORIZER)


def delete_acls_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    R = DeleteAclsResponse
    return R(version=ctx.version, throttle_time_ms=0, filter_results=[
        R.DeleteAclsFilterResult(error_code=code, error_message=message, matching_acls=[]) for _ in req.filters])
