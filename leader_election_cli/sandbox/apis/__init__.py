"""The sandbox's answers, one module per API family: a decoded request in, a response object out.

`registry.py` maps each API key to its handler (and answers ApiVersions: what the brokers advertise);
`context.py` is what every handler reads (the request's broker, cluster, settings, principal). The families:
`metadata_topics.py` (Metadata, DescribeCluster, CreateTopics, DescribeTopicPartitions, DescribeLogDirs),
`elections.py` (ElectLeaders, Alter/ListPartitionReassignments), `configs.py` (DescribeConfigs, AlterConfigs,
IncrementalAlterConfigs), `quorum.py` (DescribeQuorum), `sasl.py` (SaslHandshake and SaslAuthenticate once
authenticated), `produce_fetch.py` (Produce, Fetch, ListOffsets, InitProducerId, OffsetForLeaderEpoch, on the
logs of sandbox/partition_logs.py), `groups.py` (FindCoordinator and the group APIs) and `committed_offsets.py`
(OffsetCommit, OffsetFetch, OffsetDelete) over the group coordinator of sandbox/groups/, and `unmodelled.py`
(every other advertised key, in its own schema with UNSUPPORTED_VERSION, or CLUSTER_AUTHORIZATION_FAILED for a
zk broker's inter-broker APIs: kafka-python's classes, else `message_schemas.py` over `schema_codec.py`).

Each API also has an error answer in the shape of Kafka's `AbstractRequest.getErrorResponse` (the
code at top level, where the response has one, and on every requested item), used for fault
injection and for requests the broker refuses as a whole.
"""
