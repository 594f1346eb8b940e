"""From the configuration to what runs: engine configs, adjudication, SPRT, game jobs, scheduler.

Pure translations (no I/O): the tournament calls them to turn its `TournamentConfig` and a
schedule entry with its opening into the plain `GameJob` a scheduler plays.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from runner.books.openings import Opening
from runner.config.model import (
    AdjudicationConfig,
    EngineSpec,
    RestartPolicy,
    TablebaseResults,
    TournamentConfig,
)
from runner.game.adjudication import AdjudicationRules
from runner.game.job import GameJob
from runner.game.record import GameSpec
from runner.protocol.engine import EngineConfig
from runner.protocol.freeze import FreezeMonitor
from runner.stats import SprtSpec
from runner.tournament.pairing import ScheduledGame
from runner.tournament.scheduler import LocalScheduler, Scheduler

__all__ = [
    "adjudication_rules",
    "engine_config",
    "engine_configs",
    "game_job",
    "game_spec",
    "cluster_scheduler",
    "local_scheduler",
    "make_scheduler",
    "sprt_spec",
]


def engine_config(entry: EngineSpec) -> EngineConfig:
    """The protocol layer's configuration for a configured engine."""
    uci = entry.protocol.value == "uci"
    options: dict[str, str] = {}
    for name, value in entry.options:
        if isinstance(value, bool):
            options[name] = ("true" if value else "false") if uci else ("1" if value else "0")
        else:
            options[name] = str(value)
    return EngineConfig(
        name=entry.name, argv=entry.command, working_dir=entry.dir,
        env=dict(entry.env) or None, protocol=entry.protocol.value, options=options,
        init_strings=entry.init_strings, castling960=entry.castling960.value,
        ponder=entry.ponder, options_submitted=entry.options_submitted,
    )


def adjudication_rules(config: AdjudicationConfig) -> AdjudicationRules:
    """The game loop's adjudication rules from the configuration's tables."""
    values: dict[str, Any] = {"max_moves": config.maxmoves}
    if config.draw is not None:
        values.update(draw_move_number=config.draw.movenumber,
                      draw_move_count=config.draw.movecount, draw_score=config.draw.score)
    if config.resign is not None:
        values.update(resign_move_count=config.resign.movecount,
                      resign_score=config.resign.score,
                      resign_two_sided=config.resign.twosided)
    if config.tablebases:
        values.update(tablebases=tuple(str(p) for p in config.tablebases),
                      tb_pieces=config.tbpieces, tb_ignore_50=config.tbignore50,
                      tb_wins=config.tbadjudicate is not TablebaseResults.DRAW,
                      tb_draws=config.tbadjudicate is not TablebaseResults.WIN_LOSS)
    return AdjudicationRules(**values)


def sprt_spec(config: TournamentConfig) -> SprtSpec | None:
    """The SPRT a configuration asks for, if any."""
    return None if config.sprt is None else config.sprt.spec()


def engine_configs(config: TournamentConfig) -> dict[str, EngineConfig]:
    """Every engine's protocol configuration, by name."""
    return {entry.name: engine_config(entry) for entry in config.engines}


def game_spec(config: TournamentConfig, game: ScheduledGame, opening: Opening | None,
              per_round: int) -> GameSpec:
    """What to play in scheduled `game`: clocks, start, variant, adjudication and PGN tags."""
    return GameSpec(
        white_tc=config.time_control(game.white), black_tc=config.time_control(game.black),
        start_fen=None if opening is None else opening.fen,
        opening_moves=() if opening is None else opening.moves,
        variant=config.variant, adjudication=adjudication_rules(config.adjudication),
        tags={"Event": config.name, "Site": "cecp-runner",
              "Round": f"{game.round}.{game.index % per_round + 1}"},
    )


def game_job(config: TournamentConfig, game: ScheduledGame, opening: Opening | None,
             per_round: int, engines: Mapping[str, EngineConfig]) -> GameJob:
    """The worker's job for scheduled `game`, starting from `opening`."""
    return GameJob(index=game.index, white=engines[game.white], black=engines[game.black],
                   spec=game_spec(config, game, opening, per_round))


def local_scheduler(config: TournamentConfig, concurrency: int,
                    freezes: FreezeMonitor | None = None) -> LocalScheduler:
    """The in-process scheduler a configuration asks for (slots, CPU pinning, restarts);
    `freezes`, the loop's monitor when its owner shares one (else the scheduler's own)."""
    fresh = frozenset(e.name for e in config.engines if e.restart is RestartPolicy.ON)
    return LocalScheduler(concurrency, affinity=config.affinity, fresh_engines=fresh,
                          freezes=freezes)


def cluster_scheduler(config: TournamentConfig, concurrency: int, *, workers: int | None = None,
                      address: str | None = None, from_file: bool = True) -> Scheduler | None:
    """A Dask scheduler when the command line or (with `from_file`) the file's ``[cluster]``
    asks for one, else None (play in this process); `distributed` is imported only then."""
    cluster = config.cluster if from_file else None
    if workers is None and address is None and cluster is not None:
        workers, address = cluster.workers, cluster.address
    if workers is None and address is None:
        return None
    from runner.tournament.cluster import DaskScheduler

    fresh = frozenset(e.name for e in config.engines if e.restart is RestartPolicy.ON)
    return DaskScheduler(concurrency, workers=None if address else workers, address=address,
                         fresh_engines=fresh, tournament=config.name)


def make_scheduler(config: TournamentConfig, concurrency: int | None = None, *,
                   workers: int | None = None, cluster: str | None = None,
                   from_file: bool = True, freezes: FreezeMonitor | None = None) -> Scheduler:
    """The scheduler `runner run` plays `config` with: a Dask one for `workers` (a local
    cluster of that many processes) or `cluster` (a scheduler's address), or the file's
    ``[cluster]`` (unless `from_file` is False: a service decides where games run, not a
    submitted file); else the in-process one. `concurrency` (None: the file's) is the games
    at once. A scheduler plays one tournament run; a local cluster it starts is closed when
    its events end. `freezes` is the loop's freeze monitor for an in-process scheduler, when
    the loop's owner runs several (a service). ValueError when both `workers` and `cluster`
    are given."""
    if workers is not None and cluster is not None:
        raise ValueError("give workers (a local cluster) or cluster (a running scheduler), "
                         "not both")
    slots = max(1, concurrency or config.concurrency)
    return (cluster_scheduler(config, slots, workers=workers, address=cluster,
                              from_file=from_file)
            or local_scheduler(config, slots, freezes))
