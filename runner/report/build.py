"""A tournament's report, built from the results database: standings, pairings, plots' data.

Pure: reads through the store's `ReportRows` (SQL aggregates and one lean stream over the
games in the order they ended, so memory stays flat on any size of tournament) and returns
the frozen records of `runner.report.records`; `runner.report.render` turns them into text,
JSON or HTML.

Conventions (the figures are fishtest's, from `runner.stats`):

- The standings' Elo, margin and LOS are `runner.stats.standing_figures`, the same the run's
  own ranking lines show: relative to the reference engine (the first one entered, at 0),
  head-to-head in a match or gauntlet, maximum-likelihood ratings anchored at the reference
  in a round-robin (LOS from the same rating, so it agrees with the Elo beside it).
- Small and degenerate samples follow `runner.stats.match`'s one rule (no figure below two
  games or pairs; fishtest's clamped figures for sweeps), in every view.
- A pairing's headline figures come from its complete game pairs (pentanomial) when there
  are any, as fishtest does, else from single games; the W/D/L figures are given as well.
- SPRT settings are not columns of the schema (only the decision is): they are read from the
  ``sprt`` table of the tournament's stored configuration.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from runner.config.check import ConfigError
from runner.config.model import SprtConfig, TournamentConfig, TournamentFormat, stored_setting
from runner.game.record import GameTermination
from runner.report.records import (
    CrossCell,
    Crosstable,
    EloSeries,
    EngineFaults,
    EngineSearch,
    LengthBin,
    LlrPoint,
    PairingResult,
    Report,
    ReportError,
    SeriesPoint,
    SprtState,
    Standing,
    TerminationTally,
)
from runner.report.workers import WorkerTally
from runner.rules import Result
from runner.stats import (
    EngineScore,
    MatchStats,
    PairingCounts,
    Pentanomial,
    SprtSpec,
    Tally,
    Trinomial,
    match_stats,
    sprt,
    standing_figures,
)
from runner.store import never_moved

if TYPE_CHECKING:
    from runner.store.store import PlayedGame, ReportRows, SearchTotals, TournamentInfo

__all__ = [
    "FAULT_TERMINATIONS",
    "Report",
    "ReportError",
    "StoredSettings",
    "build_report",
    "headline_counts",
    "search_figures",
]

FAULT_TERMINATIONS: Mapping[GameTermination, str] = {
    GameTermination.TIME_FORFEIT: "time_forfeits",
    GameTermination.ILLEGAL_MOVE: "illegal_moves",
    GameTermination.FALSE_CLAIM: "false_claims",
    GameTermination.DISCONNECT: "crashes",
    GameTermination.STALL: "stalls",
}
"""Terminations that are one engine's fault, and the `EngineFaults` field counting each."""

_NICE_WIDTHS = (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000)


def headline_counts(trinomial: Trinomial, pentanomial: Pentanomial) -> Trinomial | Pentanomial:
    """The counts a pairing's headline figures use: complete pairs when any, else games."""
    return pentanomial if pentanomial.pairs else trinomial


def _figures(trinomial: Trinomial, pentanomial: Pentanomial,
             spec: SprtSpec | None = None) -> MatchStats | None:
    """Headline figures of a pairing (None before any game)."""
    counts = headline_counts(trinomial, pentanomial)
    return match_stats(counts, spec) if counts.games else None


# -- building ----------------------------------------------------------------------------------


def build_report(rows: ReportRows, tournament_id: int | None = None, *,
                 max_points: int = 200) -> Report:
    """The report of one tournament (default: the newest); plots keep at most `max_points`.

    One pass over the played games, in the order they ended, gathers every count (W/D/L,
    game pairs, terminations, faults, lengths) and a snapshot of the pairings' counts every
    few games for the plots; memory depends on the number of engines and plot points, not
    on the number of games. `rows`: the store's reads in one transaction
    (`Store.report_rows`).
    """
    if tournament_id is None:
        newest = rows.newest()
        if newest is None:
            raise ReportError("the database holds no tournament")
        tournament_id = newest.id
    info = rows.info(tournament_id)
    if info is None:
        raise ReportError(f"no tournament with id {tournament_id}")
    notes: list[str] = []
    settings = _stored_settings(info.config, tournament_id)
    engines = _engine_order(info, settings)
    if not engines:
        raise ReportError(f"tournament {tournament_id} has no engines")
    replay = _Replay(engines, step=max(1, math.ceil(info.scored / max(1, max_points))))
    for game in rows.played(tournament_id, fault_terminations=FAULT_TERMINATIONS):
        replay.add(game)
    replay.snapshot(final=True)

    pairings = replay.pairings()
    fmt = _format(settings, engines, pairings)
    spec, maxgames = _sprt_settings(settings, notes)
    if spec is not None and len(engines) != 2:
        notes.append("SPRT settings ignored: an SPRT compares exactly two engines")
        spec = None
    results = _pairing_results(pairings, engines, spec)
    faults = tuple(EngineFaults(name, **replay.faults.get(name, {})) for name in engines)
    if replay.unattributed:
        notes.append(f"{replay.unattributed} fault(s) could not be put down to an engine")
    unscored = info.played - info.scored
    if unscored:
        notes.append(f"{unscored} played game(s) have no result that scores (*) and are not "
                     "counted in the figures")
    series, kind, llr_points = _series(replay, fmt, engines, spec)
    search, search_by_worker = search_figures(rows.search(tournament_id), engines)
    scored = replay.tally.games
    lengths, mean_plies = _lengths(replay.lengths)
    built = Report(
        tournament_id=info.id, name=info.name, format=fmt, status=info.status,
        games_planned=info.total_games, games_played=info.played,
        first_started=info.first_started, last_ended=info.last_ended,
        engines=engines, reference=engines[0],
        standings=_standings(replay.tally.engines(), results, notes),
        pairings=tuple(results),
        crosstable=_crosstable(engines, results) if fmt is TournamentFormat.ROUND_ROBIN else None,
        draw_ratio=sum(p.trinomial.draws for p in results) / scored if scored else None,
        terminations=_terminations(replay.endings), faults=faults,
        unattributed_faults=replay.unattributed,
        sprt=_sprt_state(spec, maxgames, results, engines, info.sprt_decision),
        elo_series=series, elo_series_kind=kind, llr_series=llr_points, lengths=lengths,
        mean_plies=mean_plies, notes=tuple(notes), worker_faults=replay.on_workers.faults(engines),
        workers=replay.on_workers.standings(),
        search=search, search_by_worker=search_by_worker,
    )
    if never_moved(info.reason) is None:
        return built
    # Losses before a first move are no games: an Elo from them would read as a result.
    return dataclasses.replace(built, stopped=info.reason, standings=(), pairings=(),
                               crosstable=None, sprt=None, elo_series=(), llr_series=())


def _pairing_results(pairings: Sequence[PairingCounts], engines: Sequence[str],
                     spec: SprtSpec | None) -> list[PairingResult]:
    """Each pairing's figures; the SPRT (if any) runs on the first two engines' pairing."""
    head = tuple(engines[:2])
    return [
        PairingResult(p.first, p.second, p.trinomial, p.pentanomial,
                      _figures(p.trinomial, p.pentanomial,
                               spec if (p.first, p.second) == head else None),
                      match_stats(p.trinomial) if p.trinomial.games else None)
        for p in pairings
    ]


def _sprt_state(spec: SprtSpec | None, maxgames: int | None, results: Sequence[PairingResult],
                engines: Sequence[str], stored_decision: str | None) -> SprtState | None:
    """Where the SPRT of the first two engines stands (None without SPRT settings)."""
    if spec is None:
        return None
    head = next((p for p in results if (p.first, p.second) == tuple(engines[:2])), None)
    return SprtState(spec=spec, maxgames=maxgames,
                     result=None if head is None or head.stats is None else head.stats.sprt,
                     stored_decision=stored_decision, first=engines[0], second=engines[1])


@dataclass(frozen=True)
class StoredSettings:
    """What the report takes from a tournament's stored configuration, read through the
    configuration model; None (or empty) where the row does not say."""

    format: TournamentFormat | None
    engines: tuple[str, ...]
    """Engine names in the configuration's order."""
    sprt: SprtConfig | None
    sprt_problem: str | None = None
    """Why the stored ``sprt`` table could not be read, if it could not."""


def _stored_settings(data: Mapping[str, object], tournament_id: int) -> StoredSettings:
    """The stored configuration's format, engine order and SPRT, through `TournamentConfig`:
    whole when the row reads as one (keys this version does not know are ignored), else
    setting by setting, for a row from an older schema or a partial one."""
    where = f"tournament {tournament_id}'s stored configuration"
    try:
        config = TournamentConfig.from_stored(data, where=where)
    except ConfigError:
        pass
    else:
        return StoredSettings(config.format, tuple(e.name for e in config.engines), config.sprt)
    fmt: TournamentFormat | None = None
    with contextlib.suppress(ConfigError):
        fmt = stored_setting(data, "format", where=where)
    sprt_table: SprtConfig | None = None
    problem: str | None = None
    try:
        sprt_table = stored_setting(data, "sprt", where=where)
    except ConfigError as exc:
        problem = "; ".join(p.message if not p.key else f"{p.key}: {p.message}"
                            for p in exc.problems)
    # An engine entry too old to read as an EngineSpec still names its engine.
    entries = data.get("engines")
    names = tuple(
        name for name in ((e.get("name") if isinstance(e, Mapping) else e)
                          for e in (entries if isinstance(entries, list) else ()))
        if isinstance(name, str))
    return StoredSettings(fmt, names, sprt_table, problem)


def _engine_order(info: TournamentInfo, settings: StoredSettings) -> tuple[str, ...]:
    """Engines in the configuration's order (the stored rows' order when it has none)."""
    names: list[str] = []
    for name in settings.engines:
        if name in info.engines and name not in names:
            names.append(name)
    names.extend(name for name in info.engines if name not in names)
    return tuple(names)


def _format(settings: StoredSettings, engines: Sequence[str],
            pairings: Sequence[PairingCounts]) -> TournamentFormat:
    """The format the configuration names, else the one the games played suggest."""
    if settings.format is not None:
        return settings.format
    if len(engines) == 2:
        return TournamentFormat.MATCH
    if all(engines[0] in (p.first, p.second) for p in pairings):
        return TournamentFormat.GAUNTLET
    return TournamentFormat.ROUND_ROBIN


def _sprt_settings(settings: StoredSettings,
                   notes: list[str]) -> tuple[SprtSpec | None, int | None]:
    """The SPRT of the stored configuration's ``sprt`` table, if it has a valid one."""
    if settings.sprt_problem is not None:
        notes.append(f"the stored SPRT settings are unusable ({settings.sprt_problem}); "
                     "no SPRT shown")
        return None, None
    table = settings.sprt
    if table is None:
        return None, None
    try:
        spec = table.spec()
    except ValueError as exc:
        notes.append(f"the stored SPRT settings are unusable ({exc}); no SPRT shown")
        return None, None
    return spec, table.maxgames


def _standings(scores: Sequence[EngineScore], pairings: Sequence[PairingResult],
               notes: list[str]) -> tuple[Standing, ...]:
    """Standings, best first, with the figures every view shows (`standing_figures`)."""
    figures, note = standing_figures([s.name for s in scores],
                                     [(p.first, p.second, p.trinomial, p.pentanomial)
                                      for p in pairings])
    if note:
        notes.append(note)
    rows = sorted(scores, key=lambda s: (figures[s.name].elo is None,
                                         -(figures[s.name].elo or 0.0), -s.points, s.name))
    return tuple(
        Standing(rank=i, engine=s.name, games=s.games, points=s.points, wins=s.wins,
                 draws=s.draws, losses=s.losses, elo=figures[s.name].elo,
                 elo_error95=figures[s.name].elo_error95, los=figures[s.name].los,
                 reference=figures[s.name].reference)
        for i, s in enumerate(rows, start=1)
    )


def _crosstable(engines: Sequence[str], pairings: Sequence[PairingResult]) -> Crosstable:
    """The round-robin crosstable in entry order."""
    index = {name: i for i, name in enumerate(engines)}
    cells: list[list[CrossCell | None]] = [[None] * len(engines) for _ in engines]
    for p in pairings:
        t = p.trinomial
        i, j = index[p.first], index[p.second]
        cells[i][j] = CrossCell(t.wins + t.draws / 2, t.games)
        cells[j][i] = CrossCell(t.losses + t.draws / 2, t.games)
    return Crosstable(tuple(engines), tuple(tuple(row) for row in cells))


def _terminations(endings: Mapping[GameTermination | None, list[int]],
                  ) -> tuple[TerminationTally, ...]:
    """Terminations with their results, most frequent first."""
    tallies = [TerminationTally(kind, sum(t), t[0], t[1], t[2], t[3])
               for kind, t in endings.items()]
    tallies.sort(key=lambda t: (-t.games, t.label))
    return tuple(tallies)


def _lengths(counts: Mapping[int, int]) -> tuple[tuple[LengthBin, ...], float | None]:
    """Game lengths in at most about 30 bins of a round width, and the mean length."""
    if not counts:
        return (), None
    low, high = min(counts), max(counts)
    width = next((w for w in _NICE_WIDTHS if (high - low) // w < 30), _NICE_WIDTHS[-1])
    start = low - low % width
    bins = [0] * ((high - start) // width + 1)
    for plies, games in counts.items():
        bins[(plies - start) // width] += games
    total = sum(counts.values())
    mean = sum(plies * games for plies, games in counts.items()) / total
    return tuple(LengthBin(start + k * width, start + (k + 1) * width - 1, n)
                 for k, n in enumerate(bins)), mean


# -- one pass over the games played ------------------------------------------------------------

_RESULT_SLOT = {Result.WHITE_WINS: 0, Result.BLACK_WINS: 1, Result.DRAW: 2}
"""A result's column in a `TerminationTally` (anything else: the last one)."""

_Snapshot = tuple[int, dict[tuple[str, str], PairingCounts]]
"""Games counted so far, and every pairing's counts at that point."""


class _Replay:
    """The pass over the games played, in the order they ended: the tally of results, the
    terminations, faults and lengths, and a snapshot of the pairings every `step` games."""

    def __init__(self, engines: Sequence[str], step: int) -> None:
        self.tally = Tally(engines)
        self.rank = {name: i for i, name in enumerate(engines)}
        self.step = step
        self.endings: dict[GameTermination | None, list[int]] = {}  # [1-0, 0-1, draw, other]
        self.faults: dict[str, dict[str, int]] = {}
        self.on_workers = WorkerTally()
        self.unattributed = 0
        self.lengths: dict[int, int] = {}
        self.snapshots: list[_Snapshot] = []

    def add(self, game: PlayedGame) -> None:
        """Count one played game."""
        ending = self.endings.setdefault(game.termination, [0, 0, 0, 0])
        ending[3 if game.result is None else _RESULT_SLOT.get(game.result, 3)] += 1
        if game.plies is not None:
            self.lengths[game.plies] = self.lengths.get(game.plies, 0) + 1
        if game.worker is not None:
            self.on_workers.add(game.worker, game.white, game.black, game.at_fault,
                                game.termination, game.result, game.pair_index, self.rank)
        if game.termination is not None and game.termination in FAULT_TERMINATIONS:
            if game.at_fault is None:
                self.unattributed += 1
            else:
                field = FAULT_TERMINATIONS[game.termination]
                own = self.faults.setdefault(game.at_fault, {})
                own[field] = own.get(field, 0) + 1
        if game.result is None \
                or not self.tally.add(game.white, game.black, game.result, game.pair_index):
            return
        if self.tally.games % self.step == 0:
            self.snapshot()

    def snapshot(self, final: bool = False) -> None:
        """Remember every pairing's counts at this point (once per number of games)."""
        played = self.tally.games
        if final and (not played or (self.snapshots and self.snapshots[-1][0] == played)):
            return
        self.snapshots.append((played, {(p.first, p.second): p for p in self.tally.pairings()}))

    def pairings(self) -> list[PairingCounts]:
        """Every pairing that played, in entry order."""
        return sorted(self.tally.pairings(),
                      key=lambda p: (self.rank[p.first], self.rank[p.second]))


def _series(replay: _Replay, fmt: TournamentFormat, engines: Sequence[str], spec: SprtSpec | None,
            ) -> tuple[tuple[EloSeries, ...], str, tuple[LlrPoint, ...]]:
    """Elo (and the SPRT's LLR) at each snapshot of the replay."""
    reference = engines[0]
    elo_points: dict[str, list[SeriesPoint]] = {}
    llr_points: list[LlrPoint] = []
    for played, snapshot in replay.snapshots:
        if fmt is TournamentFormat.ROUND_ROBIN:
            figures, _ = standing_figures(engines, [(p.first, p.second, p.trinomial,
                                                     p.pentanomial) for p in snapshot.values()])
            for name in engines[1:]:  # the reference is 0 by definition: no line for it
                own = figures[name]
                if own.elo is not None and own.elo_error95 is not None:
                    elo_points.setdefault(name, []).append(
                        SeriesPoint(played, own.elo, own.elo_error95))
        else:
            for p in snapshot.values():
                figures_ = _figures(p.trinomial, p.pentanomial)
                if p.first == reference and figures_ is not None and figures_.estimated:
                    elo_points.setdefault(f"{p.first} vs {p.second}", []).append(
                        SeriesPoint(played, figures_.elo, figures_.elo_error95))
        head = snapshot.get((engines[0], engines[1])) if len(engines) > 1 else None
        if spec is not None and head is not None:
            counts = headline_counts(head.trinomial, head.pentanomial)
            llr_points.append(LlrPoint(played, sprt(counts, spec).llr))
    if fmt is TournamentFormat.ROUND_ROBIN:
        kind = f"maximum-likelihood Elo of each engine relative to {reference}"
        order = list(engines[1:])
    else:
        kind = f"Elo of {reference} against each opponent"
        order = [f"{reference} vs {name}" for name in engines[1:]]
    series = tuple(EloSeries(label, tuple(elo_points[label])) for label in order
                   if label in elo_points)
    return series, kind, tuple(llr_points)


def search_figures(totals: Iterable[SearchTotals], engines: Sequence[str]
            ) -> tuple[tuple[EngineSearch, ...], tuple[EngineSearch, ...]]:
    """Each engine's `EngineSearch` from the store's sums over its moves, in the engines'
    order; then the same per worker and engine when the games ran on more than one worker."""
    rows = list(totals)
    by_name: dict[str, list[SearchTotals]] = {}
    for t in rows:
        by_name.setdefault(t.engine, []).append(t)
    overall = tuple(_engine_search(name, by_name[name]) for name in engines
                    if sum(t.moves for t in by_name.get(name, ())) > 0)
    if len({t.worker for t in rows}) < 2:
        return overall, ()
    rank = {name: i for i, name in enumerate(engines)}
    per_worker = sorted((t for t in rows if t.moves and t.engine in rank),
                        key=lambda t: (t.worker or "", rank[t.engine]))
    return overall, tuple(_engine_search(t.engine, [t], worker=t.worker or "(runner)")
                          for t in per_worker)


def _engine_search(name: str, parts: Sequence[SearchTotals], *,
                   worker: str | None = None) -> EngineSearch:
    """One `EngineSearch` from the sums of one engine on one or more workers."""
    moves = sum(t.moves for t in parts)
    depths, sels = sum(t.depth_moves for t in parts), sum(t.seldepth_moves for t in parts)
    clocks = sum(t.clock_moves for t in parts)
    node_time = sum(t.node_time_ms for t in parts)
    least = [t.least_left_ms for t in parts if t.least_left_ms is not None]
    pondered = sum(t.pondered for t in parts)
    return EngineSearch(
        engine=name, moves=moves,
        mean_depth=sum(t.depth_sum for t in parts) / depths if depths else None,
        mean_time_ms=sum(t.time_ms for t in parts) / moves,
        nps=sum(t.nodes for t in parts) * 1000 / node_time if node_time else None,
        mean_seldepth=sum(t.seldepth_sum for t in parts) / sels if sels else None,
        mean_time_share=sum(t.share_sum for t in parts) / clocks if clocks else None,
        least_left_ms=min(least) if least else None,
        near_flag=sum(t.near_flag for t in parts), worker=worker, pondered=pondered,
        ponder_hit_rate=sum(t.ponder_hits for t in parts) / pondered if pondered else None)
