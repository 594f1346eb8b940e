"""An accepted cutechess-cli command line as the runner's tournament: its table for the
checked route (runner.config.parse), its name, seed and output settings.
"""

from __future__ import annotations

import dataclasses
import hashlib
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.config.vocabulary import (
    AdjudicationWords,
    EngineWords,
    adjudication_table,
    numbered,
)
from runner.config.vocabulary import engine_table as vocabulary_engine_table
from runner.dropin.contract import run_name
from runner.dropin.cutechess.args import (
    BY_NAME,
    PLAYED_VARIANTS,
    Arguments,
    refusal,
)
from runner.dropin.cutechess.engines import EngineData
from runner.dropin.cutechess.settings import CutechessSettings
from runner.stats import EloModel

if TYPE_CHECKING:
    from runner.config.model import TournamentConfig

__all__ = ["check_supported", "cutechess_tc_text", "engine_table", "game_words", "run_key",
           "seed_for", "settings_for", "tc_words", "tournament_table", "with_engine_extras"]


# -- into a runner tournament ----------------------------------------------------------------


_OUTPUT_ONLY = frozenset({"-concurrency", "-pgnout", "-epdout", "-ratinginterval",
                          "-outcomeinterval", "-resultformat", "-debug", "-wait", "-bookmode"})
"""Options that change what is printed or written, or how fast, not which games are played:
left out of the name a command line gives its tournament, so that rerunning it with another
of them still continues it."""


def game_words(argv: tuple[str, ...]) -> list[str]:
    """The words that decide the games: the options of `_OUTPUT_ONLY` left out."""
    kept: list[str] = []
    skipping = False
    for word in argv:
        if word in BY_NAME:
            skipping = word in _OUTPUT_ONLY
        if not skipping:
            kept.append(word)
    return kept


def run_key(argv: tuple[str, ...]) -> str:
    """A short digest of `game_words`: the same games, the same key."""
    return hashlib.sha256("\0".join(game_words(argv)).encode("utf-8", "surrogateescape")
                          ).hexdigest()[:12]


def seed_for(args: Arguments) -> int:
    """The random seed: ``-srand``'s; without it cutechess-cli takes the time of day, here a
    number drawn from the command line (the same words deal the same openings again, so that
    a rerun continues the run it interrupted)."""
    if args.srand is not None:
        return args.srand
    return int(run_key(args.argv)[:8], 16)


def tc_words(engine: EngineData) -> str:
    """The engine's limits as the runner's time control words."""
    words: list[str] = []
    if engine.time_per_move:
        words.append(f"st={_seconds(engine.time_per_move)}")
    elif engine.infinite:
        words.append("tc=inf")
    else:
        clock = _seconds(engine.time_per_tc)
        if engine.moves_per_tc:
            clock = f"{engine.moves_per_tc}/{clock}"
        if engine.increment:
            clock += f"+{_seconds(engine.increment)}"
        words.append(f"tc={clock}")
    if engine.plies:
        words.append(f"depth={engine.plies}")
    if engine.nodes:
        words.append(f"nodes={engine.nodes}")
    if engine.margin:
        words.append(f"timemargin={engine.margin}")
    return " ".join(words)


def _seconds(ms: int) -> str:
    text = f"{ms / 1000:.3f}".rstrip("0").rstrip(".")
    return text or "0"


def cutechess_tc_text(engine: EngineData) -> str:
    """The time control as cutechess-cli writes it in its tables (TimeControl::toString)."""
    if engine.infinite:
        return "inf"
    if engine.time_per_move:
        return f"{_number(engine.time_per_move / 1000)}/move"
    text = "hg" if engine.hourglass else ""
    if engine.moves_per_tc > 0:
        text += f"{engine.moves_per_tc}/"
    text += _number(engine.time_per_tc / 1000)
    if engine.increment > 0:
        text += f"+{_number(engine.increment / 1000)}"
    return text


def _number(value: float) -> str:
    """A double as QString::number writes it (up to 6 significant digits)."""
    return f"{value:.6g}"


def check_supported(args: Arguments) -> None:
    """The runner's own refusals, for a command line cutechess-cli accepts."""
    if args.tournament == "knockout":
        raise refusal("-tournament knockout is not supported: its pairings depend on the "
                       "results, and the runner plays a fixed schedule (round-robin, gauntlet "
                       "and pyramid are)")
    if args.openings is not None and args.openings_empty and args.openings["order"] == "random":
        raise refusal(f"-openings: {args.openings['file']} holds no PGN game (format=pgn is "
                       "the default; cutechess-cli crashes on it in random order): add "
                       "format=epd for an EPD file")
    if args.draw is not None and args.draw[0] > 0 and (args.draw[1] < 1 or args.draw[2] < 0):
        raise refusal("-draw: movecount below 1 or a negative score is not supported (the "
                       "rule would not depend on the scores)")
    if args.resign is not None and args.resign[0] > 0 and args.resign[1] < 0:
        raise refusal("-resign: a negative score is not supported")
    if args.variant not in PLAYED_VARIANTS:
        raise refusal(f"-variant {args.variant} is not supported: the runner plays "
                       f"{' and '.join(PLAYED_VARIANTS)}")
    for engine in args.engines:
        label = engine.name or engine.command
        if engine.book:
            raise refusal(f"engine {label}: book={engine.book} is not supported (the runner "
                           "has no per-engine Polyglot book); use -openings")
        if not engine.validate_claims:
            raise refusal(f"engine {label}: trust is not supported: the runner always checks "
                           "an engine's result claims")
        if engine.hourglass:
            raise refusal(f"engine {label}: tc={engine.tc_text} (hourglass) is not supported")
        if engine.infinite and not engine.time_per_move and not (engine.plies or engine.nodes):
            raise refusal(f"engine {label}: tc=inf needs depth= or nodes= here (a game "
                           "without any limit never ends)")


def _names(args: Arguments) -> list[str]:
    """The engines' names: given, else the program's (a repeated one numbered, as the runner
    keeps results by name); two engines given one name are refused."""
    given = [engine.name for engine in args.engines]
    taken = {name for name in given if name}
    if len(taken) < len([name for name in given if name]):
        twice = next(name for name in given if name and given.count(name) > 1)
        raise refusal(f"two engines are named {twice!r}: give each its own name= (the runner "
                       "keeps results by engine name)")
    names: list[str] = []
    for engine in args.engines:
        if engine.name:
            names.append(engine.name)
            continue
        names.append(numbered(Path(engine.command.strip()).name or "engine", taken))
    return names


def engine_table(engine: EngineData, name: str) -> dict[str, Any]:
    """One engine as a runner configuration table."""
    command = engine.command.strip()
    if not engine.directory and Path(command).is_file():
        command = str(Path(command).resolve())  # cutechess-cli makes a local program absolute
    init = [line for text in engine.init_strings for line in text.split("\n")]
    if engine.debug and engine.protocol == "uci":
        init.insert(0, "debug on")
    return vocabulary_engine_table(EngineWords(
        name=name, command=(command, *engine.arguments),
        protocol="cecp" if engine.protocol == "xboard" else "uci",
        restart=engine.restart, limits=tc_words(engine), ponder=engine.ponder,
        # Without dir= cutechess-cli runs an engine in the temporary directory.
        directory=engine.directory or tempfile.gettempdir(),
        init_strings=tuple(init), options=tuple(engine.options.items())))


def tournament_table(args: Arguments) -> dict[str, Any]:
    """The runner configuration table of an accepted command line (schedule set apart)."""
    names = _names(args)
    table: dict[str, Any] = {
        "name": run_name("cutechess", game_words(args.argv), args.event or " vs ".join(names)),
        "format": "round-robin",
        "engines": [engine_table(e, n) for e, n in zip(args.engines, names, strict=True)],
        "concurrency": args.concurrency, "variant": args.variant, "recover": args.recover,
    }
    if args.openings is not None and not args.openings_empty:
        found = args.openings
        table["openings"] = {
            "file": found["file"], "format": found["format"], "order": found["order"],
            "seed": seed_for(args), "plies": found["plies"], "start": found["start"],
        }
    # cutechess-cli switches the draw rule off with movenumber 0 (or less), the resign rule
    # with movecount 0 (or less).
    draw = args.draw if args.draw is not None and args.draw[0] > 0 else None
    resign = args.resign if args.resign is not None and args.resign[0] > 0 else None
    adjudication = adjudication_table(AdjudicationWords(
        draw=None if draw is None else dict(zip(("movenumber", "movecount", "score"), draw,
                                                strict=True)),
        resign=None if resign is None else dict(zip(("movecount", "score", "twosided"), resign,
                                                    strict=True)),
        maxmoves=args.maxmoves or None,
        tablebases=None if args.tb is None else tuple(p for p in args.tb.split(":") if p),
        tbpieces=args.tbpieces if args.tb is not None else None,
        tbignore50=args.tbignore50 if args.tb is not None else None))
    if adjudication:
        table["adjudication"] = adjudication
    if args.sprt is not None:
        table["sprt"] = {"elo0": args.sprt.elo0, "elo1": args.sprt.elo1,
                         "alpha": args.sprt.alpha, "beta": args.sprt.beta,
                         "model": EloModel.SCALED_BAYESELO.value}
    return table


def settings_for(args: Arguments, names: list[str], total: int) -> CutechessSettings:
    """What the output needs to print and write as cutechess-cli does."""
    return CutechessSettings(
        players=tuple(names), time_controls=tuple(cutechess_tc_text(e) for e in args.engines),
        tournament=args.tournament, seeds=args.seeds, final_game_count=total,
        variant=args.variant, event=args.event, site=args.site, pgn_out=args.pgnout,
        pgn_mode=args.pgn_mode, pgn_finished_only=args.pgn_finished_only,
        epd_out=args.epdout, rating_interval=args.rating_interval,
        outcome_interval=args.outcome_interval, result_format=args.result_format,
        sprt=args.sprt, debug=args.debug, recover=args.recover,
    )


def with_engine_extras(config: TournamentConfig, args: Arguments) -> TournamentConfig:
    """The configuration with what the table has no key for: stderr files, timeout scales."""
    engines = tuple(
        dataclasses.replace(spec, stderr=Path(data.stderr) if data.stderr else None,
                            timeout_scale=data.timeout_scale, white_pov=data.white_pov)
        for spec, data in zip(config.engines, args.engines, strict=True))
    return dataclasses.replace(config, engines=engines)
