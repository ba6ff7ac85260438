"""Planning: pure functions over a `ClusterState`, no I/O.

- `rules`: how a KRaft or ZooKeeper-mode controller decides one partition's election.
- `prediction`: predict an election's outcome per partition, and apply it to a state.
- `balance`: Kafka's leadership balance and the per-partition predicates the Spark pipeline reuses.
- `batches`: split an election into requests.
- `moves`: replica reorders for `prefer`, `demote` and `restore`.
"""

from leader_election_cli.planning.balance import (
    DEFAULT_THRESHOLD_PCT,
    BrokerBalance,
    ClusterBalance,
    balance,
    fixable_by_preferred,
    imbalance_ratio,
    is_above_threshold,
    is_fixable,
    is_offline,
    is_preferred_leader,
    is_under_min_isr,
    is_under_replicated,
    rebalance_candidates,
    tally,
)
from leader_election_cli.planning.batches import batches, split_in_halves
from leader_election_cli.planning.prediction import Prediction, apply, outcome_of, predict
from leader_election_cli.planning.reorders import (
    Move,
    Refusal,
    check_prefer,
    demotion_plan,
    reorder_for_demotion,
    reorder_for_leader,
)

__all__ = [
    "DEFAULT_THRESHOLD_PCT", "BrokerBalance", "ClusterBalance", "Move", "Prediction", "Refusal", "apply",
    "balance", "batches", "check_prefer", "demotion_plan", "fixable_by_preferred", "imbalance_ratio",
    "is_above_threshold", "is_fixable", "tally", "is_offline", "is_preferred_leader", "is_under_min_isr",
    "is_under_replicated", "outcome_of", "predict", "rebalance_candidates", "reorder_for_demotion",
    "reorder_for_leader", "split_in_halves",
]
