"""Pipe-level helpers for the engine tests, and a tiny CECP host for engine-vs-engine games.

`EnginePipe` runs a real process (no shell, its own session so its whole group can be killed)
and reads its stdout on a thread as raw bytes, so that tests can see exactly what an engine
wrote (including invalid UTF-8 and newline-free floods).  `play_cecp_game` is a minimal host
with clocks that plays one game between two CECP engines, with python-chess as the arbiter.

Run as a script to measure our engine against fairymax:
    python tests/test_engine_support.py --games 20 --level 40/60
"""

from __future__ import annotations

import argparse
import contextlib
import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import chess

REPO = Path(__file__).resolve().parent.parent
ENGINE_CMD = [sys.executable, "-m", "engine"]


class EnginePipe:
    """A chess engine process over real pipes."""

    def __init__(self, argv: list[str], *, cwd: Path = REPO) -> None:
        self.argv = argv
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            start_new_session=True,
        )
        self._lines: queue.Queue[bytes | None] = queue.Queue()
        self.raw = bytearray()
        self.longest_line = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        """Split stdout into lines (bytes), remembering everything raw."""
        fd = self.proc.stdout.fileno()
        pending = b""
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except OSError:
                break
            if not chunk:
                break
            self.raw.extend(chunk)
            pending += chunk
            *complete, pending = pending.split(b"\n")
            for line in complete:
                self.longest_line = max(self.longest_line, len(line))
                self._lines.put(line)
            self.longest_line = max(self.longest_line, len(pending))
        if pending:
            self._lines.put(pending)
        self._lines.put(None)

    def send(self, *lines: str) -> None:
        """Write lines to the engine's stdin."""
        for line in lines:
            self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def read_bytes(self, timeout: float) -> bytes | None:
        """The next output line as bytes, or None at EOF; raises TimeoutError."""
        try:
            return self._lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no output within {timeout} s") from None

    def read(self, timeout: float = 10.0) -> str | None:
        """The next output line, decoded leniently."""
        raw = self.read_bytes(timeout)
        return None if raw is None else raw.decode("utf-8", "replace")

    def expect(self, predicate, timeout: float = 10.0) -> tuple[str, list[str]]:
        """Read until a line satisfies `predicate`; return it and the lines before it."""
        deadline = time.monotonic() + timeout
        seen: list[str] = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no matching line within {timeout} s; saw {seen[-10:]}")
            line = self.read(left)
            if line is None:
                raise EOFError(f"engine exited; saw {seen[-10:]}")
            if predicate(line):
                return line, seen
            seen.append(line)

    def expect_prefix(self, prefix: str, timeout: float = 10.0) -> tuple[str, list[str]]:
        """Read until a line starts with `prefix`."""
        return self.expect(lambda line: line.startswith(prefix), timeout)

    def quiet_for(self, seconds: float) -> list[str]:
        """Every line printed during `seconds` (empty when the engine stayed silent)."""
        lines = []
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            try:
                line = self.read(left)
            except TimeoutError:
                break
            if line is None:
                break
            lines.append(line)
        return lines

    def start_protocol(self, timeout: float = 30.0) -> dict[str, str]:
        """`xboard` + `protover 2`, accept every feature, return them once done=1 arrives."""
        self.send("xboard", "protover 2")
        features: dict[str, str] = {}
        deadline = time.monotonic() + timeout
        while features.get("done") != "1":
            line, _ = self.expect_prefix("feature ", deadline - time.monotonic())
            for item in shlex.split(line[len("feature "):]):
                key, _, value = item.partition("=")
                features[key] = value
                self.send(f"accepted {key}")
        return features

    def sync(self, n: int = 1, timeout: float = 30.0) -> list[str]:
        """`ping n` and wait for `pong n`; return what came before it."""
        self.send(f"ping {n}")
        _, before = self.expect(lambda line: line.strip() == f"pong {n}", timeout)
        return before

    def alive(self) -> bool:
        """True while the process runs."""
        return self.proc.poll() is None

    def wait(self, timeout: float) -> int | None:
        """Exit status within `timeout`, or None if it is still running."""
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def close(self) -> None:
        """Quit politely, then kill the whole process group."""
        if self.alive():
            with contextlib.suppress(BrokenPipeError, OSError):
                self.send("quit")
            self.wait(2.0)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(5)
        # The reader thread reads a raw descriptor number: close stdout only once it has seen
        # end of file, or a later pipe that reuses the number would have its output stolen.
        self._reader.join(5)
        streams = [self.proc.stdin, self.proc.stderr]
        if not self._reader.is_alive():
            streams.append(self.proc.stdout)
        for stream in streams:
            with contextlib.suppress(OSError):
                stream.close()

    def __enter__(self) -> EnginePipe:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def our_engine(*args: str) -> EnginePipe:
    """Start `python -m engine ARGS`."""
    return EnginePipe([*ENGINE_CMD, *args])


def parse_engine_move(board: chess.Board, text: str) -> chess.Move:
    """An engine's move text (coordinate, O-O, or king-takes-rook) as a legal python-chess move."""
    return board.parse_xboard(text)


# --- a tiny CECP host with clocks -----------------------------------------------------------


@dataclass
class GameOutcome:
    """How a hosted game ended."""

    result: str
    reason: str
    moves: list[str] = field(default_factory=list)
    claims: list[str] = field(default_factory=list)
    max_overrun_s: float = 0.0


@dataclass
class _Side:
    pipe: EnginePipe
    features: dict[str, str]
    clock_s: float


def _send_move(side: _Side, text: str) -> None:
    prefix = "usermove " if side.features.get("usermove") == "1" else ""
    side.pipe.send(prefix + text)


def play_cecp_game(
    white: EnginePipe,
    black: EnginePipe,
    *,
    moves_per_session: int = 40,
    base_s: float = 60.0,
    increment_s: float = 0.0,
    max_plies: int = 400,
    margin_s: float = 0.0,
) -> GameOutcome:
    """Play one game from the start position between two started CECP engines."""
    board = chess.Board()
    sides = {}
    moves_done = {chess.WHITE: 0, chess.BLACK: 0}
    for color, pipe in ((chess.WHITE, white), (chess.BLACK, black)):
        features = pipe.start_protocol()
        sides[color] = _Side(pipe, features, base_s)
        minutes, seconds = divmod(int(base_s), 60)
        pipe.send("new", "force", "easy", "nopost",
                  f"level {moves_per_session} {minutes}:{seconds:02d} {increment_s:g}")
        pipe.sync(7, timeout=30)
    outcome = GameOutcome("*", "unfinished")
    started = {chess.WHITE: False, chess.BLACK: False}
    for _ in range(max_plies):
        if board.is_game_over(claim_draw=True):
            outcome.result = board.result(claim_draw=True)
            outcome.reason = board.outcome(claim_draw=True).termination.name
            break
        mover = board.turn
        side, other = sides[mover], sides[not mover]
        side.pipe.send(f"time {max(1, int(side.clock_s * 100))}",
                       f"otim {max(1, int(other.clock_s * 100))}")
        if board.move_stack:
            _send_move(side, board.peek().uci())
        if not started[mover]:
            side.pipe.send("go")  # leaves force mode; afterwards moves alone start its thinking
            started[mover] = True
        start = time.monotonic()
        try:
            line, _ = side.pipe.expect(
                lambda text: text.startswith("move ") or text.strip() == "resign"
                or text.split(" ")[0] in ("1-0", "0-1", "1/2-1/2"),
                timeout=max(side.clock_s, 0.0) + 10.0,
            )
        except (TimeoutError, EOFError) as err:
            outcome.result, outcome.reason = ("0-1" if mover else "1-0"), f"no move: {err}"
            break
        side.clock_s -= time.monotonic() - start
        outcome.max_overrun_s = max(outcome.max_overrun_s, -side.clock_s)
        if side.clock_s < -margin_s:
            outcome.result = "0-1" if mover else "1-0"
            outcome.reason = f"time forfeit ({side.clock_s:.2f} s)"
            break
        if line.strip() == "resign":
            outcome.result, outcome.reason = ("0-1" if mover else "1-0"), "resign"
            break
        if not line.startswith("move "):
            outcome.claims.append(line)
            if board.is_game_over(claim_draw=True):
                continue
            outcome.result, outcome.reason = ("0-1" if mover else "1-0"), f"false claim {line}"
            break
        try:
            move = parse_engine_move(board, line.split()[1])
        except ValueError:
            outcome.result, outcome.reason = ("0-1" if mover else "1-0"), f"illegal move {line}"
            break
        outcome.moves.append(board.san(move))
        board.push(move)
        moves_done[mover] += 1
        side.clock_s += increment_s
        if moves_per_session and moves_done[mover] % moves_per_session == 0:
            side.clock_s += base_s
    for side in sides.values():
        side.pipe.send(f"result {outcome.result} {{{outcome.reason}}}")
    return outcome


def _main() -> None:
    parser = argparse.ArgumentParser(description="Our engine against fairymax over pipes.")
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--moves", type=int, default=40)
    parser.add_argument("--base", type=float, default=60.0)
    parser.add_argument("--inc", type=float, default=0.0)
    parser.add_argument("--opponent", default="/usr/games/fairymax")
    parser.add_argument("--ours", default="")
    args = parser.parse_args()
    score = 0.0
    for game in range(args.games):
        ours = our_engine(*args.ours.split())
        theirs = EnginePipe([args.opponent])
        try:
            pair = (ours, theirs) if game % 2 == 0 else (theirs, ours)
            outcome = play_cecp_game(*pair, moves_per_session=args.moves, base_s=args.base,
                                     increment_s=args.inc)
        finally:
            ours.close()
            theirs.close()
        points = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}.get(outcome.result, 0.5)
        ours_points = points if game % 2 == 0 else 1.0 - points
        score += ours_points
        print(f"game {game + 1}: ours {'white' if game % 2 == 0 else 'black'} "
              f"{outcome.result} ({outcome.reason}, {len(outcome.moves)} plies, "
              f"overrun {outcome.max_overrun_s:.2f} s) -> {score}/{game + 1}", flush=True)
    print(f"score: {score}/{args.games}")


if __name__ == "__main__":
    _main()
