"""Helpers for whole games between engines over real pipes, and the bundled engine per protocol.

Every game is checked against python-chess replaying its moves (legality, SAN, and that a
rules ending really holds and was not missed earlier), its clocks can be re-added from the
recorded move times, and after every game the process table must hold nothing of the
engines' process groups.  `BundledProtocol` runs the bundled engine (``python -m engine``)
over CECP or UCI with the same ``--fault`` modes, so one scenario serves both protocols.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass

import chess

from runner.clock import TimeControl
from runner.game.play import play_game
from runner.game.record import GameRecord, GameSpec, GameTermination
from runner.protocol.engine import Engine, EngineConfig
from runner.protocol.factory import make_engine
from runner.rules import Board
from runner.types import MoveRecord, Variant
from tests.conftest import REPO

BUNDLED = (sys.executable, "-m", "engine")
# Short stop timeouts: hung and quit-ignoring engines are killed quickly after each game.
_QUICK_STOP = {"quit_timeout": 1.0, "terminate_timeout": 1.0}

RULES_ENDINGS = {
    GameTermination.CHECKMATE, GameTermination.STALEMATE, GameTermination.INSUFFICIENT_MATERIAL,
    GameTermination.THREEFOLD_REPETITION, GameTermination.FIVEFOLD_REPETITION,
    GameTermination.FIFTY_MOVES, GameTermination.SEVENTYFIVE_MOVES,
}


# ------------------------------------------------------------------------------- engines


def bundled(name: str, *args: str, **overrides: object) -> EngineConfig:
    """A configuration running the bundled engine over CECP with `args`."""
    settings = {**_QUICK_STOP, **overrides}
    return EngineConfig(name=name, argv=(*BUNDLED, *args), working_dir=REPO, **settings)


def bundled_uci(name: str, *args: str, **overrides: object) -> EngineConfig:
    """The bundled engine speaking UCI (``python -m engine --uci ...``)."""
    return bundled(name, "--uci", *args, protocol="uci", **overrides)


@dataclass(frozen=True)
class BundledProtocol:
    """The bundled engine over one protocol, and what that protocol says where they differ."""

    name: str
    sync_fault: str
    """The fault that withholds the answer to a synchronisation request (ping, isready)."""
    start_faults: tuple[str, ...]
    """The fault names that withhold the end of the start-up handshake."""
    stalled_move: str
    """The words of a stall waiting for a move."""
    stalled_sync: str
    """The words of a stall waiting for the answer to a synchronisation request."""
    stalled_start: str
    """The words of a stall at start-up when the engine never finishes its handshake."""
    start_limit: str
    """The configuration key bounding that start-up wait."""
    garbage_answers: tuple[str, ...]
    """What the runner writes back to the garbage fault's lines (a CECP feature is answered)."""
    quit_ignored_exit: int
    """The exit code of an engine that ignores ``quit``: the signal that ended it, negated."""

    def engine(self, name: str, *args: str, **overrides: object) -> EngineConfig:
        """A configuration running the bundled engine over this protocol with `args`."""
        maker = bundled_uci if self.name == "uci" else bundled
        return maker(name, *args, **overrides)

    def pair(self, fault: str, faulty_white: bool) -> tuple[EngineConfig, EngineConfig]:
        """White and Black at level 1, the one named by `faulty_white` with ``--fault fault``."""
        args = ("--fault", fault)
        white = self.engine("w", "--level", "1", *(args if faulty_white else ()))
        black = self.engine("b", "--level", "1", *(() if faulty_white else args))
        return white, black

    def handshake_seen(self, engine: Engine) -> bool:
        """Whether the declarations the bundled engine makes at start-up were read."""
        if self.name == "uci":
            return "Hash" in engine.options
        return engine.features.get("ping") == "1" and engine.features.get("setboard") == "1"


CECP = BundledProtocol(
    name="cecp", sync_fault="no-pong", start_faults=("no-done",),
    stalled_move="no move", stalled_sync="no pong", stalled_start="done=1",
    start_limit="feature_done_timeout", garbage_answers=("rejected bogus",),
    # The bundled engine announces sigterm=0: after quit comes SIGKILL.
    quit_ignored_exit=-signal.SIGKILL,
)
UCI = BundledProtocol(
    name="uci", sync_fault="no-readyok", start_faults=("no-uciok", "no-done"),
    stalled_move="no bestmove", stalled_sync="no readyok", stalled_start="no uciok",
    start_limit="start_timeout", garbage_answers=(), quit_ignored_exit=-signal.SIGTERM,
)
PROTOCOLS = (CECP, UCI)


def game_spec(tc: str = "5+0.05", black_tc: str | None = None, **fields: object) -> GameSpec:
    """A spec with the same control for both sides unless `black_tc` is given."""
    white = TimeControl.parse(tc)
    return GameSpec(white, TimeControl.parse(black_tc) if black_tc else white, **fields)


# ------------------------------------------------------------------------------- playing


@dataclass(frozen=True)
class Played:
    """A finished game, the engines' process-group ids and how long stopping them took."""

    record: GameRecord
    pgids: tuple[int, ...]
    quit_seconds: float
    exit_codes: tuple[int | None, ...]


async def play_engines(white: EngineConfig, black: EngineConfig, spec: GameSpec,
                       on_move: Callable[[MoveRecord, Board], None] | None = None) -> Played:
    """Start both engines (each with its configured protocol), play one game, always stop both."""
    engines = (make_engine(white), make_engine(black))
    pgids: list[int] = []
    codes: list[int | None] = []
    try:
        for engine in engines:
            await engine.start()
            assert engine.pid is not None
            pgids.append(engine.pid)  # each engine leads its own session and group
        record = await play_game(*engines, spec, on_move=on_move)
    finally:
        began = time.monotonic()
        for engine in engines:
            codes.append(await engine.quit())
        stopped = time.monotonic() - began
    return Played(record, tuple(pgids), stopped, tuple(codes))


def run_game(white: EngineConfig, black: EngineConfig, spec: GameSpec,
             on_move: Callable[[MoveRecord, Board], None] | None = None) -> Played:
    """Play one game to the end and check that no engine process or descriptor survives it."""
    fds_before = _open_fds()
    children = our_children()
    played = asyncio.run(play_engines(white, black, spec, on_move))
    left = leftover_processes(played.pgids, before=children)
    assert left == [], left
    assert _open_fds() <= fds_before, "file descriptors leaked by the game"
    return played


def _open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def _resource_tracker(pid: str) -> bool:
    """Whether `pid` is Python's multiprocessing resource tracker: started once per process
    by the first Dask LocalCluster of the test run (test_cluster*, the service on Dask), it
    lives until the test process ends, by design; it is no engine."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return b"multiprocessing.resource_tracker" in handle.read()
    except OSError:
        return False


def our_children() -> frozenset[int]:
    """The pids of this process's children now (taken before a game: see `leftover_processes`)."""
    ours = str(os.getpid())
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    stat = handle.read()
            except OSError:
                continue
            if stat[stat.rfind(")") + 2:].split()[1] == ours:
                found.add(int(entry))
    return frozenset(found)


def leftover_processes(pgids: tuple[int, ...], wait: float = 15.0,
                       before: frozenset[int] = frozenset()) -> list[str]:
    """Live processes in the given process groups, or unreaped children of ours.

    A zombie whose parent is not us is dead and about to be reaped by init; it does not
    count; nor does a child of ours in `before` (alive before the game began: a test worker
    runs many tests, and what an earlier one started is not this game's).  Waits up to
    `wait` seconds for stragglers to disappear (generous: under load a killed engine takes
    seconds to be reaped; an engine really left running stays).
    """
    ours = os.getpid()
    deadline = time.monotonic() + wait
    while True:
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    stat = handle.read()
            except OSError:
                continue
            fields = stat[stat.rfind(")") + 2:].split()
            state, ppid, pgid = fields[0], int(fields[1]), int(fields[2])
            if pgid in pgids or (ppid == ours and int(entry) not in before):
                if state == "Z" and ppid != ours:
                    continue
                if ppid == ours and pgid not in pgids and _resource_tracker(entry):
                    continue
                found.append(f"pid {entry} state {state} ppid {ppid} pgid {pgid}: {stat[:80]}")
        if not found or time.monotonic() >= deadline:
            return found
        time.sleep(0.05)


async def group_empty(pgid: int, seconds: float = 3.0) -> bool:
    """Whether no process is left in the group (orphaned zombies wait for init to reap them)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)


def sent_lines(record: GameRecord, white: bool) -> list[str]:
    """What the runner wrote to one engine during the game."""
    return [line.split(" > ", 1)[1] for line in record.transcripts[0 if white else 1]
            if " > " in line]


# ------------------------------------------------------------------------------- checks


def replay(record: GameRecord) -> chess.Board:
    """Replay the record with python-chess; every move legal, every SAN as python-chess writes it.

    Also asserts that no position before the last one had already ended the game by rule
    (mate, stalemate, dead position, threefold, fifty moves).
    """
    chess960 = record.spec.variant is Variant.FISCHERANDOM
    board = chess.Board(record.spec.start_fen or chess.STARTING_FEN, chess960=chess960)
    for number, played in enumerate(record.moves):
        assert not _ended_by_rule(board), f"game should have ended before ply {number}: {board.fen()}"
        move = board.parse_uci(played.uci)
        assert board.san(move) == played.san, (number, played)
        board.push(move)
    assert record.final_fen.split()[:4] == board.fen(en_passant="fen").split()[:4] or \
        record.final_fen.split()[:3] == board.fen().split()[:3]
    return board


def _ended_by_rule(board: chess.Board) -> bool:
    return board.outcome() is not None or board.is_repetition(3) or board.halfmove_clock >= 100


def check_rules_ending(record: GameRecord) -> None:
    """A rules termination must be what python-chess finds in the final position."""
    board = replay(record)
    term = record.termination
    assert term in RULES_ENDINGS, record.reason
    if term is GameTermination.CHECKMATE:
        assert board.is_checkmate()
        assert record.result == ("0-1" if board.turn == chess.WHITE else "1-0")
        return
    assert record.result == "1/2-1/2"
    holds = {
        GameTermination.STALEMATE: board.is_stalemate(),
        GameTermination.INSUFFICIENT_MATERIAL: board.is_insufficient_material(),
        GameTermination.THREEFOLD_REPETITION: board.is_repetition(3),
        GameTermination.FIVEFOLD_REPETITION: board.is_fivefold_repetition(),
        GameTermination.FIFTY_MOVES: board.halfmove_clock >= 100,
        GameTermination.SEVENTYFIVE_MOVES: board.is_seventyfive_moves(),
    }
    assert holds[term], (record.reason, board.fen())


def check_not_over(record: GameRecord) -> chess.Board:
    """For endings other than by rule: the final position had not ended the game."""
    board = replay(record)
    assert not _ended_by_rule(board), (record.reason, board.fen())
    return board


def check_finished(record: GameRecord) -> None:
    """A game ended by rule is checked as such; one cut at the maximum length was not over."""
    if record.termination in RULES_ENDINGS:
        check_rules_ending(record)
    else:
        assert record.termination is GameTermination.MAX_MOVES, record.reason
        check_not_over(record)


def check_clocks(record: GameRecord) -> None:
    """Re-add the recorded move times: only a time forfeit may leave a clock below zero."""
    for white in (True, False):
        control = record.spec.white_tc if white else record.spec.black_tc
        if not control.periods:
            continue
        period = control.periods[0]
        assert period.moves == 0, "this check handles incremental controls only"
        spent = own_times(record, white)
        remaining = period.base + period.increment * len(spent) - sum(spent)
        assert all(t is not None and t >= 0 for t in spent)
        if record.termination is not GameTermination.TIME_FORFEIT:
            assert remaining + control.margin >= -period.increment, (white, remaining)


def own_times(record: GameRecord, white: bool) -> list[float]:
    """The thinking times of one side's engine moves (book moves left out)."""
    first_white = record.spec.start_fen is None or record.spec.start_fen.split()[1] == "w"
    times = []
    for ply, played in enumerate(record.moves):
        if played.book:
            continue
        if (ply % 2 == 0) == (first_white == white):
            assert played.time is not None
            times.append(played.time)
    return times


def loser_won_by(record: GameRecord, faulty_white: bool) -> None:
    """The result is a win for the side that did not misbehave."""
    assert record.result == ("0-1" if faulty_white else "1-0"), record.reason
    assert ("White" if faulty_white else "Black") in record.reason
