"""The sandbox's controller: Kafka's leadership rules, one set per mode, over the cluster model.

Everything that decides who leads a partition lives here, written from Kafka's own sources and kept
independent of the CLI's planner (a separate implementation checked against this one):

- `cluster.py`: `Cluster`, the container (brokers, topics, partitions, one lock) and the brokers' stops and
  starts (fencing, unfencing, rejoining the ISRs);
- `model.py`: the records it holds (`Topic`, `Partition`), the modelled configs and the mode;
- `partition_change.py`: who leads one partition (KRaft's `PartitionChangeBuilder`, ZooKeeper's `Election`);
- `elections.py`: ElectLeaders requests, the automatic leader rebalance, the scheduled unclean elections;
- `reassignments.py`: AlterPartitionReassignments and its completion;
- `quorum.py`: the controller (zk: a broker; KRaft: the quorum, combined or dedicated);
- `configs.py`: a real 4.1.0 cluster's topic and broker config sets and Kafka's rules for them;
  `config_control.py`: AlterConfigs and IncrementalAlterConfigs.
"""
