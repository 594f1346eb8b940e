"""The contract between the drop-in driver and each peer's command line and output.

A peer's package provides ``parse(argv: list[str]) -> DropinRun | Immediate`` (raising
`PeerUsageError` for a command line the peer refuses); the `DropinRun` it returns says what
to play (a `TournamentConfig`) and builds the `PeerOutput` that prints the peer's lines and
writes its PGN as the driver reports the run's events.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TextIO

if TYPE_CHECKING:  # annotations only: a drop-in's --help or --version loads no run code
    from runner.config.model import TournamentConfig
    from runner.config.parse import Bounds
    from runner.config.programs import ProgramLookup
    from runner.tournament.events import GameFinished, GameStarted, Notice, RunOutcome
    from runner.tournament.styles import OrderImplementation

__all__ = ["NAME_LIMIT", "STOP_RUN", "DropinRun", "Immediate", "PeerOutput", "PeerUsageError",
           "checked_config", "run_name"]

STOP_RUN = "stop_run"
"""The optional attribute of a `PeerOutput` that, once true, ends the run (see there)."""

NAME_LIMIT = 200
"""The longest tournament name the configuration takes (a whole argv is often longer)."""


@dataclass(frozen=True)
class Immediate:
    """An answer without a run (help, version, engine list): text for stdout, exit status."""

    text: str
    exit_code: int = 0


class PeerUsageError(Exception):
    """A command line the peer refuses: `line` is printed to `stream`, the exit status is the peer's."""

    def __init__(self, line: str, exit_code: int = 1, *, stream: str = "stderr") -> None:
        super().__init__(line)
        self.line = line
        """The one line the peer prints for it."""
        self.exit_code = exit_code
        """The peer's exit status for it."""
        self.stream = stream
        """``stderr`` or ``stdout``: where the peer prints it."""


class PeerOutput(Protocol):
    """What one peer prints and writes (lines, PGN, EPD) as the run goes.

    An output that ends the run the way its peer does (fastchess and cutechess-cli stop at an
    engine's crash without -recover) sets an attribute ``stop_run = True`` while handling an
    event: the driver then starts no new game and aborts the running ones (`STOP_RUN`).
    """

    def resumed(self, games: Sequence[GameFinished]) -> None:
        """The games an earlier run of the same command line stored, in schedule order."""

    def game_started(self, event: GameStarted) -> None:
        """A game began."""

    def game_finished(self, event: GameFinished) -> None:
        """A game ended (``event.record`` is its whole record; ``event.replay``: played again)."""

    def notice(self, event: Notice) -> None:
        """Something the runner wants the user to read (a warning, a restart...)."""

    def run_ended(self, outcome: RunOutcome, *, interrupted: bool) -> None:
        """The run is over (`interrupted`: by a stop signal): print the final lines."""

    def exit_code(self, outcome: RunOutcome) -> int:
        """The process's exit status the peer would give for this end."""


@dataclass(frozen=True)
class DropinRun:
    """What a peer's command line asks to play and how to report it."""

    peer: str
    """``fastchess`` or ``cutechess``."""
    config: TournamentConfig
    """What is played: ``pgnout`` None (the output writes the peer's PGN itself); its name is
    derived from the argv, so that the same command line continues its interrupted run."""
    make_output: Callable[[TextIO], PeerOutput]
    """Builds the run's output on the stream given (the driver passes sys.stdout)."""
    db_url: str | None = None
    """The results database (None: ``RUNNER_DB``, else ./runner.db)."""
    style: OrderImplementation | None = None
    """How the configuration's order style plays: the peer's own implementation, handed to
    the run (runner.tournament.styles)."""


def run_name(peer: str, words: Sequence[str], label: str = "") -> str:
    """A tournament name for a peer's command line: the same `words` give the same name (so a
    rerun continues), `label` (engine names, say) keeps it readable in ``runner list``; a hash
    of the words keeps it short (at most `NAME_LIMIT` characters)."""
    import hashlib

    digest = hashlib.sha256("\0".join(words).encode("utf-8", "surrogateescape")).hexdigest()
    tail = f" [{digest[:12]}]"
    head = f"{peer} {label}".strip() if label else peer
    return head[:NAME_LIMIT - len(tail)] + tail


def checked_config(table: Mapping[str, Any], *, program: str, bounds: Bounds | None = None,
                   stream: str = "stderr", programs: ProgramLookup | None = None,
                   **unchecked: Any) -> TournamentConfig:
    """The one route from a drop-in's command line into a tournament: its configuration
    table through the checks every tournament file passes (runner.config.parse, held to the
    peer's `bounds`), then the fields a table has no key for (`unchecked`: the peer's
    schedule and order, which the peer's own reader has checked). The first problem found is
    refused as `program`'s line on `stream`, exit status 1. `programs` is when an engine's
    program must be there (default: now, as for a tournament file)."""
    import dataclasses

    from runner.config.check import ConfigError
    from runner.config.parse import RUNNER_BOUNDS, parse_config
    from runner.config.programs import ProgramLookup as Lookup

    try:
        config = parse_config(table, source="command line",
                              bounds=RUNNER_BOUNDS if bounds is None else bounds,
                              programs=Lookup.AT_LOAD if programs is None else programs)
    except ConfigError as exc:
        first = exc.problems[0] if exc.problems else exc
        raise PeerUsageError(f"{program}: {first}", 1, stream=stream) from None
    return dataclasses.replace(config, **unchecked) if unchecked else config
