"""The UCI front end: the same player, levels and fault modes as CECP, spoken in UCI.

One main loop consumes a queue fed by the stdin reader thread and by the search thread.
While the engine thinks, ``stop``, ``isready`` and ``quit`` act at once (the protocol asks
for ``readyok`` even mid-search); every other command waits until ``bestmove`` is sent.
Moves are coordinate notation; in Chess960 (``UCI_Chess960``) castling is written
king-takes-rook, and both castling forms are accepted on input.

Fault modes map onto UCI as follows: ``no-done`` (alias ``no-uciok``) withholds ``uciok``,
``no-pong`` (alias ``no-readyok``) withholds ``readyok``, ``crash``/``hang``/``illegal``/
``garbage``/``flood`` strike at the N-th ``bestmove``, ``slow-start`` delays the ``uci``
answer, ``time-abuse`` overstays and ignores ``stop``.  UCI has no resignation and no
result claims, so ``resign``, ``false-claim`` and ``--resign`` do nothing here.
"""

from __future__ import annotations

import dataclasses
import queue
import signal
import sys
import threading
import time
from dataclasses import dataclass

from engine import faults as fault_actions
from engine.channel import EndOfInput, LineReader, LineWriter, OverlongLine
from engine.config import LEVEL_NAMES, EngineConfig
from engine.faults import FaultKind
from engine.notation import IllegalMoveTextError, NotAMoveError, parse_move
from engine.player import SKEW_MAX, SKEW_MIN, Player
from engine.search import MATE, MATE_BOUND, SearchInfo, SearchResult
from engine.timeman import Clock, TimeBudget, allocate
from runner.rules import Board, Move

# Fault names that only make sense in UCI, and the CECP fault each one reuses.
FAULT_ALIASES = {"no-uciok": "no-done", "no-readyok": "no-pong"}
# Transposition-table entries per megabyte of the Hash option (as CECP's `memory`).
_ENTRIES_PER_MB = 5_000
_MAX_HASH_MB = 1024
_GO_INT_ARGS = {"wtime", "btime", "winc", "binc", "movestogo", "movetime", "depth", "nodes",
                "mate"}


def translate_fault_aliases(argv: list[str]) -> list[str]:
    """Command-line arguments with UCI fault names (``no-uciok``...) replaced by the CECP ones."""
    out = []
    for arg in argv:
        for alias, kind in FAULT_ALIASES.items():
            arg = ",".join(kind if part == alias else part for part in arg.split(","))
            arg = arg.replace(f"--fault={alias}", f"--fault={kind}")
        out.append(arg)
    return out


@dataclass(frozen=True)
class _SearchDone:
    """Posted by the search thread when it has a result."""

    token: int
    result: SearchResult


@dataclass(frozen=True)
class _GoRequest:
    """A parsed ``go``: the budget, the depth cap, and whether to wait for ``stop``."""

    budget: TimeBudget
    max_depth: int | None
    infinite: bool


class UciSession:
    """The state of one engine process talking UCI."""

    def __init__(self, config: EngineConfig, stdin: int | None = None, stdout=None) -> None:
        self.config = config
        self._faults = config.faults
        self._out = LineWriter(stdout if stdout is not None else sys.stdout.buffer)
        self._queue: queue.Queue = queue.Queue()
        self._reader = LineReader(stdin if stdin is not None else sys.stdin.fileno(), self._queue)
        self._player = Player(config)
        self._hash_mb = max(1, config.hash_entries // _ENTRIES_PER_MB)
        self._chess960 = False
        self._board = Board()
        self._bad_position: str | None = None
        self._position_head: tuple[str, bool] | None = None
        self._position_moves: list[str] = []
        self._own_moves = 0
        self._deferred: list[str] = []
        self._search_token = 0
        self._searching = False
        self._stop = threading.Event()
        self._infinite = False
        self._held: SearchResult | None = None
        self._quit_ignored_at: float | None = None

    # --- main loop ---------------------------------------------------------------------------

    def run(self) -> int:
        """Serve commands until ``quit`` or end of input; return the exit status."""
        if self._faults.has(FaultKind.SPAWN_CHILD):
            fault_actions.spawn_stray_child()
        self._reader.start()
        while True:
            timeout = None
            if self._quit_ignored_at is not None:
                timeout = max(0.0, self._quit_ignored_at + fault_actions.MAX_MISBEHAVIOUR_S
                              - time.monotonic())
            try:
                item = self._queue.get(timeout=timeout)
            except queue.Empty:
                return 0
            if isinstance(item, _SearchDone):
                self._search_finished(item)
                if self._drain() == "quit":
                    return 0
            elif isinstance(item, EndOfInput):
                if self._faults.has(FaultKind.IGNORE_QUIT):
                    self._ignore_quit()
                    continue
                self._stop.set()
                return 0
            elif isinstance(item, OverlongLine):
                self._out.line(f"info string line too long: {item.head}")
            elif self._receive(item) == "quit":
                return 0

    def _receive(self, line: str) -> str | None:
        """Route one input line according to whether a search is running."""
        command = line.split(maxsplit=1)[0] if line.strip() else ""
        if not command:
            return None
        if command == "quit":
            return self._quit()
        if command == "isready":
            self._cmd_isready("")
            return None
        if self._searching:
            if command == "stop":
                self._cmd_stop("")
            elif command not in ("ponderhit", "debug"):
                self._deferred.append(line)
            return None
        if self._deferred:
            self._deferred.append(line)
            return self._drain()
        return self._dispatch(line)

    def _drain(self) -> str | None:
        """Run deferred commands in order until one starts a new search."""
        while self._deferred and not self._searching:
            if self._dispatch(self._deferred.pop(0)) == "quit":
                return "quit"
        return None

    def _quit(self) -> str | None:
        """``quit``: leave at once (unless told to ignore it)."""
        if self._faults.has(FaultKind.IGNORE_QUIT):
            self._ignore_quit()
            return None
        self._stop.set()
        return "quit"

    def _ignore_quit(self) -> None:
        """Remember when quit was first ignored; the process still ends after a long bound."""
        if self._quit_ignored_at is None:
            self._quit_ignored_at = time.monotonic()

    def _dispatch(self, line: str) -> str | None:
        """Execute one command (the engine is not thinking)."""
        command, _, arg = line.strip().partition(" ")
        if command == "quit":
            return self._quit()
        handler = _HANDLERS.get(command)
        if handler is None:
            self._out.line(f"info string unknown command: {line.strip()[:80]}")
            return None
        handler(self, arg.strip())
        return None

    # --- commands ----------------------------------------------------------------------------

    def _cmd_uci(self, arg: str) -> None:
        """``uci``: identify, declare the options, and (unless told not to) ``uciok``."""
        delay = self._faults.value(FaultKind.SLOW_START)
        if delay:
            time.sleep(delay)
        out = self._out
        out.line(f"id name {self.config.name}")
        out.line("id author the cecp-runner developers")
        out.line(f"option name Hash type spin default {self._hash_mb} min 1 max {_MAX_HASH_MB}")
        out.line("option name Threads type spin default 1 min 1 max 1")
        out.line(f"option name Skew type spin default {self._player.skew} min {SKEW_MIN} "
                 f"max {SKEW_MAX}")
        out.line("option name Clear Hash type button")
        out.line(f"option name Level type combo default {self.config.level} "
                 + " ".join(f"var {name}" for name in LEVEL_NAMES))
        out.line("option name UCI_Chess960 type check default false")
        if not self._faults.has(FaultKind.NO_DONE):
            out.line("uciok")

    def _cmd_isready(self, arg: str) -> None:
        """``isready``: answer at once, even while searching."""
        if not self._faults.has(FaultKind.NO_PONG):
            self._out.line("readyok")

    def _cmd_noop(self, arg: str) -> None:
        """Commands we accept and ignore (``debug``, ``register``, ``ponderhit``...)."""

    def _cmd_setoption(self, arg: str) -> None:
        """``setoption name NAME [value VALUE]``."""
        words = arg.split()
        if not words or words[0] != "name":
            self._out.line(f"info string bad setoption: {arg[:80]}")
            return
        try:
            at = words.index("value")
        except ValueError:
            at = len(words)
        name = " ".join(words[1:at]).lower()
        value = " ".join(words[at + 1:])
        if name == "hash" and value.isdigit() and 1 <= int(value) <= _MAX_HASH_MB:
            self._hash_mb = int(value)
            self._player.resize_table(self._hash_mb * _ENTRIES_PER_MB)
        elif (name == "skew" and value.lstrip("-").isdigit()
              and SKEW_MIN <= int(value) <= SKEW_MAX):
            self._player.set_skew(int(value))
        elif name == "threads" and value == "1":
            pass
        elif name == "clear hash":
            self._player.new_game()
        elif name == "level" and value in LEVEL_NAMES:
            self.config = dataclasses.replace(self.config, level=value)
            skew = self._player.skew
            self._player = Player(self.config)
            self._player.resize_table(self._hash_mb * _ENTRIES_PER_MB)
            if skew != self._player.skew:
                self._player.set_skew(skew)
        elif name == "uci_chess960" and value.lower() in ("true", "false"):
            self._chess960 = value.lower() == "true"
        else:
            self._out.line(f"info string unsupported option or value: {arg[:80]}")

    def _cmd_ucinewgame(self, arg: str) -> None:
        """``ucinewgame``: forget the last game (tables, own move count)."""
        self._player.new_game()
        self._own_moves = 0
        self._position_head = None
        self._position_moves = []

    def _cmd_position(self, arg: str) -> None:
        """``position startpos|fen FEN [moves M...]``.

        A host sends the whole game before every move: when the command extends the last one
        (same start, more moves), only the new moves are played on the current board.
        """
        head, _, tail = arg.partition("moves")
        head = head.strip()
        moves = tail.split()
        known = self._position_moves
        if (head, self._chess960) == self._position_head and self._bad_position is None \
                and moves[:len(known)] == known:
            self._play_moves(moves[len(known):])
            return
        self._bad_position = None
        self._position_head = None
        self._position_moves = []
        try:
            if head == "startpos":
                self._board = Board(chess960=self._chess960)
            elif head.startswith("fen "):
                self._board = Board(head[4:].strip(), chess960=self._chess960)
            else:
                raise ValueError(f"bad position command: {arg[:80]}")
        except ValueError as exc:
            self._bad_position = str(exc)
            self._out.line(f"info string {exc}")
            return
        self._position_head = (head, self._chess960)
        self._play_moves(moves)

    def _play_moves(self, moves: list[str]) -> None:
        """Play moves of a ``position`` command on the current board; stop at an illegal one."""
        for text in moves:
            try:
                self._board.push(parse_move(self._board, text))
            except (NotAMoveError, IllegalMoveTextError):
                self._bad_position = f"illegal move in position: {text}"
                self._out.line(f"info string {self._bad_position}")
                return
            self._position_moves.append(text)

    def _cmd_go(self, arg: str) -> None:
        """``go [wtime btime winc binc movestogo | movetime | depth | nodes | infinite]``."""
        request = self._parse_go(arg)
        self._search_token += 1
        token = self._search_token
        self._stop = threading.Event()
        self._infinite = request.infinite
        self._held = None
        self._searching = True
        board = self._board.copy()
        stop = self._stop

        def on_info(info: SearchInfo) -> None:
            if not stop.is_set():
                self._out.line(_info_line(info))

        def work() -> None:
            result = self._player.choose(board, request.budget, max_depth=request.max_depth,
                                         stop=stop, on_info=on_info)
            self._queue.put(_SearchDone(token, result))

        threading.Thread(target=work, name="search", daemon=True).start()

    def _parse_go(self, arg: str) -> _GoRequest:
        """The budget a ``go`` asks for (time-abuse overstays a clock or a fixed time)."""
        words = arg.split()
        values: dict[str, int] = {}
        for key, value in zip(words, words[1:], strict=False):
            if key in _GO_INT_ARGS:
                try:
                    values[key] = int(value)
                except ValueError:
                    continue
        abuse = self._faults.has(FaultKind.TIME_ABUSE)
        white = self._board.turn
        own = values.get("wtime" if white else "btime")
        budget = TimeBudget(None, None)
        if "movetime" in values:
            clock = Clock()
            clock.set_fixed(max(0, values["movetime"]) / 1000.0)
            budget = allocate(clock, abuse=abuse)
        elif own is not None:
            clock = Clock()
            clock.own_s = max(0, own) / 1000.0
            clock.increment_s = max(0, values.get("winc" if white else "binc", 0)) / 1000.0
            clock.moves_per_session = max(0, values.get("movestogo", 0))
            budget = allocate(clock, abuse=abuse)
        nodes = values.get("nodes")
        if nodes is not None:
            budget = dataclasses.replace(budget, max_nodes=max(1, nodes))
        depth = values.get("depth")
        infinite = "infinite" in words or (budget.unlimited and depth is None)
        return _GoRequest(budget, max(1, depth) if depth is not None else None, infinite)

    def _cmd_stop(self, arg: str) -> None:
        """``stop``: end the search now (time-abuse ignores it); release a held result."""
        if self._faults.has(FaultKind.TIME_ABUSE):
            return
        self._stop.set()
        self._infinite = False
        if self._held is not None:
            held, self._held = self._held, None
            self._send_bestmove(held)

    # --- moves -------------------------------------------------------------------------------

    def _search_finished(self, done: _SearchDone) -> None:
        """Send the bestmove of a finished search (held back under ``go infinite``)."""
        if done.token != self._search_token:
            return
        if self._infinite and not self._stop.is_set():
            self._held = done.result  # the protocol forbids bestmove before stop here
            return
        self._send_bestmove(done.result)

    def _send_bestmove(self, result: SearchResult) -> None:
        """``bestmove X [ponder Y]``, with the fault hooks at the engine's N-th move."""
        self._searching = False
        if self._bad_position is not None or result.move is None:
            self._out.line("bestmove (none)" if result.move is None else "bestmove 0000")
            return
        self._own_moves += 1
        n = self._own_moves
        plan = self._faults
        if plan.strikes(FaultKind.STDERR, n):
            fault_actions.complain(n)
        if plan.strikes(FaultKind.CRASH, n):
            fault_actions.crash_now()
        if plan.strikes(FaultKind.HANG, n):
            fault_actions.hang_forever()
        if plan.strikes(FaultKind.GARBAGE, n):
            self._out.raw(fault_actions.garbage_bytes())
        if plan.strikes(FaultKind.FLOOD, n):
            self._out.raw(fault_actions.flood_bytes())
        if plan.strikes(FaultKind.ILLEGAL, n):
            self._out.line(f"bestmove {_illegal_move_text(self._board)}")
            return
        text = f"bestmove {result.move.uci()}"
        if len(result.pv) > 1 and result.pv[0] == result.move:
            text += f" ponder {result.pv[1].uci()}"
        self._out.line(text)


def _info_line(info: SearchInfo) -> str:
    """``info depth D score cp S|mate M time T nodes N nps P pv ...``."""
    if abs(info.score) >= MATE_BOUND:
        moves = (MATE - abs(info.score) + 1) // 2
        score = f"mate {moves if info.score > 0 else -moves}"
    else:
        score = f"cp {info.score}"
    ms = int(info.elapsed_s * 1000)
    nps = int(info.nodes / info.elapsed_s) if info.elapsed_s > 0 else 0
    # The rules core writes Chess960 castling as king-takes-rook, as UCI_Chess960 wants.
    pv = " ".join(move.uci() for move in info.pv)
    return (f"info depth {info.depth} score {score} time {ms} nodes {info.nodes} nps {nps}"
            + (f" pv {pv}" if pv else ""))


def _illegal_move_text(board) -> str:
    """A well-formed coordinate move that is not legal here (for the illegal@N fault)."""
    own = board.occupied_co[board.turn]
    for frm in range(64):
        if not own >> frm & 1:
            continue
        for to in range(64):
            if to != frm and not own >> to & 1 and not board.is_legal(Move(frm, to)):
                return Move(frm, to).uci()
    return "a1a1"


_HANDLERS = {
    "uci": UciSession._cmd_uci,
    "isready": UciSession._cmd_isready,
    "setoption": UciSession._cmd_setoption,
    "ucinewgame": UciSession._cmd_ucinewgame,
    "position": UciSession._cmd_position,
    "go": UciSession._cmd_go,
    "stop": UciSession._cmd_noop,  # no search running
    "ponderhit": UciSession._cmd_noop,
    "debug": UciSession._cmd_noop,
    "register": UciSession._cmd_noop,
}


def serve_uci(config: EngineConfig) -> int:
    """Run the engine on stdin/stdout in UCI until ``quit``; return the exit status."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    return UciSession(config).run()
