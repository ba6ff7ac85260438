"""Unclean-election safety: the toolkit lists the partitions at risk and asks; the drop-in only warns."""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Callable
from importlib import resources

import jsonschema
import pytest
from commands import Run, invoke

from leader_election_cli.cli import common, elect_command
from leader_election_cli.cli.drop_in_command import command as drop_in
from leader_election_cli.errors import ExitCode, RefusedError
from leader_election_cli.model import NO_LEADER, ClusterState, Outcome, PartitionState, TopicPartition
from leader_election_cli.operations.elect import confirm_unclean
from leader_election_cli.operations.hooks import Hooks
from leader_election_cli.planning import risk as safety
from leader_election_cli.planning.prediction import Prediction
from leader_election_cli.sandbox import Sandbox

METADATA, ELECT_LEADERS, DESCRIBE_CONFIGS, TOPIC_AUTHORIZATION_FAILED = 3, 43, 32, 29
AT_RISK = ("Warning: 1 partition(s) would elect a leader outside the ISR; messages not replicated to it are lost: "
           "u-0 (leader 2, ISR was ")

# u-0's lost in-sync replica 1 (kept in the ISR without ELR, moved to the ELR with it) would lead without loss
RECOVERABLE = ("Warning: 1 partition(s) of those outside the ISR could instead recover without data loss (the "
               "controller elects an in-sync or eligible leader replica by itself when one comes back): u-0 (broker 1)")

REPORT_SCHEMA = json.loads(resources.files("leader_election_cli").joinpath("schemas/report.schema.json").read_text())


@pytest.fixture
def sb(sandbox_factory: Callable[..., Sandbox], mode: str) -> Sandbox:
    """u-0 lost its only in-sync replica (broker 1) and only out-of-sync broker 2 is left: unclean only."""
    sandbox = sandbox_factory(3, mode, topics={"ok": {0: [2, 3]}})
    sandbox.create_topic("u", assignment={0: [1, 2]}, configs={"min.insync.replicas": "2"})
    sandbox.set_isr("u", 0, [1])
    sandbox.stop_broker(1)
    assert sandbox.partition_state("u", 0).leader == NO_LEADER
    return sandbox


def toolkit(sb: Sandbox, *args: str, input: str | None = None) -> Run:
    return invoke(elect_command.elect, sb, "--election-type", "unclean", *args, input=input)


def test_without_a_terminal_and_without_yes_it_refuses_and_sends_nothing(sb: Sandbox) -> None:
    code, out, err = toolkit(sb, "--topic", "u", "--topic", "ok")
    assert (code, out, sb.request_count(ELECT_LEADERS)) == (ExitCode.REFUSED, "", 0)
    lines = err.splitlines()
    assert lines[0].startswith(AT_RISK)
    assert lines[1] == ("Warning: 1 partition(s) would have fewer in-sync replicas than min.insync.replicas "
                        "(acks=all writes fail until replicas catch up): u-0 (ISR 2, min 2)")
    assert lines[2] == RECOVERABLE
    assert lines[3] == ("Refusing an unclean election that may lose data on 1 partition(s) (u-0) without "
                        "confirmation: nothing was sent")
    assert sb.partition_state("u", 0).leader == NO_LEADER


def test_a_topic_whose_min_isr_cannot_be_read_is_said_unchecked(sb: Sandbox) -> None:
    """DescribeConfigs refused for the topic (no DESCRIBE_CONFIGS): no 'below min.insync.replicas' line
    could be written, and saying nothing looked like 'checked, fine'."""
    sb.fail_next(DESCRIBE_CONFIGS, TOPIC_AUTHORIZATION_FAILED)
    code, _, err = toolkit(sb, "--topic", "u", "--dry-run")
    assert code == 0
    assert err.splitlines()[1:] == ["Warning: 1 partition(s) could not be checked against min.insync.replicas "
                                    "(their topic configs could not be read; DESCRIBE_CONFIGS is needed): u-0",
                                    RECOVERABLE]


def test_yes_runs_it(sb: Sandbox) -> None:
    code, out, err = toolkit(sb, "--topic", "u", "--topic", "ok", "--yes", "--output", "text")
    assert code == 0 and err.startswith(AT_RISK)
    assert out.splitlines() == ["Successfully completed leader election (UNCLEAN) for partitions u-0",
                                "Valid replica already elected for partitions ok-0"]
    assert (sb.partition_state("u", 0).leader, sb.partition_state("u", 0).isr) == (2, (2,))


@pytest.mark.parametrize("answer, code", [("y\n", 0), ("n\n", ExitCode.REFUSED), ("", ExitCode.REFUSED)],
                         ids=["yes", "no", "ctrl-d"])
def test_on_a_terminal_it_asks(sb: Sandbox, monkeypatch: pytest.MonkeyPatch, answer: str, code: int) -> None:
    monkeypatch.setattr(common, "interactive", lambda: True)
    result_code, _, err = toolkit(sb, "-p", "u:0", input=answer)
    assert result_code == code and "Internal error" not in err
    assert "Elect a leader outside the ISR for 1 partition(s) (u-0), accepting data loss? [y/N]" in err
    assert sb.request_count(ELECT_LEADERS) == (1 if code == 0 else 0)


def test_nothing_at_risk_needs_no_confirmation(sb: Sandbox) -> None:
    code, out, err = toolkit(sb, "--topic", "ok", "--output", "text")
    assert (code, out, err) == (0, "Valid replica already elected for partitions ok-0\n", "")


def drop_in_unclean(sb: Sandbox, *args: str, output: str = "text") -> Run:
    return invoke(drop_in, sb, "--election-type", "unclean", "--topic", "u", "--partition", "0", "--output", output,
                  *args)


def test_the_drop_in_never_asks_but_warns_on_stderr(sb: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kafka's tool asks nothing, even on a terminal: the same runbooks work unchanged."""
    monkeypatch.setattr(common, "interactive", lambda: True)
    code, out, err = drop_in_unclean(sb)
    assert (code, out) == (0, "Successfully completed leader election (UNCLEAN) for partitions u-0\n")
    assert err.startswith(AT_RISK) and "[y/N]" not in err
    assert sb.partition_state("u", 0).leader == 2
    # its warnings come from the election's own Metadata read, with the configs (and ELR) read onto it
    sent = [r.api_key for r in sb.request_log]
    assert sent[:sent.index(ELECT_LEADERS)].count(METADATA) == 1 and DESCRIBE_CONFIGS in sent


@pytest.mark.parametrize("tool", ["drop-in", "elect"])
def test_the_json_document_carries_the_data_loss_warning(sb: Sandbox, tool: str) -> None:
    if tool == "elect":
        code, out, _ = toolkit(sb, "--topic", "u", "--yes", "--output", "json")
    else:
        code, out, _ = drop_in_unclean(sb, output="json")
    document = json.loads(out)
    assert code == 0 and [p["outcome"] for p in document["partitions"]] == ["elected"]
    assert document["warnings"] and document["warnings"][0].startswith(AT_RISK.removeprefix("Warning: "))


def test_plan_flags_the_partitions_at_risk(sb: Sandbox) -> None:
    code, out, err = invoke(elect_command.plan, sb, "--election-type", "unclean", "--all-topic-partitions",
                            "--output", "json")
    assert code == 0 and err.startswith(AT_RISK)
    rows = {p["topic"]: p for p in json.loads(out)["partitions"]}
    assert (rows["u"]["unclean"], rows["u"]["below_min_isr"], rows["u"]["leader_after"]) == (True, True, 2)
    assert (rows["ok"]["unclean"], rows["ok"]["error_code"]) == (False, 84)
    assert sb.request_count(ELECT_LEADERS) == 0


# -- the rule itself -------------------------------------------------------------------------------

def prediction(unclean: bool, below_min_isr: bool = False, outcome: Outcome = Outcome.ELECTED) -> Prediction:
    return Prediction(TopicPartition("t", 0), outcome, 0, NO_LEADER, 2, (2,), (), unclean, below_min_isr)


@pytest.mark.parametrize("predictions, yes, interactive, answer, refused", [
    ([prediction(True)], False, False, None, True),  # no terminal, no --yes
    ([prediction(True)], True, False, None, False),  # --yes
    ([prediction(True)], False, True, True, False),  # asked: yes
    ([prediction(True)], False, True, False, True),  # asked: no
    ([prediction(False, below_min_isr=True)], False, False, None, False),  # no data loss: no question
    ([prediction(True, outcome=Outcome.FAILED)], False, False, None, False),  # nothing would be elected
])
def test_confirmation_rule(predictions: list[Prediction], yes: bool, interactive: bool, answer: bool | None,
                           refused: bool) -> None:
    asked: list[str] = []

    def confirm(question: str) -> bool:
        asked.append(question)
        return bool(answer)

    risk = safety.assess(predictions)
    hooks = Hooks(confirm=confirm if interactive else None)
    if refused:
        with pytest.raises(RefusedError):
            confirm_unclean(risk, yes, hooks)
    else:
        confirm_unclean(risk, yes, hooks)
    assert len(asked) == (answer is not None)


def test_long_lists_are_cut_and_counted() -> None:
    predictions = [Prediction(TopicPartition("t", p), Outcome.ELECTED, 0, NO_LEADER, 2, (2,), (), True)
                   for p in range(safety.LISTED + 5)]
    state = ClusterState({2: ("h", 1)}, 2, {p.tp: PartitionState("t", p.tp.partition, NO_LEADER, (1, 2), (1,))
                                            for p in predictions})
    line, recoverable = safety.warning_lines(safety.assess(predictions), state)
    assert line.count("(leader 2, ISR was 1)") == safety.LISTED and line.endswith(
        "... and 5 more (see 'kafka-leaders plan --output json')")
    assert recoverable.count("(broker 1)") == safety.LISTED
    assert recoverable.endswith("... and 5 more (see 'kafka-leaders plan --output json')")


def test_with_elr_it_says_which_partitions_an_eligible_replica_can_bring_back_without_loss() -> None:
    """Kafka 4.1 (ELR on): t-0's ELR members 4 and 5 are down, so it can wait for them; t-1 has neither ISR
    nor ELR left (e.g. after unclean shutdowns), so there is nothing to wait for. The question names both."""
    partitions = {TopicPartition("t", 0): PartitionState("t", 0, NO_LEADER, (4, 5, 6), (), (4, 5), (4,)),
                  TopicPartition("t", 1): PartitionState("t", 1, NO_LEADER, (4, 5, 6), (), (), (4,))}
    state = ClusterState({6: ("h", 1)}, 6, partitions, features={"eligible.leader.replicas.version": 1})
    predictions = [Prediction(tp, Outcome.ELECTED, 0, NO_LEADER, 6, (6,), (), True) for tp in partitions]
    risk = safety.assess(predictions)
    assert safety.warning_lines(risk, state) == [
        "Warning: 2 partition(s) would elect a leader outside the ISR; messages not replicated to it are lost: "
        "t-0 (leader 6, ISR was empty, ELR 4,5), t-1 (leader 6, ISR was empty)",
        "Warning: 1 partition(s) of those outside the ISR could instead recover without data loss (the controller "
        "elects an in-sync or eligible leader replica by itself when one comes back): t-0 (broker 4 or 5)",
        "Warning: 1 partition(s) of those outside the ISR have no in-sync or eligible leader replica left to wait "
        "for: t-1"]
    asked: list[str] = []
    with pytest.raises(RefusedError, match="cancelled"):
        confirm_unclean(risk, False, Hooks(confirm=lambda q: bool(asked.append(q))))
    with pytest.raises(RefusedError, match=r"on 2 partition\(s\) \(t-0, t-1\) without confirmation"):
        confirm_unclean(risk, False, Hooks())
    assert asked == ["Elect a leader outside the ISR for 2 partition(s) (t-0, t-1), accepting data loss?"]


def test_with_elr_off_an_elr_kept_from_before_still_names_the_replica_to_wait_for() -> None:
    """ELR turned off (level 0) while t-0 was leaderless: its ELR stays until the partition's next change,
    and the controller elects 2 from it when 2 returns (isValidNewLeader does not ask whether ELR is on).
    The warning said there was nobody to wait for."""
    partitions = {TopicPartition("t", 0): PartitionState("t", 0, NO_LEADER, (1, 2), (), (2,))}
    state = ClusterState({1: ("h", 1)}, 1, partitions, features={"eligible.leader.replicas.version": 0})
    risk = safety.assess([Prediction(TopicPartition("t", 0), Outcome.ELECTED, 0, NO_LEADER, 1, (1,), (), True)])
    assert safety.warning_lines(risk, state)[1] == (
        "Warning: 1 partition(s) of those outside the ISR could instead recover without data loss (the controller "
        "elects an in-sync or eligible leader replica by itself when one comes back): t-0 (broker 2)")


def test_on_4_1_an_unclean_election_past_the_elr_names_the_replicas_to_wait_for(
        sandbox_factory: Callable[..., Sandbox]) -> None:
    """kafka-4.1.0-leaderless-elr-on.txt, step B4: rf3-min2's ISR 4,5 and ELR 4,5 are down and only 6 is up;
    Kafka's tool elects 6. The drop-in does the same, and says that 4 or 5 coming back would have lost nothing."""
    sb = sandbox_factory(6, "kraft")
    sb.create_topic("rf3-min2", assignment={0: [4, 5, 6]}, configs={"min.insync.replicas": "2"})
    for broker in (6, 5, 4):
        sb.stop_broker(broker)
    sb.start_broker(6)
    state = sb.partition_state("rf3-min2", 0)
    assert (state.leader, state.isr, state.elr, state.last_known_elr) == (NO_LEADER, (), (4, 5), (4,))
    code, out, err = invoke(drop_in, sb, "--election-type", "unclean", "--topic", "rf3-min2", "--partition", "0",
                            "--output", "text")
    assert (code, out) == (0, "Successfully completed leader election (UNCLEAN) for partitions rf3-min2-0\n")
    assert err.splitlines()[0] == ("Warning: 1 partition(s) would elect a leader outside the ISR; messages not "
                                   "replicated to it are lost: rf3-min2-0 (leader 6, ISR was empty, ELR 4,5)")
    assert "could instead recover without data loss (the controller elects an in-sync or eligible leader replica " \
           "by itself when one comes back): rf3-min2-0 (broker 4 or 5)" in err


def test_no_question_without_a_terminal_to_answer_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """stdin closed (`<&-`: sys.stdin is None) was an internal error; neither that nor a pipe can answer."""
    monkeypatch.setattr(sys, "stdin", None)
    assert common.interactive() is False
    monkeypatch.setattr(sys, "stdin", io.StringIO("y\n"))
    assert common.interactive() is False


@pytest.mark.parametrize("answer", ["n\n", "", None], ids=["no", "ctrl-d", "without a terminal"])
def test_a_refused_unclean_election_still_prints_the_json_document(sb: Sandbox, monkeypatch: pytest.MonkeyPatch,
                                                                    answer: str | None) -> None:
    """stdout was empty with exit 5: a JSON consumer got nothing to read."""
    monkeypatch.setattr(common, "interactive", lambda: answer is not None)
    code, out, _ = toolkit(sb, "-p", "u:0", "--output", "json", input=answer)
    document = json.loads(out)
    assert code == ExitCode.REFUSED and document["summary"]["exit_code"] == ExitCode.REFUSED
    assert document["summary"]["stopped"].startswith(("Unclean election cancelled", "Refusing an unclean election"))
    assert sb.request_count(ELECT_LEADERS) == 0
    # the at-risk partition as a partition record, not only inside the message
    (row,) = document["partitions"]
    assert (row["topic"], row["partition"], row["outcome"], row["unclean"]) == ("u", 0, "not_attempted", True)
    assert row["leader_before"] == row["leader_after"]
    jsonschema.validate(document, REPORT_SCHEMA)
