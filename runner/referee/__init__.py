"""A game referee again, after the fact: given what was asked for (a `GameJob`) and a record
someone else sent back (a `GameRecord`), whether it is that game, played by the rules, ended
as its final position, clocks and adjudication rules allow (`verify_game`). Pure: no I/O,
no clock of its own; the service runs it on every game a remote worker uploads."""

from runner.referee.verify import Verdict, verify_game

__all__ = ["Verdict", "verify_game"]
