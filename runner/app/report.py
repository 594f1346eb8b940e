"""The report verb: one tournament's report, read through the store object."""

from __future__ import annotations

from dataclasses import replace

from runner.report.build import Report, ReportError, build_report
from runner.report.records import TuningSeries
from runner.store.store import Store, TuneRecord

__all__ = ["ReportError", "factors_of", "report", "tuning_of", "tuning_series"]


def report(store: Store, tournament_id: int | None = None) -> Report:
    """The report of one tournament (default: the newest); ReportError when there is none."""
    with store.report_rows() as rows:
        built = build_report(rows, tournament_id)
    factors = factors_of(store, built.tournament_id) if built.workers else {}
    return replace(built, tuning=tuning_of(store, built.tournament_id),
                   workers=tuple(replace(w, factor=factors.get(w.worker))
                                 for w in built.workers))


def factors_of(store: Store, tournament_id: int) -> dict[str, float]:
    """The clock factor of each remote worker that played the tournament's games, by the
    name its games are stored with (the mean over its games: a worker that joined again
    after a service restart may have benched differently)."""
    names = {w.id: w.name for w in store.fleet.workers()}
    factors: dict[str, list[float]] = {}
    for game in store.fleet.games(tournament_id):
        factors.setdefault(names.get(game.worker_id, ""), []).append(game.factor)
    return {name: round(sum(f) / len(f), 3) for name, f in factors.items() if name}


def tuning_of(store: Store, tournament_id: int) -> TuningSeries | None:
    """The theta series of the tuning run that played `tournament_id` as a pair, if any."""
    run = store.tunes.of_tournament(tournament_id)
    return None if run is None else tuning_series(store, run)


def tuning_series(store: Store, run: TuneRecord) -> TuningSeries:
    """A stored tuning run's theta series: each parameter from its start, per iteration."""
    parameters = [row for row in run.plan.get("parameters", ())]
    return TuningSeries(
        run.name, tuple(str(p[0]) for p in parameters), tuple(float(p[1]) for p in parameters),
        tuple((i.k, i.theta) for i in store.tunes.iterations(run.id)))
