"""The CECP (XBoard protocol v2) front end: commands in, moves and thinking out.

One main loop consumes a queue fed by the stdin reader thread and by the search thread.  While
the engine thinks, `?` and `quit` act at once, commands that change the game (`force`, `new`,
`result`, `setboard`, `undo`, ...) abandon the search, harmless settings apply at once, and the
rest (`ping` included, as the specification requires) wait until the move has been sent.
"""

from __future__ import annotations

import queue
import signal
import sys
import threading
import time
from dataclasses import dataclass

from engine import faults as fault_actions
from engine.channel import EndOfInput, LineReader, LineWriter, OverlongLine
from engine.config import EngineConfig
from engine.edit import PositionEditor
from engine.faults import FaultKind
from engine.notation import (
    IllegalMoveTextError,
    NotAMoveError,
    format_line,
    format_move,
    looks_like_move,
    parse_move,
    rules_claim,
    score_for_output,
)
from engine.player import SKEW_MAX, SKEW_MIN, Player
from engine.search import MATE, MATE_BOUND, SearchInfo, SearchResult
from engine.timeman import Clock, allocate, parse_base
from runner.rules import STARTING_FEN, Board, Move

# Commands that make a running search pointless: it is abandoned and its move never sent.
_ABANDONING = {
    "force", "new", "result", "setboard", "undo", "remove", "variant", "white", "black",
    "edit", "playother", "go",
}
# Commands that are safe to apply while a search runs.
_IMMEDIATE = {
    "post", "nopost", "easy", "hard", "time", "otim", "computer", "name", "rating", "ics",
    "accepted", "rejected", "draw", "hint", "bk", ".", "cores", "memory",
}
# Transposition-table entries per megabyte granted by `memory` (a Python dict entry with its
# tuple costs roughly 200 bytes).
_ENTRIES_PER_MB = 5_000
_MAX_HASH_MB = 1024


@dataclass(frozen=True)
class _SearchDone:
    """Posted by the search thread when it has a result."""

    token: int
    result: SearchResult
    elapsed_s: float


class CecpSession:
    """The state of one engine process talking CECP."""

    def __init__(self, config: EngineConfig, stdin: int | None = None, stdout=None) -> None:
        self.config = config
        self._faults = config.faults
        self._out = LineWriter(stdout if stdout is not None else sys.stdout.buffer)
        self._queue: queue.Queue = queue.Queue()
        self._reader = LineReader(stdin if stdin is not None else sys.stdin.fileno(), self._queue)
        self._player = Player(config)
        self._clock = Clock()
        self._chess960 = False
        self._board = Board()
        self._engine_color: bool | None = False  # after start-up we play Black, as after `new`
        self._max_depth: int | None = None
        self._post = False
        self._bad_position = False
        self._own_moves = 0
        self._hopeless_moves = 0
        self._last_score: int | None = None
        self._deferred: list[str] = []
        self._search_token = 0
        self._searching = False
        self._abandon = False
        self._stop = threading.Event()
        self._quit_ignored_at: float | None = None
        self._editor: PositionEditor | None = None

    # --- main loop ---------------------------------------------------------------------------

    def run(self) -> int:
        """Serve commands until `quit` or end of input; return the exit status."""
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
                self._out.line(f"Error (line too long): {item.head}")
            else:
                if self._receive(item) == "quit":
                    return 0

    def _receive(self, line: str) -> str | None:
        """Route one input line according to whether a search is running."""
        command = line.strip().split(" ", 1)[0] if line.strip() else ""
        if not command:
            return None
        if self._searching:
            if command == "quit":
                return self._quit()
            if command == "?":
                if not self._faults.has(FaultKind.TIME_ABUSE):
                    self._stop.set()
                return None
            if command in _IMMEDIATE:
                return self._dispatch(line)
            if command in _ABANDONING:
                self._abandon = True
                self._stop.set()
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
        """`quit`: leave at once (unless told to ignore it)."""
        if self._faults.has(FaultKind.IGNORE_QUIT):
            self._ignore_quit()
            return None
        self._stop.set()
        return "quit"

    def _ignore_quit(self) -> None:
        """Remember when quit was first ignored; the process still ends after a long bound."""
        if self._quit_ignored_at is None:
            self._quit_ignored_at = time.monotonic()

    # --- command dispatch --------------------------------------------------------------------

    def _dispatch(self, line: str) -> str | None:
        """Execute one command (the engine is not thinking)."""
        stripped = line.strip()
        if self._editor is not None:
            if self._editor.feed(stripped):
                fen, self._editor = self._editor.fen(), None
                self._cmd_setboard(fen)
            return None
        command, _, arg = stripped.partition(" ")
        arg = arg.strip()
        handler = _HANDLERS.get(command)
        if handler is not None:
            return handler(self, arg)
        if command == "quit":
            return self._quit()
        if looks_like_move(command):
            self._user_move(stripped)
            return None
        self._out.line(f"Error (unknown command): {stripped}")
        return None

    def _cmd_xboard(self, arg: str) -> None:
        """`xboard`: we print no prompt, so there is nothing to do."""

    def _cmd_protover(self, arg: str) -> None:
        """`protover N`: announce our features, done=0 first and done=1 last."""
        delay = self._faults.value(FaultKind.SLOW_START)
        if delay:
            time.sleep(delay)
        out = self._out
        out.line("feature done=0")
        out.line(f'feature myname="{self.config.name}" ping=1 setboard=1 usermove=1 time=1 '
                 "draw=1 reuse=1 sigint=0 sigterm=0 colors=0 san=0 analyze=0 playother=1")
        out.line('feature nps=1 memory=1 smp=1 pause=0 debug=0 variants="normal,fischerandom"')
        # Hash as an option too (as UCI has it): runners send only options an engine declares.
        hash_mb = max(1, self.config.hash_entries // _ENTRIES_PER_MB)
        out.line(f'feature option="Hash -spin {hash_mb} 1 {_MAX_HASH_MB}"')
        out.line(f'feature option="Skew -spin {self._player.skew} {SKEW_MIN} {SKEW_MAX}"')
        if not self._faults.has(FaultKind.NO_DONE):
            out.line("feature done=1")

    def _cmd_noop(self, arg: str) -> None:
        """Commands we accept and ignore (no pondering, one thread, no learning)."""

    def _cmd_new(self, arg: str) -> None:
        """`new`: standard start position, White to move, we play Black, fresh clocks."""
        self._chess960 = False
        self._board = Board()
        self._bad_position = False
        self._engine_color = False
        self._max_depth = None
        self._clock.reset_game()
        self._player.new_game()
        self._own_moves = 0
        self._hopeless_moves = 0
        self._last_score = None

    def _cmd_variant(self, arg: str) -> None:
        """`variant NAME`: normal or fischerandom (Chess960)."""
        if arg not in ("normal", "fischerandom"):
            self._out.line(f"Error (unsupported variant): variant {arg}")
            return
        self._chess960 = arg == "fischerandom"
        self._board = Board(STARTING_FEN, chess960=self._chess960)
        self._bad_position = False

    def _cmd_setboard(self, arg: str) -> None:
        """`setboard FEN` (X-FEN or Shredder-FEN castling in Chess960)."""
        try:
            board = Board(arg, chess960=self._chess960)
        except ValueError:
            self._bad_position = True
            self._out.line("tellusererror Illegal position")
            return
        kings_missing = board.king(True) is None or board.king(False) is None
        if kings_missing or _side_not_to_move_in_check(board):
            self._bad_position = True
            self._out.line("tellusererror Illegal position")
            return
        self._board = board
        self._bad_position = False
        self._hopeless_moves = 0

    def _cmd_edit(self, arg: str) -> None:
        """`edit`: the old way to set up a position, one piece at a time, until `.`."""
        placement = {sq: piece.symbol() for sq, piece in self._board.piece_map().items()}
        self._editor = PositionEditor(placement, self._board.turn, self._chess960)

    def _cmd_force(self, arg: str) -> None:
        """`force`: play neither side."""
        self._engine_color = None

    def _cmd_go(self, arg: str) -> None:
        """`go`: play the side to move, starting now."""
        self._engine_color = self._board.turn
        self._think()

    def _cmd_playother(self, arg: str) -> None:
        """`playother`: play the side not to move (we do not ponder, so just wait)."""
        self._engine_color = not self._board.turn

    def _cmd_white(self, arg: str) -> None:
        """`white` (obsolete): White to move, engine plays Black."""
        self._set_turn(True)
        self._engine_color = False

    def _cmd_black(self, arg: str) -> None:
        """`black` (obsolete): Black to move, engine plays White."""
        self._set_turn(False)
        self._engine_color = True

    def _set_turn(self, color: bool) -> None:
        """Change the side to move of the current position (no en passant afterwards)."""
        if self._board.turn == color:
            return
        fields = self._board.fen().split()
        fields[1] = "w" if color else "b"
        fields[3] = "-"
        try:
            self._board = Board(" ".join(fields), chess960=self._chess960)
        except ValueError:
            self._bad_position = True

    def _cmd_level(self, arg: str) -> None:
        """`level MPS BASE INC`."""
        parts = arg.split()
        try:
            mps = int(parts[0])
            base = parse_base(parts[1])
            inc = float(parts[2])
        except (IndexError, ValueError):
            self._out.line(f"Error (bad arguments): level {arg}")
            return
        self._clock.set_level(mps, base, inc)

    def _cmd_st(self, arg: str) -> None:
        """`st SECONDS` (fractions accepted)."""
        try:
            self._clock.set_fixed(float(arg))
        except ValueError:
            self._out.line(f"Error (bad arguments): st {arg}")

    def _cmd_sd(self, arg: str) -> None:
        """`sd DEPTH`."""
        try:
            self._max_depth = max(1, int(arg))
        except ValueError:
            self._out.line(f"Error (bad arguments): sd {arg}")

    def _cmd_nps(self, arg: str) -> None:
        """`nps RATE`: count time in nodes (RATE nodes per second)."""
        try:
            rate = int(float(arg))
        except ValueError:
            self._out.line(f"Error (bad arguments): nps {arg}")
            return
        self._clock.nps = rate if rate > 0 else None

    def _cmd_time(self, arg: str) -> None:
        """`time N`: our clock in centiseconds."""
        try:
            self._clock.own_s = int(float(arg)) / 100.0
        except ValueError:
            self._out.line(f"Error (bad arguments): time {arg}")

    def _cmd_otim(self, arg: str) -> None:
        """`otim N`: the opponent's clock in centiseconds."""
        try:
            self._clock.opponent_s = int(float(arg)) / 100.0
        except ValueError:
            self._out.line(f"Error (bad arguments): otim {arg}")

    def _cmd_usermove(self, arg: str) -> None:
        """`usermove MOVE`."""
        self._user_move(arg)

    def _cmd_ping(self, arg: str) -> None:
        """`ping N`: answer once everything before it is done."""
        if not self._faults.has(FaultKind.NO_PONG):
            self._out.line(f"pong {arg}")

    def _cmd_draw(self, arg: str) -> None:
        """`draw`: accept when we are clearly worse or the position is dead."""
        worse = self._last_score is not None and self._last_score <= -150
        if worse or self._board.is_insufficient_material():
            self._out.line("offer draw")

    def _cmd_result(self, arg: str) -> None:
        """`result RESULT {COMMENT}`: the game is over; stop playing."""
        self._engine_color = None

    def _cmd_undo(self, arg: str) -> None:
        """`undo`: take back one move."""
        if self._board.move_stack:
            self._board.pop()
        else:
            self._out.line("Error (command not legal now): undo")

    def _cmd_remove(self, arg: str) -> None:
        """`remove`: take back two moves; we keep our colour."""
        if len(self._board.move_stack) >= 2:
            self._board.pop()
            self._board.pop()
        else:
            self._out.line("Error (command not legal now): remove")

    def _cmd_post(self, arg: str) -> None:
        """`post`: show thinking."""
        self._post = True

    def _cmd_nopost(self, arg: str) -> None:
        """`nopost`: hide thinking."""
        self._post = False

    def _cmd_random(self, arg: str) -> None:
        """`random`: toggle a little evaluation noise (GNU Chess 4's meaning)."""
        self._player.random_mode = not self._player.random_mode

    def _cmd_memory(self, arg: str) -> None:
        """`memory MB`: size the transposition table."""
        try:
            megabytes = max(1, int(arg))
        except ValueError:
            self._out.line(f"Error (bad arguments): memory {arg}")
            return
        self._player.resize_table(megabytes * _ENTRIES_PER_MB)

    def _cmd_option(self, arg: str) -> None:
        """`option NAME=VALUE`: Hash (megabytes, as `memory`) and Skew (see
        `Player.set_skew`) are the options declared; others are ignored."""
        name, _, value = arg.partition("=")
        if name.strip() == "Skew":
            if value.strip().lstrip("-").isdigit() and SKEW_MIN <= int(value) <= SKEW_MAX:
                self._player.set_skew(int(value))
            else:
                self._out.line(f"Error (bad option): option {arg[:80]}")
            return
        if name.strip() != "Hash":
            return
        try:
            megabytes = int(value)
        except ValueError:
            megabytes = 0
        if not 1 <= megabytes <= _MAX_HASH_MB:
            self._out.line(f"Error (bad option): option {arg[:80]}")
            return
        self._player.resize_table(megabytes * _ENTRIES_PER_MB)

    # --- moves -------------------------------------------------------------------------------

    def _user_move(self, text: str) -> None:
        """The opponent's (or a forced) move; think afterwards if it is now our turn."""
        if self._bad_position:
            self._out.line(f"Illegal move (illegal position): {text}")
            return
        try:
            move = parse_move(self._board, text)
        except NotAMoveError:
            self._out.line(f"Error (unknown command): {text}")
            return
        except IllegalMoveTextError:
            self._out.line(f"Illegal move: {text}")
            return
        self._board.push(move)
        if self._engine_color is not None and self._board.turn == self._engine_color:
            self._think()

    def _think(self) -> None:
        """Start a search for our move on a separate thread (or announce the game's end)."""
        if self._bad_position:
            return
        claim = rules_claim(self._board)
        if claim is not None:
            self._out.line(claim.line())
            return
        self._search_token += 1
        token = self._search_token
        self._stop = threading.Event()
        self._abandon = False
        self._searching = True
        budget = allocate(self._clock, abuse=self._faults.has(FaultKind.TIME_ABUSE))
        board = self._board.copy()
        pv_board = self._board.copy()
        stop = self._stop
        started = time.monotonic()

        def on_info(info: SearchInfo) -> None:
            if self._post and not stop.is_set():
                self._out.line(self._thinking_line(pv_board, info))

        def work() -> None:
            result = self._player.choose(
                board, budget, max_depth=self._max_depth, stop=stop, on_info=on_info
            )
            self._queue.put(_SearchDone(token, result, time.monotonic() - started))

        threading.Thread(target=work, name="search", daemon=True).start()

    def _thinking_line(self, board, info: SearchInfo) -> str:
        """`ply score time nodes pv` (time in centiseconds)."""
        score = score_for_output(info.score, MATE, MATE_BOUND)
        pv = format_line(board, info.pv, self.config.castling960)
        return f"{info.depth} {score} {int(info.elapsed_s * 100)} {info.nodes} {pv}"

    def _search_finished(self, done: _SearchDone) -> None:
        """Send the move of a finished search (unless it was abandoned), with fault hooks."""
        if done.token != self._search_token:
            return
        self._searching = False
        if self._abandon:
            return
        result = done.result
        if result.move is None:
            claim = rules_claim(self._board)
            if claim is not None:
                self._out.line(claim.line())
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
        if plan.strikes(FaultKind.RESIGN, n) or self._wants_to_resign(result.score):
            self._out.line("resign")
            self._engine_color = None
            return
        if plan.strikes(FaultKind.GARBAGE, n):
            self._out.raw(fault_actions.garbage_bytes())
        if plan.strikes(FaultKind.FLOOD, n):
            self._out.raw(fault_actions.flood_bytes())
        if plan.strikes(FaultKind.ILLEGAL, n):
            self._out.line(f"move {self._illegal_move_text()}")
            return
        self._last_score = result.score
        text = format_move(self._board, result.move, self.config.castling960)
        self._board.push(result.move)
        self._clock.record_own_move(done.elapsed_s)
        self._out.line(f"move {text}")
        claim = rules_claim(self._board)
        if claim is not None:
            self._out.line(claim.line())
        elif plan.strikes(FaultKind.FALSE_CLAIM, n):
            winner_is_white = not self._board.turn
            self._out.line("1-0 {White mates}" if winner_is_white else "0-1 {Black mates}")

    def _wants_to_resign(self, score: int) -> bool:
        """Resign after `resign_moves` searches in a row scored hopeless (when enabled)."""
        if not self.config.resign:
            return False
        if score <= -self.config.resign_score:
            self._hopeless_moves += 1
        else:
            self._hopeless_moves = 0
        return self._hopeless_moves >= self.config.resign_moves

    def _illegal_move_text(self) -> str:
        """A well-formed coordinate move that is not legal here (for the illegal@N fault)."""
        board = self._board
        own = board.occupied_co[board.turn]
        for frm in range(64):
            if not own >> frm & 1:
                continue
            for to in range(64):
                if to == frm or own >> to & 1:
                    continue
                move = Move(frm, to)
                if not board.is_legal(move):
                    return move.uci()
        return "a1a1"


def _side_not_to_move_in_check(board) -> bool:
    """True when the side that just moved is in check (an impossible position)."""
    king = board.king(not board.turn)
    return king is not None and board.is_attacked_by(board.turn, king)


_HANDLERS = {
    "xboard": CecpSession._cmd_xboard,
    "protover": CecpSession._cmd_protover,
    "accepted": CecpSession._cmd_noop,
    "rejected": CecpSession._cmd_noop,
    "new": CecpSession._cmd_new,
    "variant": CecpSession._cmd_variant,
    "setboard": CecpSession._cmd_setboard,
    "edit": CecpSession._cmd_edit,
    "force": CecpSession._cmd_force,
    "go": CecpSession._cmd_go,
    "playother": CecpSession._cmd_playother,
    "white": CecpSession._cmd_white,
    "black": CecpSession._cmd_black,
    "level": CecpSession._cmd_level,
    "st": CecpSession._cmd_st,
    "sd": CecpSession._cmd_sd,
    "nps": CecpSession._cmd_nps,
    "time": CecpSession._cmd_time,
    "otim": CecpSession._cmd_otim,
    "usermove": CecpSession._cmd_usermove,
    "?": CecpSession._cmd_noop,
    "ping": CecpSession._cmd_ping,
    "draw": CecpSession._cmd_draw,
    "result": CecpSession._cmd_result,
    "undo": CecpSession._cmd_undo,
    "remove": CecpSession._cmd_remove,
    "hard": CecpSession._cmd_noop,
    "easy": CecpSession._cmd_noop,
    "post": CecpSession._cmd_post,
    "nopost": CecpSession._cmd_nopost,
    "random": CecpSession._cmd_random,
    "memory": CecpSession._cmd_memory,
    "cores": CecpSession._cmd_noop,
    "computer": CecpSession._cmd_noop,
    "name": CecpSession._cmd_noop,
    "rating": CecpSession._cmd_noop,
    "ics": CecpSession._cmd_noop,
    "hint": CecpSession._cmd_noop,
    "bk": CecpSession._cmd_noop,
    ".": CecpSession._cmd_noop,
    "option": CecpSession._cmd_option,
    "exit": CecpSession._cmd_noop,
}


def serve(config: EngineConfig) -> int:
    """Run the engine on stdin/stdout until `quit`; return the exit status."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # we announce sigint=0; never die of it
    return CecpSession(config).run()
