"""The report tree on the wire: `ReportJson`, what ``runner report --format json`` writes and the
service carries, its keys those the report always had (see `runner.report.wire`)."""

from __future__ import annotations

from runner.report.figures import iso_seconds
from runner.report.records import (
    CrossCell,
    EngineFaults,
    EngineSearch,
    PairingResult,
    Report,
    SprtState,
    Standing,
    TerminationTally,
)
from runner.report.wire import Finite, StatsJson, Wire
from runner.report.workers import WorkerFaults, WorkerStanding

__all__ = [
    "CrossCellJson",
    "CrosstableJson",
    "EloLineJson",
    "EngineSearchJson",
    "FaultsJson",
    "LengthBinJson",
    "LengthsJson",
    "LlrLineJson",
    "PairingJson",
    "ReportJson",
    "SeriesJson",
    "SprtReportJson",
    "StandingJson",
    "TerminationJson",
    "TournamentPartJson",
    "WorkerFaultsJson",
    "iso_seconds",
]


# -- the report ----------------------------------------------------------------------------------


class TournamentPartJson(Wire):
    """The report's head: which tournament, how far it is."""

    id: int
    name: str
    format: str
    status: str
    games_planned: int
    games_played: int
    engines: list[str]
    reference: str
    first_started: str | None
    last_ended: str | None
    stopped: str | None = None
    """Why the run stopped when an engine never moved: then no standings, pairings or SPRT."""


class StandingJson(Wire):
    """One engine's line in the standings."""

    rank: int
    engine: str
    games: int
    points: float
    score: Finite
    wins: int
    draws: int
    losses: int
    elo: Finite
    elo_error95: Finite
    los: Finite
    reference: bool

    @classmethod
    def of(cls, s: Standing) -> StandingJson:
        """The wire form of a `Standing`."""
        return cls(rank=s.rank, engine=s.engine, games=s.games, points=s.points, score=s.score,
                   wins=s.wins, draws=s.draws, losses=s.losses, elo=s.elo,
                   elo_error95=s.elo_error95, los=s.los, reference=s.reference)


class PairingJson(Wire):
    """Two engines' results against each other, from `first`'s point of view."""

    first: str
    second: str
    wins: int
    draws: int
    losses: int
    pentanomial: list[int]
    wl_pairs: int | None
    stats: StatsJson | None
    wdl_stats: StatsJson | None

    @classmethod
    def of(cls, p: PairingResult) -> PairingJson:
        """The wire form of a `PairingResult`."""
        return cls(first=p.first, second=p.second, wins=p.trinomial.wins,
                   draws=p.trinomial.draws, losses=p.trinomial.losses,
                   pentanomial=list(p.pentanomial.low_to_high),
                   wl_pairs=p.pentanomial.wl_pairs,
                   stats=None if p.stats is None else StatsJson.of(p.stats),
                   wdl_stats=None if p.wdl_stats is None else StatsJson.of(p.wdl_stats))


class CrossCellJson(Wire):
    """The row engine's points and games against the column engine."""

    points: float
    games: int


class CrosstableJson(Wire):
    """Every engine against every other (round-robin); a cell is null on the diagonal."""

    engines: list[str]
    cells: list[list[CrossCellJson | None]]


class TerminationJson(Wire):
    """How many games ended one way, split by result."""

    termination: str
    games: int
    white_wins: int
    black_wins: int
    draws: int
    unfinished: int

    @classmethod
    def of(cls, t: TerminationTally) -> TerminationJson:
        """The wire form of a `TerminationTally`."""
        return cls(termination=t.label, games=t.games, white_wins=t.white_wins,
                   black_wins=t.black_wins, draws=t.draws, unfinished=t.unfinished)


class FaultsJson(Wire):
    """Games one engine lost (or drew) through its own fault, by kind."""

    engine: str
    time_forfeits: int
    illegal_moves: int
    false_claims: int
    crashes: int
    stalls: int
    total: int

    @classmethod
    def of(cls, f: EngineFaults) -> FaultsJson:
        """The wire form of an `EngineFaults`."""
        return cls(engine=f.engine, time_forfeits=f.time_forfeits,
                   illegal_moves=f.illegal_moves, false_claims=f.false_claims,
                   crashes=f.crashes, stalls=f.stalls, total=f.total)


class WorkerFaultsJson(Wire):
    """One engine's games and faults on one Dask worker."""

    worker: str
    engine: str
    games: int
    crashes: int
    time_losses: int
    flagged: bool

    @classmethod
    def of(cls, w: WorkerFaults) -> WorkerFaultsJson:
        """The wire form of a `WorkerFaults`."""
        return cls(worker=w.worker, engine=w.engine, games=w.games, crashes=w.crashes,
                   time_losses=w.time_losses, flagged=w.flagged)


class WorkerJson(Wire):
    """One worker's standing by fishtest's bad-worker rules."""

    worker: str
    games: int
    crashes: int
    time_losses: int
    pentanomial: list[int]
    """Its whole pairs: LL, LD, WL+DD, WD, WW from each pairing's first engine's side."""
    residual: Finite
    """Its residual in the test (null: too few pairs, or no test)."""
    colour: str
    flagged: bool
    why: str
    factor: Finite
    """The factor its clocks were scaled by (null: not a remote worker)."""

    @classmethod
    def of(cls, w: WorkerStanding) -> WorkerJson:
        """The wire form of a `WorkerStanding`."""
        return cls(worker=w.worker, games=w.games, crashes=w.crashes,
                   time_losses=w.time_losses, pentanomial=list(w.pentanomial),
                   residual=w.residual, colour=w.colour, flagged=w.flagged, why=w.why,
                   factor=w.factor)


class EngineSearchJson(Wire):
    """One engine's search over its own moves (book moves left out)."""

    engine: str
    moves: int
    mean_depth: Finite
    mean_time_ms: Finite
    nps: Finite
    mean_seldepth: Finite
    mean_time_share: Finite
    """The mean of each move's time over the clock when it was asked (null: no clock)."""
    least_left_ms: int | None
    """The least the clock showed right after a move's search, before the increment."""
    near_flag: int
    """Moves with under 5% of the clock when asked, or of the increment, left after them."""
    worker: str | None
    """In ``search_by_worker``, the worker (``(runner)``: the runner's own processes)."""
    pondered: int
    """Moves after a ponder search (UCI ``go ponder``), hits and misses."""
    ponder_hit_rate: Finite
    """The share of `pondered` on which the opponent played the expected move (null: none)."""

    @classmethod
    def of(cls, s: EngineSearch) -> EngineSearchJson:
        """The wire form of an `EngineSearch`."""
        return cls(engine=s.engine, moves=s.moves, mean_depth=s.mean_depth,
                   mean_time_ms=s.mean_time_ms, nps=s.nps, mean_seldepth=s.mean_seldepth,
                   mean_time_share=s.mean_time_share, least_left_ms=s.least_left_ms,
                   near_flag=s.near_flag, worker=s.worker, pondered=s.pondered,
                   ponder_hit_rate=s.ponder_hit_rate)


class SprtReportJson(Wire):
    """The report's SPRT: where it stands (null before a game) and its settings."""

    llr: Finite
    lower_bound: Finite
    upper_bound: Finite
    decision: str | None
    elo0: float
    elo1: float
    alpha: float
    beta: float
    model: str
    maxgames: int | None
    stored_decision: str | None
    first: str
    second: str
    settings_source: str

    @classmethod
    def of(cls, state: SprtState) -> SprtReportJson:
        """The wire form of a `SprtState`."""
        spec, result = state.spec, state.result
        return cls(
            llr=None if result is None else result.llr,
            lower_bound=None if result is None else result.lower_bound,
            upper_bound=None if result is None else result.upper_bound,
            decision=None if result is None else result.decision.value,
            elo0=spec.elo0, elo1=spec.elo1, alpha=spec.alpha, beta=spec.beta,
            model=spec.model.value, maxgames=state.maxgames,
            stored_decision=state.stored_decision, first=state.first, second=state.second,
            settings_source="tournament config (sprt table)")


class EloLineJson(Wire):
    """One Elo estimate over games played: parallel lists, a point per entry."""

    label: str
    games: list[int]
    elo: list[Finite]
    elo_error95: list[Finite]


class LlrLineJson(Wire):
    """The SPRT's log-likelihood ratio over games played: parallel lists."""

    games: list[int]
    llr: list[Finite]


class SeriesJson(Wire):
    """The plots' data."""

    elo_kind: str
    elo: list[EloLineJson]
    llr: LlrLineJson


class LengthBinJson(Wire):
    """Games whose length in plies lies in [low, high]."""

    low: int
    high: int
    games: int


class LengthsJson(Wire):
    """How long the games were."""

    mean_plies: Finite
    bins: list[LengthBinJson]


class ReportJson(Wire):
    """A tournament's report: ``runner report --format json``, and what the API carries."""

    tournament: TournamentPartJson
    standings: list[StandingJson]
    pairings: list[PairingJson]
    crosstable: CrosstableJson | None
    draw_ratio: Finite
    terminations: list[TerminationJson]
    faults: list[FaultsJson]
    unattributed_faults: int
    worker_faults: list[WorkerFaultsJson]
    workers: list[WorkerJson]
    search: list[EngineSearchJson]
    search_by_worker: list[EngineSearchJson]
    sprt: SprtReportJson | None
    series: SeriesJson
    lengths: LengthsJson
    notes: list[str]

    @classmethod
    def of(cls, report: Report) -> ReportJson:
        """The wire form of a built `Report`."""
        cross = report.crosstable
        return cls(
            tournament=TournamentPartJson(
                id=report.tournament_id, name=report.name, format=report.format.value,
                status=report.status, games_planned=report.games_planned,
                games_played=report.games_played, engines=list(report.engines),
                reference=report.reference, first_started=iso_seconds(report.first_started),
                last_ended=iso_seconds(report.last_ended), stopped=report.stopped),
            standings=[StandingJson.of(s) for s in report.standings],
            pairings=[PairingJson.of(p) for p in report.pairings],
            crosstable=None if cross is None else CrosstableJson(
                engines=list(cross.engines),
                cells=[[_cell(c) for c in row] for row in cross.cells]),
            draw_ratio=report.draw_ratio,
            terminations=[TerminationJson.of(t) for t in report.terminations],
            faults=[FaultsJson.of(f) for f in report.faults],
            unattributed_faults=report.unattributed_faults,
            worker_faults=[WorkerFaultsJson.of(w) for w in report.worker_faults],
            workers=[WorkerJson.of(w) for w in report.workers],
            search=[EngineSearchJson.of(s) for s in report.search],
            search_by_worker=[EngineSearchJson.of(s) for s in report.search_by_worker],
            sprt=None if report.sprt is None else SprtReportJson.of(report.sprt),
            series=SeriesJson(
                elo_kind=report.elo_series_kind,
                elo=[EloLineJson(label=s.label, games=[p.games for p in s.points],
                                 elo=[p.elo for p in s.points],
                                 elo_error95=[p.elo_error95 for p in s.points])
                     for s in report.elo_series],
                llr=LlrLineJson(games=[p.games for p in report.llr_series],
                                llr=[p.llr for p in report.llr_series])),
            lengths=LengthsJson(mean_plies=report.mean_plies,
                                bins=[LengthBinJson(low=b.low, high=b.high, games=b.games)
                                      for b in report.lengths]),
            notes=list(report.notes),
        )


def _cell(cell: CrossCell | None) -> CrossCellJson | None:
    return None if cell is None else CrossCellJson(points=cell.points, games=cell.games)
