"""The report verb: one tournament's report, read through the store object."""

from __future__ import annotations

from dataclasses import replace

from runner.report.build import Report, ReportError, build_report
from runner.report.records import TuningSeries
from runner.store.store import Store

__all__ = ["ReportError", "report", "tuning_of"]


def report(store: Store, tournament_id: int | None = None) -> Report:
    """The report of one tournament (default: the newest); ReportError when there is none."""
    with store.report_rows() as rows:
        built = build_report(rows, tournament_id)
    return replace(built, tuning=tuning_of(store, built.tournament_id))


def tuning_of(store: Store, tournament_id: int) -> TuningSeries | None:
    """The theta series of the tuning run that played `tournament_id` as a pair, if any."""
    run = store.tunes.of_tournament(tournament_id)
    if run is None:
        return None
    parameters = [row for row in run.plan.get("parameters", ())]
    return TuningSeries(
        run.name, tuple(str(p[0]) for p in parameters), tuple(float(p[1]) for p in parameters),
        tuple((i.k, i.theta) for i in store.tunes.iterations(run.id)))
