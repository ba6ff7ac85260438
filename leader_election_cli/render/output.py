"""Which renderer draws which report in which mode (`modes` says what the modes are): formatters as
plug-ins, one table of report types."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import IO, Any

from leader_election_cli.render.modes import JSON, TABLE, TEXT
from leader_election_cli.reports import balance, balance_plan, moves
from leader_election_cli.reports.balance import RebalanceRun, StatusReport, StatusUnread
from leader_election_cli.reports.balance_plan import BalanceReport, BalanceStopped
from leader_election_cli.reports.election import ElectionReport
from leader_election_cli.reports.moves import MoveReport
from leader_election_cli.reports.run import Report


def write_json(document: dict[str, Any], out: IO[str]) -> None:
    json.dump(document, out, indent=2)
    out.write("\n")


def _election(mode: str) -> Callable[[ElectionReport, IO[str], IO[str]], None]:
    from leader_election_cli.render import election

    return {JSON: lambda r, out, _err: election.render_json(r, out), TABLE: election.render_table,
            TEXT: election.render_text}[mode]


def _moves(mode: str) -> Callable[[MoveReport, IO[str], IO[str]], None]:
    from leader_election_cli.render.moves import render_moves_table

    return (lambda r, out, _err: write_json(moves.document(r), out)) if mode == JSON else render_moves_table


def _status(mode: str) -> Callable[[StatusReport, IO[str], IO[str]], None]:
    from leader_election_cli.render.balance import render_status_table

    return ((lambda r, out, _err: write_json(balance.status_document(r), out)) if mode == JSON
            else lambda r, out, _err: render_status_table(r, out))


def _status_unread(mode: str) -> Callable[[StatusUnread, IO[str], IO[str]], None]:
    if mode == JSON:
        return lambda r, out, _err: write_json(balance.status_unread_document(r.error, r.exit_code), out)
    return lambda _r, _out, _err: None  # a table has nothing to show: the error line says it all


def _rebalance(mode: str) -> Callable[[RebalanceRun, IO[str], IO[str]], None]:
    from leader_election_cli.render.balance import render_rebalance_table

    return (lambda r, out, _err: write_json(balance.rebalance_document(r), out)) if mode == JSON \
        else render_rebalance_table


def _balance(mode: str) -> Callable[[BalanceReport, IO[str], IO[str]], None]:
    from leader_election_cli.render.balance_plan import render_balance_table

    return (lambda r, out, _err: write_json(balance_plan.document(r), out)) if mode == JSON else render_balance_table


def _balance_stopped(mode: str) -> Callable[[BalanceStopped, IO[str], IO[str]], None]:
    if mode == JSON:
        return lambda r, out, _err: write_json(balance_plan.stopped_document(r), out)
    return lambda _r, _out, _err: None  # a table has nothing to show: the error line says it all


_RENDERERS: dict[type, Callable[[str], Callable[[Any, IO[str], IO[str]], None]]] = {
    ElectionReport: _election, MoveReport: _moves, StatusReport: _status, StatusUnread: _status_unread,
    RebalanceRun: _rebalance, BalanceReport: _balance, BalanceStopped: _balance_stopped,
}


def render(report: Report, mode: str, out: IO[str], err: IO[str]) -> None:
    """Draw `report` in `mode` (table, text or json; never auto)."""
    _RENDERERS[type(report)](mode)(report, out, err)
