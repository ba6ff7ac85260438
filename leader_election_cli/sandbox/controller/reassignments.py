"""AlterPartitionReassignments and ListPartitionReassignments as the controller carries them out.

Reassignments (both modes): the replica list becomes target + the replicas being removed; with no
replica to add it completes at once (a reorder), else once the added replicas have caught up and joined the
ISR, as the controller completes it (`PartitionChangeBuilder` through
`PartitionReassignmentReplicas.maybeCompleteReassignment`: in the same record as the ISR change that adds the last
of them; zk: `KafkaController.onPartitionReassignment` phase B on the ISR change). How long they take to catch up
is the sandbox's figure, as for a restarted broker: `complete_caught_up` once they have all fetched for the
catch-up time it is given, or `finish_reassignment` (tests). A
cancelled one keeps `replicas - adding`, in that order, as Kafka rebuilds it. A leader that leaves
the replica set is replaced: kraft by the online rule, zk by the first of the new replicas alive and in
the ISR.
"""

from __future__ import annotations

import time

from leader_election_cli import kafka_errors as ke
from leader_election_cli.model import NO_LEADER
from leader_election_cli.sandbox.controller.model import Mode, Partition, Topic
from leader_election_cli.sandbox.controller.partition_change import ElectionKind, expanded_isr


class Reassignments:
    """`Cluster`'s partition reassignments."""

    def alter_reassignments(self, wanted: list[tuple[str, int, list[int] | None]]
                            ) -> tuple[int, list[tuple[int, str | None]]]:
        """A whole AlterPartitionReassignments request: (top-level code, each partition's answer).

        kraft: `ReplicationControlManager.alterPartitionReassignments` writes one record per partition it
        changes into a `BoundedList` (more than `max_records`: POLICY_VIOLATION, nothing done), then
        `appendRecords` as for an election (`_empty_batch_refused`). zk: no such limit.
        """
        with self.lock:
            failed = False
            if self.mode is Mode.KRAFT:
                records = sum(self._writes_record(name, pid, target) for name, pid, target in wanted)
                if records > self.max_records:
                    return ke.POLICY_VIOLATION, []
                failed = self._empty_batch_refused(records)
                if failed and not self._failover_keeps():
                    return ke.UNKNOWN_SERVER_ERROR, []
            answers = [self.alter_reassignment(name, pid, target) for name, pid, target in wanted]
            return (ke.UNKNOWN_SERVER_ERROR, []) if failed else (ke.NONE, answers)

    def _writes_record(self, name: str, pid: int, target: list[int] | None) -> bool:
        """Whether one partition of a reassignment request changes it (a PartitionChangeRecord)."""
        topic = self.topics.get(name)
        if topic is None or not 0 <= pid < len(topic.partitions):
            return False
        p = topic.partitions[pid]
        if target is None:
            return bool(p.adding or p.removing)
        return not self._invalid_assignment(name, pid, target) and target != p.replicas

    def alter_reassignment(self, name: str, pid: int, target: list[int] | None) -> tuple[int, str | None]:
        """One partition of AlterPartitionReassignments: (error code, message).

        A target with no new replica (a reorder, or only removals) completes at once; one that adds
        replicas stays pending until they catch up. None cancels a pending reassignment.
        """
        with self.lock:
            topic = self.topics.get(name)
            if topic is None or not 0 <= pid < len(topic.partitions):
                return ke.UNKNOWN_TOPIC_OR_PARTITION, None
            p = topic.partitions[pid]
            if target is None:
                if not (p.adding or p.removing):
                    return ke.NO_REASSIGNMENT_IN_PROGRESS, None
                self._complete(topic, p, [r for r in p.replicas if r not in p.adding])
                self.version += 1
                return ke.NONE, None
            invalid = self._invalid_assignment(name, pid, target)
            if invalid:
                return ke.INVALID_REPLICA_ASSIGNMENT, invalid
            current = [r for r in p.replicas if r not in p.adding]
            adding = [r for r in target if r not in current]
            if not adding:
                self._complete(topic, p, list(target))
            else:
                p.removing = [r for r in current if r not in target]
                p.adding = adding
                p.replicas = list(target) + p.removing
                self.reassigning[(name, pid)] = time.monotonic()
                if self.mode is Mode.ZK:  # phase A2: a new leader epoch for RS = ORS + TRS
                    p.leader_epoch += 1
            self.version += 1
            return ke.NONE, None

    def _invalid_assignment(self, name: str, pid: int, target: list[int]) -> str | None:
        if self.mode is Mode.ZK:
            shown = "List(" + ", ".join(map(str, target)) + ")"
            if not target:
                return "Empty replica list specified in partition reassignment."
            if len(set(target)) != len(target):
                return f"Duplicate replica ids in partition reassignment replica list: {shown}"
            if any(r < 0 for r in target):
                return f"Invalid broker id in replica list: {shown}"
            missing = [r for r in target if r not in self.live]
            if missing:
                return (f"Some brokers specified for partition {name}-{pid} reassignment are not alive: "
                        "List(" + ", ".join(map(str, missing)) + ")")
            return None
        if not target:
            return "The manual partition assignment includes an empty replica list."
        previous = None
        for broker in sorted(target):
            if broker not in self.broker_ids:
                return f"The manual partition assignment includes broker {broker}, but no such broker is registered."
            if broker == previous:
                return f"The manual partition assignment includes the broker {broker} more than once."
            previous = broker
        return None

    def complete_caught_up(self, catch_up_s: float) -> None:
        """Complete the reassignments whose added replicas have all fetched (live, running) for `catch_up_s`:
        they have caught up and join the ISR. One that an added replica stopped fetching for starts again."""
        now = time.monotonic()
        with self.lock:
            if not self.has_active_controller():
                return
            fetching = self.fetching()
            for (name, pid), since in list(self.reassigning.items()):
                topic = self.topics.get(name)
                p = topic.partitions[pid] if topic is not None and pid < len(topic.partitions) else None
                if p is None or not p.adding:
                    del self.reassigning[(name, pid)]  # gone, cancelled or completed
                elif any(r not in fetching for r in p.adding):
                    self.reassigning[(name, pid)] = now
                elif now - since >= catch_up_s:
                    self.finish_reassignment(name, pid)

    def finish_reassignment(self, name: str, pid: int) -> None:
        """Test control: the added replicas caught up, so the pending reassignment completes."""
        with self.lock:
            topic = self.topic(name)
            p = self.partition(name, pid)
            if not (p.adding or p.removing):
                raise ValueError(f"no reassignment in progress for {name}-{pid}")
            if not self.has_active_controller():
                raise ValueError(f"no active controller to complete the reassignment of {name}-{pid}")
            down = [r for r in p.adding if r not in self.live]
            if down:
                raise ValueError(f"added replicas {down} of {name}-{pid} are not live and cannot catch up")
            p.isr = expanded_isr(p.isr, p.adding, self.release.rules.isr_by_broker_id)
            self._complete(topic, p, [r for r in p.replicas if r not in p.removing])
            self.version += 1

    def _complete(self, topic: Topic, p: Partition, replicas: list[int]) -> None:
        """Make `replicas` the assignment; a leader no longer in it is replaced."""
        removed = [r for r in p.replicas if r not in replicas]
        p.replicas, p.adding, p.removing = replicas, [], []
        if self.mode is Mode.KRAFT:
            # PartitionChangeBuilder: the online rule; one record, whose leader epoch goes up when the leader
            # changes or a replica leaves (triggerLeaderEpochBumpForReplicaReassignmentIfNeeded)
            acceptable = lambda r: r in self.live and r in replicas  # noqa: E731
            change = self._kraft_change(topic, p, ElectionKind.ONLINE, acceptable,
                                        target_isr=[r for r in p.isr if r in replicas])
            if change:
                self._apply(p, change, sets_leader=change.leader != p.leader or bool(removed))
            elif removed:
                p.leader_epoch += 1
            return
        # KafkaController.onPartitionReassignment, B3 (moveReassignedPartitionLeaderIfRequired): a leader
        # outside the new replicas, or dead, gives way to the first of them alive and in the ISR (the
        # election fails without one); a leader that stays gets a new epoch all the same.
        if p.leader not in replicas or p.leader not in self.live:
            leader = next((r for r in replicas if r in self.live and r in p.isr), None)
            if leader is not None:
                p.leader, p.leader_epoch = leader, p.leader_epoch + 1
        else:
            p.leader_epoch += 1
        for replica in removed:  # B4: each removed replica goes offline (doRemoveReplicasFromIsr, one write each)
            if replica in p.isr:
                if len(p.isr) > 1:
                    p.isr = [r for r in p.isr if r != replica]
                if p.leader == replica:
                    p.leader = NO_LEADER
                p.leader_epoch += 1

    def reassignments(self, wanted: list[tuple[str, list[int]]] | None) -> list[tuple[str, int, Partition]]:
        """Pending reassignments, of every partition or of those asked for (unknown ones left out)."""
        with self.lock:
            if wanted is None:
                wanted = [(t.name, list(range(len(t.partitions)))) for t in self.topics.values()]
            found = []
            for name, pids in wanted:
                topic = self.topics.get(name)
                for pid in pids:
                    if topic and 0 <= pid < len(topic.partitions):
                        p = topic.partitions[pid]
                        if p.adding or p.removing:
                            found.append((name, pid, p))
            return found
