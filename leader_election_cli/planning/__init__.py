"""Planning: pure functions over a `ClusterState`, no I/O. Import from the modules themselves (an
election loads neither the balance nor the reorders):

- `rules`: how a KRaft or ZooKeeper-mode controller decides one partition's election.
- `prediction`: predict an election's outcome per partition, and apply it to a state.
- `risk`: what an unclean election may lose.
- `balance`: Kafka's leadership balance and the per-partition predicates the Spark pipeline reuses.
- `batches`: split an election into requests.
- `reorders`: replica reorders for `prefer`, `demote` and `restore`.
- `leadership_balance`, `leadership_plan`: the balance solver (no data moved) and its plan's values.
"""
