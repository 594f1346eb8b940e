"""The same cutechess-cli words given to ``runner match`` (runner.cli.vocabulary) and to
``runner-cutechess`` (runner.dropin.cutechess) describe the same games: the same engines,
limits, options, adjudication, openings, SPRT bounds and number of games. Where the two front
doors differ on purpose (the engines' working directory, the drop-in's default names, its SPRT
model and play order), the test says so and leaves the field out. One default differs too:
without ``-games`` cutechess-cli plays one game per encounter and round, ``runner match`` a
game pair, so every case here gives ``-games``. Nothing is played."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from runner.cli.vocabulary import read_arguments
from runner.clock import TimeControl
from runner.config.model import BookFormat, OpeningOrder, TournamentConfig
from runner.dropin import cutechess
from runner.dropin.contract import DropinRun
from runner.tournament.pairing import pairing_for

FAIRYMAX = shutil.which("fairymax") or shutil.which("fairymax", path="/usr/games")
BOOK = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "books" / "noob_3moves.epd"
pytestmark = pytest.mark.skipif(FAIRYMAX is None, reason="fairymax is not installed")

ENGINES = ["-engine", "cmd=fairymax", "proto=xboard", "name=one",
           "-engine", "cmd=fairymax", "proto=xboard", "name=two"]

CASES = {
    "clock and rounds": [*ENGINES, "-each", "tc=40/1+0.5", "-games", "2", "-rounds", "3"],
    "per-engine limits": [
        "-engine", "cmd=fairymax", "proto=xboard", "name=one", "st=0.5", "timemargin=50",
        "-engine", "cmd=fairymax", "proto=xboard", "name=two", "tc=inf", "depth=3",
        "option.Hash=16", "-games", "2", "-rounds", "2"],
    "adjudication": [*ENGINES, "-each", "tc=1+0.01", "-draw", "movenumber=30", "movecount=5",
                     "score=5", "-resign", "movecount=3", "score=500", "twosided=true",
                     "-maxmoves", "80", "-recover", "-concurrency", "2", "-games", "2"],
    "sprt": [*ENGINES, "-each", "tc=1+0.01", "-sprt", "elo0=0", "elo1=5", "alpha=0.05",
             "beta=0.1", "-games", "2", "-rounds", "50"],
    "openings": [*ENGINES, "-each", "tc=1+0.01", "-openings", f"file={BOOK}", "format=epd",
                 "order=random", "plies=4", "start=2", "-srand", "7", "-games", "2", "-rounds", "4"],
    "chess960": [*ENGINES, "-each", "tc=1+0.01", "-variant", "fischerandom", "-openings",
                 f"file={BOOK}", "format=epd", "-games", "4"],
}


def _games(config: TournamentConfig) -> dict[str, Any]:
    """What decides the games, as both front doors should give it."""
    engines = [{"name": e.name, "program": e.command[0], "arguments": e.command[1:],
                "protocol": e.protocol, "limits": TimeControl.parse(e.tc or config.tc or ""),
                "options": e.options_dict, "init": e.init_strings}
               for e in config.engines]
    openings = config.openings
    sprt = config.sprt
    return {
        "engines": engines, "variant": config.variant, "concurrency": config.concurrency,
        "recover": config.recover, "adjudication": config.adjudication,
        # The seed matters only to a random order, the plies only to a PGN book (the
        # drop-in fills in cutechess-cli's defaults for both).
        "openings": None if openings is None else (
            openings.file.resolve(), openings.format, openings.order, openings.start,
            openings.seed if openings.order is OpeningOrder.RANDOM else None,
            openings.plies if openings.format is BookFormat.PGN else None),
        # runner-cutechess counts the SPRT as cutechess-cli does (its own model); the bounds
        # and error rates are the words'.
        "sprt": None if sprt is None else (sprt.elo0, sprt.elo1, sprt.alpha, sprt.beta),
        "games": pairing_for(config).total(),
    }


@pytest.mark.parametrize("words", CASES.values(), ids=CASES.keys())
def test_runner_match_and_runner_cutechess_read_the_same_words_alike(words: list[str]) -> None:
    if any(BOOK.name in word for word in words) and not BOOK.is_file():
        pytest.skip(f"no book at {BOOK}")
    through_cli = read_arguments(words, "match").config()
    run = cutechess.parse(words)
    assert isinstance(run, DropinRun)
    assert _games(through_cli) == _games(run.config)
