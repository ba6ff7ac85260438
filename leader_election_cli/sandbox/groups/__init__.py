"""Consumer groups as Kafka's classic group coordinator keeps them (the group-coordinator module's
`GroupMetadataManager`, `classic/ClassicGroup`, `OffsetMetadataManager`).

`classic_group.py` is one group's state machine (members, generations, rebalances, static membership);
`coordinator.py` holds every group and its committed offsets, finds a group's `__consumer_offsets` partition,
follows that partition's leader (a new leader reloads the group as last written), and keeps all of it within
the sandbox's bounds. Nothing is allocated until a group is first used.
"""
