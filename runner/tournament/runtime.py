"""From the configuration to what runs: engine configs, adjudication, SPRT, game jobs, the
in-process scheduler (a Dask one is `runner.cluster.make_scheduler`'s).

Pure translations (no I/O): the tournament calls them to turn its `TournamentConfig` and a
schedule entry with its opening into the plain `GameJob` a scheduler plays.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from runner.config.model import (
    AdjudicationConfig,
    EngineSpec,
    OptionValue,
    Protocol,
    RestartPolicy,
    TablebaseResults,
    TournamentConfig,
)
from runner.game.adjudication import AdjudicationRules
from runner.game.job import GameJob
from runner.game.record import GameSpec
from runner.game.slot import SlotPool
from runner.protocol.engine import Engine, EngineConfig
from runner.protocol.factory import make_engine
from runner.protocol.freeze import FreezeMonitor
from runner.protocol.options import spin_number
from runner.stats import SprtSpec
from runner.tournament.pairing import ScheduledGame
from runner.tournament.scheduler import LocalScheduler
from runner.tournament.styles import OrderImplementation, given

if TYPE_CHECKING:  # a run from the start position imports no book (issue 38)
    from runner.books.openings import Opening

__all__ = [
    "adjudication_rules",
    "engine_config",
    "engine_configs",
    "game_job",
    "game_spec",
    "local_scheduler",
    "scheduled_spec",
    "sprt_spec",
]


def engine_config(entry: EngineSpec) -> EngineConfig:
    """The protocol layer's configuration for a configured engine: its options' values go
    as the configuration typed them (a CECP engine's ``memory`` and ``cores`` as commands
    of their own), for the protocol client to read as declared and spell."""
    uci = entry.protocol is Protocol.UCI
    options: dict[str, OptionValue] = {}
    resources: dict[str, int] = {}
    for name, value in entry.options:
        if not uci and name in _CECP_RESOURCES and (amount := _amount(value)) is not None:
            resources[_CECP_RESOURCES[name]] = amount
            continue
        options[name] = value  # typed as written: the client reads and spells it
    scaled: dict[str, Any] = {}
    if entry.timeout_scale != 1.0:
        defaults = EngineConfig(name=entry.name, argv=entry.command)
        scaled = {key: getattr(defaults, key) * entry.timeout_scale
                  for key in ("start_timeout", "feature_done_timeout", "ping_timeout",
                              "quit_timeout")}
    return EngineConfig(
        name=entry.name, argv=entry.command, working_dir=entry.dir,
        env=dict(entry.env) or None, protocol=entry.protocol, options=options,
        init_strings=entry.init_strings, castling960=entry.castling960,
        cecp_dialogue=entry.cecp_dialogue, echo_lines=entry.echo_lines,
        ponder=entry.ponder, options_submitted=entry.options_submitted,
        stderr_log=entry.stderr, **resources, **scaled,
    )


_CECP_RESOURCES = {"memory": "memory_mb", "cores": "cores"}
"""Options a CECP engine is sent as commands of their own (``memory N``, ``cores N``, when
it declares ``feature memory=1`` / ``smp=1``), not as ``option``: cutechess-cli's names for
them (``option.memory=64``)."""


def _amount(value: object) -> int | None:
    """An option value read as a non-negative whole number (an int, or ASCII digits as a
    submitted spin value is read: `spin_number`); None for anything else."""
    if isinstance(value, bool):
        return None
    number = value if isinstance(value, int) else (
        spin_number(value) if isinstance(value, str) else None)
    return number if number is not None and number >= 0 else None


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


def _rules(config: TournamentConfig, style: OrderImplementation | None) -> AdjudicationRules:
    """The game's adjudication rules, counted as the tournament's order style counts."""
    rules = adjudication_rules(config.adjudication)
    return rules if style is None else style.adjudication(rules)


def sprt_spec(config: TournamentConfig) -> SprtSpec | None:
    """The SPRT a configuration asks for, if any."""
    return None if config.sprt is None else config.sprt.spec()


def engine_configs(config: TournamentConfig) -> dict[str, EngineConfig]:
    """Every engine's protocol configuration, by name."""
    return {entry.name: engine_config(entry) for entry in config.engines}


def game_spec(config: TournamentConfig, white: str, black: str, *,
              start_fen: str | None = None, opening_moves: tuple[str, ...] = (),
              tags: Mapping[str, str] | None = None,
              style: OrderImplementation | None = None) -> GameSpec:
    """The one builder of a game's description: `white` against `black` (engine names) under
    `config` (clocks, variant, adjudication, the order style's habits), from `start_fen`
    after `opening_moves`, with the PGN `tags` given; `style`, the implementation of its order
    style the run was handed."""
    style = given(config, style)
    return GameSpec(
        white_tc=config.time_control(white), black_tc=config.time_control(black),
        start_fen=start_fen, opening_moves=opening_moves,
        variant=config.variant, adjudication=_rules(config, style), tags=dict(tags or {}),
        white_pov=(config.engine(white).white_pov, config.engine(black).white_pov),
        move_ceiling=config.move_ceiling,
        clock_head_start=style is not None and style.clock_head_start,
        result_words=None if style is None else style.result_words,
    )


def scheduled_spec(config: TournamentConfig, game: ScheduledGame, opening: Opening | None,
                   per_round: int, style: OrderImplementation | None = None) -> GameSpec:
    """What to play in scheduled `game`: `game_spec` from `opening`, with the tournament's
    PGN tags (event, site, round)."""
    return game_spec(
        config, game.white, game.black,
        start_fen=None if opening is None else opening.fen,
        opening_moves=() if opening is None else opening.moves,
        tags={"Event": config.name, "Site": "cecp-runner",
              "Round": f"{game.round}.{game.index % per_round + 1}"}, style=style)


def game_job(config: TournamentConfig, game: ScheduledGame, opening: Opening | None,
             per_round: int, engines: Mapping[str, EngineConfig],
             style: OrderImplementation | None = None) -> GameJob:
    """The worker's job for scheduled `game`, starting from `opening`."""
    return GameJob(index=game.index, white=engines[game.white], black=engines[game.black],
                   spec=scheduled_spec(config, game, opening, per_round, style))


def local_scheduler(config: TournamentConfig, concurrency: int,
                    freezes: FreezeMonitor | None = None, *, pool: SlotPool | None = None,
                    engines: Callable[[EngineConfig], Engine] = make_engine,
                    ) -> LocalScheduler:
    """The in-process scheduler a configuration asks for (slots, CPU pinning, restarts);
    `freezes`, the loop's monitor when its owner shares one (else the scheduler's own);
    `pool`, slots kept between runs; `engines`, how engines are started."""
    fresh = frozenset(e.name for e in config.engines if e.restart is RestartPolicy.ON)
    return LocalScheduler(concurrency, affinity=config.affinity, fresh_engines=fresh,
                          freezes=freezes, wait=config.wait_ms / 1000.0,
                          start_delay=config.start_delay_ms / 1000, pool=pool,
                          engine_factory=engines)
