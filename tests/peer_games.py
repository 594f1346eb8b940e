"""Play one workload with cutechess-cli, fastchess and the runner, and read the three PGN files.

A workload is a deterministic match (engines at a fixed depth, one thread, openings in book
order); each tool gets the same words (cutechess-cli's vocabulary: single dash for the peers,
double dash for `runner match`). Games are matched across tools by their opening and the
White player, so the order each tool writes games in does not matter. python-chess is the
oracle that reads every tool's PGN.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import chess
import chess.pgn

REPO = Path(__file__).resolve().parent.parent
PEERS = REPO.parent / "shared" / "peers"
PEER_TIMEOUT = 120.0


@dataclass(frozen=True)
class Workload:
    """One deterministic match, written once in cutechess-cli's words."""

    name: str
    engines: tuple[tuple[str, ...], ...]
    each: tuple[str, ...]
    openings: tuple[str, ...]
    rounds: int
    rest: tuple[str, ...] = ()
    book_plies: int = 0
    peers: tuple[str, ...] = ("cutechess-cli", "fastchess")

    def words(self, dash: str) -> list[str]:
        """The command line words after the program, with ``dash`` before each option."""
        out: list[str] = []
        for engine in self.engines:
            out += [f"{dash}engine", *engine]
        out += [f"{dash}each", *self.each, f"{dash}openings", *self.openings,
                f"{dash}games", "2", f"{dash}rounds", str(self.rounds), f"{dash}repeat"]
        for word in self.rest:
            out.append(dash + word[1:] if word.startswith("-") and not word[1:2].isdigit() else word)
        return out


@dataclass
class Game:
    """One game as python-chess reads it: the start, the moves (UCI) and the result."""

    white: str
    fen: str
    moves: list[str]
    result: str
    termination: str = ""
    halfmove_clock: int = 0
    comment: str = field(default="", repr=False)


def command(tool: str, workload: Workload, pgn: Path, db: Path) -> list[str]:
    """The argv that plays ``workload`` with ``tool`` and writes its games to ``pgn``."""
    if tool == "runner":
        return [sys.executable, "-m", "runner", "match", *workload.words("--"),
                "--pgnout", str(pgn), "--db", str(db), "--quiet"]
    words = [str(PEERS / tool), *workload.words("-")]
    if tool == "fastchess":
        return [*words, "-pgnout", f"file={pgn}"]
    return [*words, "-pgnout", str(pgn)]


def launch(tool: str, workload: Workload, tmp: Path) -> tuple[subprocess.Popen[str], Path]:
    """Start one tool on one workload (no shell); returns the process and its PGN path."""
    pgn = tmp / f"{workload.name}-{tool}.pgn"
    log = (tmp / f"{workload.name}-{tool}.log").open("w")
    env = dict(os.environ, PYTHONPATH=str(REPO))
    proc = subprocess.Popen(command(tool, workload, pgn, tmp / f"{workload.name}.db"),
                            cwd=tmp if tool != "runner" else REPO, stdout=log,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True, env=env)
    log.close()
    return proc, pgn


def read_games(pgn: Path, book_plies: int) -> dict[tuple[str, str, tuple[str, ...]], Game]:
    """Every game of a PGN file keyed by (start position, White, book moves)."""
    games: dict[tuple[str, str, tuple[str, ...]], Game] = {}
    with pgn.open() as handle:
        while (node := chess.pgn.read_game(handle)) is not None:
            assert not node.errors, f"{pgn}: {node.errors}"
            board = node.board()
            fen = " ".join(board.fen().split()[:4])
            moves = []
            last = node
            for child in node.mainline():
                moves.append(board.uci(child.move, chess960=True))
                board.push(child.move)
                last = child
            game = Game(white=node.headers["White"], fen=fen, moves=moves,
                        result=node.headers["Result"],
                        termination=node.headers.get("Termination", ""), comment=last.comment,
                        halfmove_clock=node.board().halfmove_clock)
            key = (fen, game.white, tuple(moves[:book_plies]))
            assert key not in games, f"{pgn}: two games start alike: {key}"
            games[key] = game
    return games


def differences(ours: dict[tuple[str, str, tuple[str, ...]], Game],
                theirs: dict[tuple[str, str, tuple[str, ...]], Game]) -> list[str]:
    """One line per game the two sides did not play identically (moves or result)."""
    lines = []
    for key in sorted(set(ours) | set(theirs)):
        a, b = ours.get(key), theirs.get(key)
        if a is None or b is None:
            lines.append(f"{key}: only in {'theirs' if a is None else 'ours'}")
            continue
        if a.moves != b.moves or a.result != b.result:
            same = 0
            while same < min(len(a.moves), len(b.moves)) and a.moves[same] == b.moves[same]:
                same += 1
            lines.append(f"{key[0]} White={key[1]}: ours {a.result} after {len(a.moves)} plies "
                         f"({a.comment!r}), theirs {b.result} after {len(b.moves)} plies "
                         f"({b.comment!r}); same for the first {same} plies")
    return lines


def play_all(workloads: Sequence[Workload], tools: Sequence[str], tmp: Path,
             parallel: int = 3) -> dict[tuple[str, str], Path]:
    """Play every (workload, tool) pair, ``parallel`` processes at a time; PGN paths by pair.

    Each pair's wall time goes to ``tmp/timings.txt`` to keep the matrix's cost in view.
    """
    pending = [(w, t) for w in workloads for t in tools if t == "runner" or t in w.peers]
    running: list[tuple[Workload, str, float, subprocess.Popen[str], Path]] = []
    done: dict[tuple[str, str], Path] = {}
    deadline = time.monotonic() + PEER_TIMEOUT * max(1, len(pending))
    try:
        while pending or running:
            while pending and len(running) < parallel:
                workload, tool = pending.pop(0)
                running.append((workload, tool, time.monotonic(), *launch(tool, workload, tmp)))
            finished = [entry for entry in running if entry[3].poll() is not None]
            if not finished:
                assert time.monotonic() < deadline, "the peer matrix is taking far too long"
                time.sleep(0.05)
                continue
            for entry in finished:
                running.remove(entry)
                workload, tool, began, proc, pgn = entry
                log = (tmp / f"{workload.name}-{tool}.log").read_text()
                assert proc.returncode == 0, \
                    f"{tool} on {workload.name} exited with {proc.returncode}:\n{log[-2000:]}"
                done[(workload.name, tool)] = pgn
                with (tmp / "timings.txt").open("a") as timings:
                    timings.write(f"{workload.name} {tool} {time.monotonic() - began:.1f}\n")
    finally:
        for *_, proc, _pgn in running:  # an assertion above: stop what still runs
            proc.kill()
            proc.wait()
    return done
