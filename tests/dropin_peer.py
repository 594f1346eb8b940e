"""A test-only peer for the drop-in driver: a tiny command line and a `PeerOutput` that prints
one line per event and appends each finished game to a file, flushed and synced at once.

``python tests/dropin_peer.py KEY=VALUE...`` plays it through `runner.dropin.main.main` as the
console scripts do, the peer's module found under ``runner.dropin.testpeer``. Keys: ``db``,
``games`` (the file of finished games), ``rounds``, ``engine`` (given twice: a command line,
words split on spaces), ``tc``, ``concurrency``, ``maxmoves``. With ``DROPIN_PEER_SELFSTOP=1`` in
the environment the process sends itself SIGINT as the output is made; with
``DROPIN_PEER_STOP_AFTER=N`` the output ends the run after N finished games (``stop_run``).
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from runner.config.parse import parse_config
from runner.dropin.contract import DropinRun, Immediate, PeerUsageError, run_name
from runner.tournament.events import GameFinished, GameStarted, Notice, RunOutcome


class LineOutput:
    """Prints ``Started``/``Finished``/``Resumed``/``Ended`` lines; one line per game in `games`."""

    def __init__(self, stream: TextIO, games: Path) -> None:
        self.stream = stream
        self.games = games
        self.resumed_games: list[GameFinished] = []
        self.finished: list[GameFinished] = []
        self.stop_after = int(os.environ.get("DROPIN_PEER_STOP_AFTER", "0"))
        """End the run after this many finished games, as a peer does after a crash (0: never)."""
        self.stop_run = False

    def _say(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()

    def resumed(self, games: Sequence[GameFinished]) -> None:
        """Count the stored games and say how many."""
        self.resumed_games = list(games)
        with open(self.games.with_suffix(".resumed"), "w", encoding="utf-8") as file:
            for game in games:
                file.write(_game_line(game))
        self._say(f"Resumed {len(games)} games: "
                  + " ".join(str(g.job.index + 1) for g in games))

    def game_started(self, event: GameStarted) -> None:
        """One line per started game."""
        self._say(f"Started game {event.job.index + 1} ({event.job.white} vs {event.job.black})")

    def game_finished(self, event: GameFinished) -> None:
        """One line per finished game, and the game's moves appended to the games file."""
        self.finished.append(event)
        if not event.replay:
            with open(self.games, "a", encoding="utf-8") as file:
                file.write(_game_line(event))
                file.flush()
                os.fsync(file.fileno())
        self._say(f"Finished game {event.job.index + 1} ({event.job.white} vs "
                  f"{event.job.black}): {event.result} {{{event.reason}}}")
        if self.stop_after and len(self.finished) >= self.stop_after:
            self.stop_run = True

    def notice(self, event: Notice) -> None:
        """Notices go to stderr (a peer would print its own warnings)."""
        sys.stderr.write(f"notice: {event.text}\n")

    def run_ended(self, outcome: RunOutcome, *, interrupted: bool) -> None:
        """The final line."""
        self._say(f"Ended interrupted={interrupted} done={outcome.done} of "
                  f"{outcome.total_games} status={outcome.status.value}")

    def exit_code(self, outcome: RunOutcome) -> int:
        """The runner's own rule (130 after SIGINT)."""
        return outcome.exit_status


def _game_line(game: GameFinished) -> str:
    """A game as one line: its number, result and moves (from its record)."""
    assert game.record is not None
    return f"{game.job.index + 1} {game.result} {' '.join(m.uci for m in game.record.moves)}\n"


def parse(argv: list[str]) -> DropinRun | Immediate:
    """The test peer's command line: ``KEY=VALUE`` words (see the module's docstring)."""
    if argv == ["-version"]:
        return Immediate("testpeer 1.0")
    values: dict[str, list[str]] = {}
    for word in argv:
        key, sep, value = word.partition("=")
        if not sep:
            raise PeerUsageError(f"Unknown option {word}", 2)
        values.setdefault(key, []).append(value)
    engines = values.get("engine", [])
    if len(engines) != 2:
        raise PeerUsageError("two engine= words are needed")
    table = {
        "name": run_name("testpeer", argv, "e1 vs e2"), "format": "match",
        "tc": values.get("tc", ["inf depth=1"])[0],
        "rounds": int(values.get("rounds", ["2"])[0]), "games": 2,
        "concurrency": int(values.get("concurrency", ["1"])[0]),
        "adjudication": {"maxmoves": int(values.get("maxmoves", ["40"])[0])},
        "engines": [{"name": f"e{n}", "command": command.split(), "protocol": "uci"}
                    for n, command in enumerate(engines, start=1)],
    }
    config = parse_config(table, source="<testpeer>")
    games = Path(values.get("games", ["games.txt"])[0])
    selfstop = os.environ.get("DROPIN_PEER_SELFSTOP") == "1"

    def make_output(stream: TextIO) -> LineOutput:
        if selfstop:  # a Ctrl-C as the run is about to start (its tournament just taken)
            os.kill(os.getpid(), signal.SIGINT)
        return LineOutput(stream, games)

    return DropinRun("testpeer", config, make_output,
                     db_url=values.get("db", [None])[0])


if __name__ == "__main__":
    sys.modules["runner.dropin.testpeer"] = sys.modules[__name__]
    from runner.dropin.main import main

    sys.exit(main("testpeer", sys.argv[1:]))
