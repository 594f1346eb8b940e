"""Game for game against the real peers: cutechess-cli and fastchess play the same workloads.

Every workload is deterministic (fairymax or stockfish at a fixed depth, one thread, a small
hash, the first openings of a book in order), so the same adjudication rules give the same
moves and the same results. The peers live in ../shared/peers beside the repository
(cutechess-cli needs libqt6core6; fastchess speaks UCI only); a test whose peer or engine is
absent is skipped with the reason. docs/adjudication.md says which peer each rule follows;
where the peers differ from each other, a workload is compared with the one we follow only.

All workloads run once per session, a few processes at a time (module fixture); each test
then compares one workload's PGN files. The whole matrix costs well under a minute.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import SHARED_DATA
from peer_games import PEERS, Workload, differences, play_all, read_games

# Slow (CI time): the peers play every workload first (about 40 s of a CI worker); the
# drop-ins' matrices against the same peers stay in the fast run.
pytestmark = pytest.mark.slow

BOOKS = SHARED_DATA / "books"
STOCKFISH = shutil.which("stockfish", path="/usr/games:/usr/local/games:" + os.environ.get("PATH", ""))
FAIRYMAX = shutil.which("fairymax", path="/usr/games:/usr/local/games:" + os.environ.get("PATH", ""))


def _sf(name: str) -> tuple[str, ...]:
    return (f"cmd={STOCKFISH}", f"name={name}", "proto=uci", "option.Threads=1", "option.Hash=16")


def _fm(name: str) -> tuple[str, ...]:
    return (f"cmd={FAIRYMAX}", f"name={name}", "proto=xboard")


def _epd(book: str) -> tuple[str, ...]:
    return (f"file={BOOKS / book}", "format=epd", "order=sequential")


PGN_BOOK = (f"file={BOOKS / '8moves_v3.pgn'}", "format=pgn", "order=sequential")
DRAW = ("-draw", "movenumber=20", "movecount=4", "score=15")
RESIGN = ("-resign", "movecount=3", "score=400")

WORKLOADS = [
    # The example, word for word: stockfish depth 6, the first 10 noob openings.
    Workload("uci-epd-issue", (_sf("a"), _sf("b")), ("tc=inf", "depth=6"),
             _epd("noob_3moves.epd"), 10, (*DRAW, *RESIGN, "-maxmoves", "60")),
    # An early start move: the EPD's move counters (move 4) count, as in fastchess;
    # cutechess-cli counts plies from the EPD instead, so it is left out here.
    Workload("uci-epd-draw-early", (_sf("a"), _sf("b")), ("tc=inf", "depth=4"),
             _epd("noob_3moves.epd"), 4, ("-draw", "movenumber=6", "movecount=2", "score=40"),
             peers=("fastchess",)),
    Workload("uci-epd-resign-twosided", (_sf("a"), _sf("b")), ("tc=inf", "depth=4"),
             _epd("UHO_4060_v3.epd"), 5,
             ("-resign", "movecount=3", "score=200", "twosided=true", "-maxmoves", "80")),
    Workload("uci-epd-resign-onesided", (_sf("a"), _sf("b")), ("tc=inf", "depth=4"),
             _epd("UHO_4060_v3.epd"), 5, ("-resign", "movecount=2", "score=250", "-maxmoves", "80")),
    # cutechess-cli counts the opening's plies towards -maxmoves, fastchess does not; we
    # follow fastchess, so this one is compared with fastchess only.
    Workload("uci-pgn-draw-maxmoves", (_sf("a"), _sf("b")), ("tc=inf", "depth=5"), PGN_BOOK, 3,
             ("-draw", "movenumber=15", "movecount=3", "score=20", "-maxmoves", "35"),
             book_plies=16, peers=("fastchess",)),
    Workload("uci-960", (_sf("a"), _sf("b")), ("tc=inf", "depth=5"), _epd("3moves_FRC.epd"), 4,
             (*DRAW, *RESIGN, "-maxmoves", "60", "-variant", "fischerandom")),
    # fairymax carries state from game to game (a tie between equal scores can break the
    # other way later), so every tool starts it afresh for each game. Draws are checked on
    # the PGN book only: from an EPD with move counters the draw's start move differs
    # between the peers (docs/adjudication.md), and fastchess, whose count we follow, has
    # no CECP.
    Workload("cecp-epd", (_fm("a"), _fm("b")), ("tc=inf", "depth=3", "restart=on"),
             _epd("noob_3moves.epd"), 5, (*RESIGN, "-maxmoves", "50"), peers=("cutechess-cli",)),
    Workload("cecp-pgn", (_fm("a"), _fm("b")), ("tc=inf", "depth=3", "restart=on"), PGN_BOOK, 5,
             ("-draw", "movenumber=15", "movecount=3", "score=20", *RESIGN), book_plies=16,
             peers=("cutechess-cli",)),
]


def _usable(workload: Workload) -> list[str]:
    """The peers this machine can run for the workload (each checked by starting it once)."""
    usable = []
    for peer in workload.peers:
        path = PEERS / peer
        if not path.exists():
            continue
        probe = subprocess.run([str(path), "--version"], capture_output=True, text=True,
                               timeout=30, check=False)
        if probe.returncode == 0:
            usable.append(peer)
    return usable


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    """Every workload played once by each usable peer and by the runner."""
    if not BOOKS.is_dir():
        pytest.skip(f"opening books absent (expected {BOOKS})")
    if not any((PEERS / peer).exists() for peer in ("cutechess-cli", "fastchess")):
        pytest.skip(f"no peer runner in {PEERS} (cutechess-cli and fastchess live there)")
    workloads = [w for w in WORKLOADS if _engines_present(w)]
    if not workloads:
        pytest.skip("neither stockfish nor fairymax is installed (apt-get, see .ci/run)")
    tools = ["runner", *sorted({p for w in workloads for p in _usable(w)})]
    return play_all(workloads, tools, tmp_path_factory.mktemp("peers"))


def _engines_present(workload: Workload) -> bool:
    """Whether the workload's engine is installed (uci-* play stockfish, cecp-* fairymax)."""
    return (STOCKFISH if workload.name.startswith("uci") else FAIRYMAX) is not None


@pytest.mark.timeout(300)
@pytest.mark.parametrize("workload", WORKLOADS, ids=[w.name for w in WORKLOADS])
def test_runner_plays_the_peers_games(workload: Workload, played: dict[tuple[str, str], Path]) -> None:
    """Same moves and same result as each peer, game for game."""
    if not _engines_present(workload):
        pytest.skip(f"an engine of {workload.name} is not installed")
    ours = read_games(played[(workload.name, "runner")], workload.book_plies)
    assert len(ours) == 2 * workload.rounds
    compared = 0
    for peer in workload.peers:
        if (workload.name, peer) not in played:
            continue
        theirs = read_games(played[(workload.name, peer)], workload.book_plies)
        assert len(theirs) == 2 * workload.rounds
        mine = ours
        if peer == "cutechess-cli":
            # cutechess-cli drops an EPD's move counters and sends the engines a halfmove
            # clock of 0; stockfish's evaluation reads that clock, so from such an opening
            # it plays other moves than with the book's counters (fastchess and we keep them).
            mine = {key: game for key, game in ours.items() if game.halfmove_clock == 0}
            theirs = {key: game for key, game in theirs.items() if key in mine}
            assert mine, f"{workload.name}: no opening with a halfmove clock of 0 to compare"
        diff = differences(mine, theirs)
        assert not diff, (f"{workload.name}: {len(diff)} of {len(theirs)} games differ from "
                          f"{peer}:\n" + "\n".join(diff))
        compared += 1
    if not compared:
        pytest.skip(f"no peer of {workload.name} runs here ({', '.join(workload.peers)} in {PEERS}; "
                    "cutechess-cli needs libqt6core6)")
