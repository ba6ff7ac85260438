"""The controller: which node controls, and the KRaft controller quorum (combined or dedicated).

In zk mode the controller is one live broker (the lowest id when a new one is needed) and the only one
that accepts ElectLeaders. Kraft's controller quorum is not a broker: Metadata and DescribeCluster
report a random live broker as the controller, as a real KRaft broker does at each request
(`getRandomAliveBrokerId`; an answer about every topic is encoded once per change of the cluster, so it
keeps its pick until then), and clients must not read it as the active controller (`kafka-leaders
status` does not show it). `controller_id` stays one broker there, for tests to aim faults at. In KRaft
combined mode (`voters`: brokers that are the quorum too) it is the quorum's leader: always a voter,
and none (-1) while a majority of the voters is down. In dedicated mode the quorum is three controller
nodes that are not brokers (`DEDICATED_CONTROLLERS`), stopped and started by `stop_controller` and
`start_controller`; its leader is the lowest live one while a majority of them is live, else none. A stopped
voter keeps, in the leader's DescribeQuorum, the log end offset and times of its last fetch (-1 for a leader
elected since), as on the recorded 4.1.0 cluster; one started with a catch-up time lags until then
(`voter_progress`).
Without a quorum leader there is no active controller, and the brokers' metadata stands still: nothing
runs the automatic leader rebalance, no ISR grows (AlterPartition), no reassignment completes, a broker that
stops stays in the metadata as it was (`unnoticed`: named as a live broker, a leader, an ISR member, while
its listener refuses connections) and one that starts stays fenced (`unregistered`); the next leader fences
and unfences them. The requests a broker forwards to the controller wait for one (sandbox/server.py). In
combined mode a stopped voter counts as down for the quorum at once, whatever the metadata says.
"""

from __future__ import annotations

import random
import time

from leader_election_cli.model import NO_LEADER
from leader_election_cli.sandbox.controller.model import Mode

DEDICATED_CONTROLLERS = (1000, 1001, 1002)  # the KRaft controller quorum's nodes when they are not brokers
BROKER_SESSION_TIMEOUT_S = 9.0  # broker.session.timeout.ms (KRaft's default, 9000)
QUORUM_FETCH_TIMEOUT_S = 2.0  # controller.quorum.fetch.timeout.ms (QuorumConfig's default, 2000)


class Quorum:
    """`Cluster`'s controller and quorum: who controls, its stops and starts, and what a new leader does."""

    def reported_controller(self) -> int:
        """The controller id Metadata and DescribeCluster answer: in zk mode the controller; in kraft mode,
        as KRaftMetadataCache.getRandomAliveBrokerId, a random live broker (none: -1)."""
        if not self.live:
            return NO_LEADER
        return random.choice(sorted(self.live)) if self.mode is Mode.KRAFT else self.controller_id

    def quorum(self) -> tuple[int, list[int]]:
        """(leader, voters) of the KRaft controller quorum; the leader is -1 while a majority of the voters
        is down (combined mode: brokers 1 to 3, the leader `controller_id`; dedicated: DEDICATED_CONTROLLERS)."""
        with self.lock:
            if self.voters is not None:
                return self.controller_id, list(self.voters)
            return self._dedicated_leader, list(DEDICATED_CONTROLLERS)

    def has_active_controller(self) -> bool:
        """Whether a controller can act: in KRaft mode the quorum has a leader; in zk mode a broker controls."""
        if self.mode is Mode.KRAFT:
            return self.quorum()[0] != NO_LEADER
        return self.controller_id != NO_LEADER

    def stop_controller(self, node: int) -> None:
        """Stop a dedicated controller node; the quorum's leader moves to the lowest live one, and there is
        none while a majority of them is down (Raft elects no leader without a majority)."""
        self._set_controller_down(node, True)

    def start_controller(self, node: int, catch_up_s: float = 0.0) -> None:
        """Start a dedicated controller node again (with a majority back, the lowest live one leads). With
        `catch_up_s` it is a restarted process: it lags behind the leader until then (`voter_progress`)."""
        self._set_controller_down(node, False, catch_up_s)

    def voter_progress(self, node: int, log_end: int, now_ms: int) -> tuple[int, int, int] | None:
        """A restarted controller still catching up, as the leader reports it: (log end offset, last fetch,
        last caught-up time), else None. The recorded 4.1.0 follower (reference/kafka-4.1.0-dedicated-
        controllers.txt) fetched nothing while its JVM started and found the leader (10.9 s), then caught up in
        under a second; the sandbox's own shape of that, within the catch-up time: no fetch for its first half,
        then fetches moving linearly towards the leader's `log_end`. Its last caught-up time stays the one
        before its stop until it has caught up
        (Kafka's `LeaderState.ReplicaState.updateFollowerState`: only a fetch reaching the leader's log end
        offset, or that of its previous fetch, moves it)."""
        entry = self.voter_catch_ups.get(node)
        if entry is None or now_ms >= entry[1] * 1000:
            return None
        started, until, end, caught = entry
        progress = (now_ms / 1000 - started) / (until - started)
        if progress < 0.5:
            return end, caught, caught
        base = max(end, 0)
        return base + int((log_end - base) * (progress - 0.5) * 2), now_ms, caught

    def crash_controller(self, node: int) -> bool:
        """A dedicated controller node dies (SIGKILL): the leader stops hearing from it (its last fetch and
        caught-up time stay as they were, `_voter_stopped`). A crashed leader leaves the quorum without one
        until `elect_quorum_leader` (its followers notice only when their fetch timeout passes). True when it
        was the leader."""
        with self.lock:
            self._check_controller(node)
            if node in self.controllers_down:
                return False
            was_leader = node == self._dedicated_leader
            self.controllers_down.add(node)
            self._voter_stopped(node)
            if was_leader:
                self._dedicated_leader = NO_LEADER
            self.version += 1
            return was_leader

    def voter_crashed(self, broker: int) -> None:
        """Combined mode: a voter's process died. The quorum's leader stops hearing from it at once (its
        LeaderState.ReplicaState keeps the last fetch, reference/kafka-4.1.0-crash-window.txt part 3), whatever
        the metadata says until its session times out; a crashed leader leaves the quorum without one until
        `elect_quorum_leader`."""
        with self.lock:
            if self.voters is None or broker not in self.voters or broker in self.crashed_voters:
                return
            self._voter_stopped(broker)
            self.crashed_voters.add(broker)
            if broker == self.controller_id:
                self.controller_id = NO_LEADER
            self.version += 1

    def voter_back(self, broker: int) -> None:
        """Combined mode: a crashed voter restarted before the controller noticed: it fetches again."""
        with self.lock:
            if broker in self.crashed_voters:
                self.crashed_voters.discard(broker)
                self.last_fetches.pop(broker, None)
                self.version += 1

    def elect_quorum_leader(self) -> None:
        """The followers' fetch timeout has passed without a leader (KafkaRaftClient: a follower whose
        FollowerState.hasFetchTimeoutExpired becomes a candidate; recorded on 4.1.0: a new leader 0.93 s after a
        clean stop, reference/kafka-4.1.0-dedicated-controllers.txt): a new epoch, led by the lowest live voter (the
        sandbox's own pick of the vote's winner, as for every other leader change here; a majority being up)."""
        with self.lock:
            before = self.quorum()[0]
            if before != NO_LEADER or self.mode is not Mode.KRAFT:
                return
            if self.voters is None:
                live = [c for c in DEDICATED_CONTROLLERS if c not in self.controllers_down]
                self._dedicated_leader = live[0] if 2 * len(live) > len(DEDICATED_CONTROLLERS) else NO_LEADER
            else:
                self._follow_controller()
            self._leader_elected(before)
            self.version += 1

    def _check_controller(self, node: int) -> None:
        if self.mode is not Mode.KRAFT or self.voters is not None:
            raise ValueError("only a KRaft sandbox in dedicated mode has controller nodes apart from its brokers; "
                             "in combined mode stop and start brokers 1 to 3 (or kill them)")
        if node not in DEDICATED_CONTROLLERS:
            raise KeyError(f"no such controller node: {node} (the controllers: "
                           f"{', '.join(map(str, DEDICATED_CONTROLLERS))})")

    def _set_controller_down(self, node: int, down: bool, catch_up_s: float = 0.0) -> None:
        with self.lock:
            self._check_controller(node)
            if down == (node in self.controllers_down):
                return
            leader = self._dedicated_leader
            if down:
                self.controllers_down.add(node)
                self._voter_stopped(node)
            else:
                self.controllers_down.discard(node)
                end, caught = self.last_fetches.pop(node, (self.version, int(time.time() * 1000)))
                if catch_up_s > 0:
                    started = time.time()
                    self.voter_catch_ups[node] = (started, started + catch_up_s, end, caught)
            live = [c for c in DEDICATED_CONTROLLERS if c not in self.controllers_down]
            if 2 * len(live) <= len(DEDICATED_CONTROLLERS):
                self._dedicated_leader = NO_LEADER
            elif self._dedicated_leader not in live:
                self._dedicated_leader = live[0]
            self._leader_elected(leader)
            self.version += 1

    def move_controller(self, broker: int) -> None:
        with self.lock:
            if broker not in self.live:
                raise ValueError(f"broker {broker} is not live")
            if self.voters is not None and (broker not in self.voters or self._live_voters() is None):
                raise ValueError(f"broker {broker} cannot lead the controller quorum (voters: {self.voters}, "
                                 "a majority of them live)")
            leader = self.quorum()[0]
            self.controller_id = broker
            self._leader_elected(leader)
            self.version += 1

    def _quorum_member_stopped(self, broker: int, leader: int) -> None:
        if self.voters is not None and broker in self.voters:
            self._voter_stopped(broker)
        self._follow_controller()
        self._leader_elected(leader)

    def _quorum_member_started(self, broker: int, leader: int) -> None:
        self.last_fetches.pop(broker, None)
        self._follow_controller()
        self._leader_elected(leader)

    def _voter_stopped(self, node: int) -> None:
        """The quorum's leader stops hearing from a voter: its last fetch is now, at the log's end (or, still
        catching up, where it was); one that crashed earlier stopped fetching then."""
        if node in self.crashed_voters:
            self.crashed_voters.discard(node)
            return
        progress = self.voter_progress(node, self.version, int(time.time() * 1000))
        self.voter_catch_ups.pop(node, None)
        self.last_fetches[node] = (progress[0], progress[2]) if progress else (self.version, int(time.time() * 1000))

    def _leader_elected(self, before: int) -> None:
        """After the quorum may have changed: a new leader (another node, or one after none) is a new epoch,
        and knows nothing of the voters that are down (LeaderState starts without their fetches)."""
        leader = self.quorum()[0]
        if leader != NO_LEADER and leader != before and self.mode is Mode.KRAFT:
            self.quorum_epoch += 1
            self.last_fetches = dict.fromkeys(self.last_fetches, (-1, -1))
            self.voter_catch_ups = {n: (s, u, -1, -1) for n, (s, u, _, _) in self.voter_catch_ups.items()}
            self._catch_up_with_brokers(leader)

    def _catch_up_with_brokers(self, leader: int) -> None:
        """A new active controller fences the brokers that stopped without one (their heartbeats do not come)
        and unfences those that started meanwhile."""
        for broker in sorted(self.unnoticed):
            self.unnoticed.discard(broker)
            self.live.discard(broker)
            self._follow_controller()
            self._kraft_fence(broker)
        for broker in sorted(self.unregistered):
            self.unregistered.discard(broker)
            self._unfence(broker, leader, rejoin_isr=True)
        self.version += 1

    def _live_voters(self) -> list[int] | None:
        """Combined mode: the live voters, in id order, when they are a majority (else None: no quorum)."""
        voters = self.voters or []
        live = [v for v in voters if self.is_running(v) and v not in self.crashed_voters]
        return live if 2 * len(live) > len(voters) else None

    def _follow_controller(self) -> None:
        """After a broker stops or starts: a controller that is gone is replaced by the lowest live broker
        (combined mode: the lowest live voter, and none while a majority of the voters is down, as a Raft
        quorum elects no leader without a majority; a non-voter never leads)."""
        if self.voters is None:
            if self.controller_id not in self.live:
                self.controller_id = min(self.live) if self.live else NO_LEADER
            return
        live = self._live_voters()
        if live is None:
            self.controller_id = NO_LEADER
        elif self.controller_id not in live:
            self.controller_id = live[0]
