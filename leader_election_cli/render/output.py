"""Which renderer draws which report in which mode (`modes` says what the modes are): formatters as
plug-ins, one table of report types."""

from __future__ import annotations

from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from leader_election_cli.render.modes import JSON, TABLE, TEXT

if TYPE_CHECKING:
    from leader_election_cli.reports.run import Report


def write_json(document: dict[str, Any], out: IO[str]) -> None:
    import json  # (not for Kafka's lines or a table)

    json.dump(document, out, indent=2)
    out.write("\n")


_Renderer = Callable[[Any, IO[str], IO[str], "bool | None"], None]  # report, out, err, --color


def _election(mode: str) -> _Renderer:
    if mode == JSON:
        from leader_election_cli.render.election_json import render_json

        return lambda r, out, _err, _color: render_json(r, out)
    from leader_election_cli.render import election

    return {TABLE: lambda r, out, err, color: election.render_table(r, out, err, color=color),
            TEXT: lambda r, out, err, _color: election.render_text(r, out, err)}[mode]


def _json_or(mode: str, document: Callable[[Any], dict[str, Any]], table: _Renderer) -> _Renderer:
    """A command's JSON document in json mode, else its table (these commands have no text of Kafka's)."""
    return (lambda r, out, _err, _color: write_json(document(r), out)) if mode == JSON else table


def _nothing(_r: Any, _out: IO[str], _err: IO[str], _color: bool | None) -> None:
    """A table has nothing to show for a run that stopped: the error line says it all."""


def _moves(mode: str) -> _Renderer:
    from leader_election_cli.render.moves import render_moves_table
    from leader_election_cli.reports import moves

    return _json_or(mode, moves.document, render_moves_table)


def _status(mode: str) -> _Renderer:
    from leader_election_cli.render.balance import render_status_table
    from leader_election_cli.reports import balance

    return _json_or(mode, balance.status_document, lambda r, out, _err, color: render_status_table(r, out, color))


def _status_unread(mode: str) -> _Renderer:
    from leader_election_cli.reports import balance

    return _json_or(mode, lambda r: balance.status_unread_document(r.error, r.exit_code), _nothing)


def _rebalance(mode: str) -> _Renderer:
    from leader_election_cli.render.balance import render_rebalance_table
    from leader_election_cli.reports import balance

    return _json_or(mode, balance.rebalance_document, render_rebalance_table)


def _balance(mode: str) -> _Renderer:
    from leader_election_cli.render.balance_plan import render_balance_table
    from leader_election_cli.reports import balance_plan

    return _json_or(mode, balance_plan.document, render_balance_table)


def _balance_stopped(mode: str) -> _Renderer:
    from leader_election_cli.reports import balance_plan

    return _json_or(mode, balance_plan.stopped_document, _nothing)


def _can_stop(mode: str) -> _Renderer:
    from leader_election_cli.render.maintenance import render_can_stop_table
    from leader_election_cli.reports import maintenance

    return _json_or(mode, maintenance.document, render_can_stop_table)


def _roll(mode: str) -> _Renderer:
    from leader_election_cli.render.maintenance import render_roll_table
    from leader_election_cli.reports import maintenance

    return _json_or(mode, maintenance.roll_document, render_roll_table)


# By the report's class name (each is unique): an election's run imports no other command's reports.
_RENDERERS: dict[str, Callable[[str], _Renderer]] = {
    "ElectionReport": _election, "MoveReport": _moves, "StatusReport": _status, "StatusUnread": _status_unread,
    "RebalanceRun": _rebalance, "BalanceReport": _balance, "BalanceStopped": _balance_stopped,
    "CanStopReport": _can_stop, "RollReport": _roll,
}


def render(report: Report, mode: str, out: IO[str], err: IO[str], color: bool | None = None) -> None:
    """Draw `report` in `mode` (table, text or json; never auto); `color` is --color/--no-color (None: as
    the environment says, `tables.colors_wanted`)."""
    _RENDERERS[type(report).__name__](mode)(report, out, err, color)
