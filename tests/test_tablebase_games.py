"""Tablebase adjudication in real games: stockfish from endgame positions, and the peers.

The positions (tests/data/tb_endgames.epd) have five or six pieces, so every game enters the
tables by a capture. python-chess's own Syzygy probe is the oracle: a game ends at the first
position the rules (docs/adjudication.md: fastchess's) let the tables judge, with the
result its WDL gives. The same games played by cutechess-cli and fastchess (../shared/peers)
end on the same ply with the same result and the same words. Skipped with a reason when the
tables (../shared/data/syzygy), stockfish or the peers are absent.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path

import chess
import chess.syzygy
import pytest
from conftest import SHARED_DATA
from peer_games import PEERS, Workload, differences, play_all, read_games

from runner.clock import TimeControl
from runner.game.adjudication import AdjudicationRules
from runner.game.record import GameRecord, GameSpec, GameTermination
from runner.protocol.engine import EngineConfig
from tests.bundled_games import play_engines

SYZYGY = SHARED_DATA / "syzygy"
EPD = Path(__file__).parent / "data" / "tb_endgames.epd"
STOCKFISH = shutil.which("stockfish", path="/usr/games:/usr/local/games:" + os.environ.get("PATH", ""))
POSITIONS = [line.strip() for line in EPD.read_text().splitlines() if line.strip()]

pytestmark = [
    pytest.mark.skipif(not SYZYGY.is_dir(), reason=f"Syzygy tables absent (expected {SYZYGY})"),
    pytest.mark.skipif(STOCKFISH is None, reason="stockfish is not installed (apt-get, see .ci/run)"),
]


def _stockfish(name: str) -> EngineConfig:
    return EngineConfig(name=name, argv=(str(STOCKFISH),), protocol="uci",
                        options={"Threads": "1", "Hash": "16"}, quit_timeout=2.0,
                        terminate_timeout=1.0)


def _play_all(rules: AdjudicationRules) -> list[GameRecord]:
    """Each position once, stockfish at depth 5 on both sides."""
    depth = TimeControl.parse("tc=inf depth=5")

    async def games() -> list[GameRecord]:
        records = []
        for epd in POSITIONS:
            spec = GameSpec(depth, depth, start_fen=f"{epd} 0 1", adjudication=rules)
            played = await play_engines(_stockfish("a"), _stockfish("b"), spec)
            records.append(played.record)
        return records

    return asyncio.run(games())


def _expected(record: GameRecord, rules: AdjudicationRules,
              tables: chess.syzygy.Tablebase) -> tuple[int, str, str] | None:
    """The oracle: (ply, result, reason) of the first position the tables may end the game
    on, replaying the record with python-chess; None when no position qualifies."""
    board = chess.Board(record.spec.start_fen)
    limit = min(rules.tb_pieces or 7, 5)  # 5: the largest table in ../shared/data/syzygy
    for ply in range(len(record.moves) + 1):
        if ply:
            board.push_uci(record.moves[ply - 1].uci)
        if board.is_game_over(claim_draw=False) or board.is_repetition(3) or board.is_fifty_moves():
            return None  # the rules end it first
        if board.halfmove_clock or board.castling_rights or len(board.piece_map()) > limit:
            continue
        wdl = tables.get_wdl(board)
        if wdl is None:
            continue
        if wdl in (1, -1) and not rules.tb_ignore_50:
            wdl = 0
        if wdl == 0 and rules.tb_draws:
            return ply, "1/2-1/2", "Draw by adjudication: SyzygyTB"
        if wdl and rules.tb_wins:
            white = (wdl > 0) == board.turn
            return (ply, "1-0" if white else "0-1",
                    f"{'White' if white else 'Black'} wins by adjudication: SyzygyTB")
    return None


@pytest.mark.timeout(300)
@pytest.mark.parametrize("rules", [
    AdjudicationRules(tablebases=(str(SYZYGY),), tb_pieces=4, max_moves=100),
    AdjudicationRules(tablebases=(str(SYZYGY),), max_moves=100),  # all five-piece tables too
    AdjudicationRules(tablebases=(str(SYZYGY),), tb_pieces=4, tb_draws=False, max_moves=100),
    AdjudicationRules(tablebases=(str(SYZYGY),), tb_pieces=4, tb_wins=False,
                      tb_ignore_50=True, max_moves=100),
], ids=["pieces4", "all-tables", "win-loss-only", "draw-only-ignore50"])
def test_games_end_at_the_first_position_the_tables_may_judge(rules: AdjudicationRules) -> None:
    """Right ply, right result, right words, the 'tablebase' termination and PGN's
    'adjudication' tag; games the tables may not judge end otherwise."""
    records = _play_all(rules)
    judged = 0
    with chess.syzygy.open_tablebase(str(SYZYGY)) as tables:
        for record in records:
            expected = _expected(record, rules, tables)
            if expected is None:
                assert record.termination is not GameTermination.TABLEBASE, record.reason
                continue
            ply, result, reason = expected
            assert (record.plies, str(record.result), record.reason) == (ply, result, reason), \
                record.spec.start_fen
            assert record.termination is GameTermination.TABLEBASE
            assert record.termination.pgn_tag == "adjudication"
            judged += 1
    assert judged >= 3, "too few games reached the tables to test anything"


# -- the peers --------------------------------------------------------------------------------


def _sf(name: str) -> tuple[str, ...]:
    return (f"cmd={STOCKFISH}", f"name={name}", "proto=uci", "option.Threads=1", "option.Hash=16")


_BOOK = (f"file={EPD}", "format=epd", "order=sequential")
_EACH = ("tc=inf", "depth=5")
WORKLOADS = [
    # At most four pieces: every such position has a DTZ table too, which cutechess-cli's
    # probe needs (the five-piece tables here are WDL only).
    Workload("tb-pieces4", (_sf("a"), _sf("b")), _EACH, _BOOK, len(POSITIONS),
             ("-tb", str(SYZYGY), "-tbpieces", "4", "-maxmoves", "100")),
    Workload("tb-ignore50", (_sf("a"), _sf("b")), _EACH, _BOOK, len(POSITIONS),
             ("-tb", str(SYZYGY), "-tbpieces", "4", "-tbignore50", "-maxmoves", "100")),
    # Only fastchess has -tbadjudicate; it probes WDL only, so the five-piece tables count.
    Workload("tb-win-loss", (_sf("a"), _sf("b")), _EACH, _BOOK, len(POSITIONS),
             ("-tb", str(SYZYGY), "-tbadjudicate", "WIN_LOSS", "-maxmoves", "100"),
             peers=("fastchess",)),
    Workload("tb-draw", (_sf("a"), _sf("b")), _EACH, _BOOK, len(POSITIONS),
             ("-tb", str(SYZYGY), "-tbadjudicate", "DRAW", "-maxmoves", "100"),
             peers=("fastchess",)),
]


def _runs(peer: str) -> bool:
    path = PEERS / peer
    if not path.exists():
        return False
    import subprocess

    return subprocess.run([str(path), "--version"], capture_output=True, timeout=30,
                          check=False).returncode == 0


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str], Path]:
    """Every workload played once by each usable peer and by the runner."""
    peers = [p for p in ("cutechess-cli", "fastchess") if _runs(p)]
    if not peers:
        pytest.skip(f"no peer runner runs from {PEERS} (cutechess-cli needs libqt6core6)")
    return play_all(WORKLOADS, ["runner", *peers], tmp_path_factory.mktemp("tbpeers"))


def _ending(comment: str) -> str:
    """The reason a tool wrote after the last move's evaluation."""
    return comment.rsplit(", ", 1)[-1] if ", " in comment else comment


@pytest.mark.timeout(300)
@pytest.mark.parametrize("workload", WORKLOADS, ids=[w.name for w in WORKLOADS])
def test_peers_adjudicate_the_same_games_on_the_same_ply(
        workload: Workload, played: dict[tuple[str, str], Path]) -> None:
    """Same moves, same result, same words and Termination tag as each peer, game for game."""
    ours = read_games(played[(workload.name, "runner")], 0)
    assert len(ours) == 2 * workload.rounds
    assert any("SyzygyTB" in g.comment for g in ours.values())
    compared = 0
    for peer in workload.peers:
        if (workload.name, peer) not in played:
            continue
        theirs = read_games(played[(workload.name, peer)], 0)
        diff = differences(ours, theirs)
        assert not diff, f"{workload.name} vs {peer}:\n" + "\n".join(diff)
        for key, game in ours.items():
            # A game judged before any move (fastchess probes the start too) has no move to
            # carry the words: fastchess writes none, we write them before the moves.
            if game.moves and ("SyzygyTB" in game.comment or "SyzygyTB" in theirs[key].comment):
                assert (_ending(game.comment), game.termination) == \
                    (_ending(theirs[key].comment), theirs[key].termination), key
        compared += 1
    if not compared:
        pytest.skip(f"none of {', '.join(workload.peers)} runs here")
