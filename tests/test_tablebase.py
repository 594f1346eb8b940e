"""Our Syzygy probe (runner.tablebase) against python-chess's, on every table in ../shared/data/syzygy.

For every table present, random legal positions of its material (both sides to move, some
with a capture available, some with an en passant capture, fifty-move counters 0..99) must
get the same WDL and DTZ from both probes. python-chess is the oracle only. The default
sample keeps the file under a minute here; ``RUNNER_TB_SWEEP=N`` (N positions per table and
kind) runs the larger sweep marked slow.
"""

from __future__ import annotations

import os
import random
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import SHARED_DATA

from runner.rules import Board
from runner.tablebase import Tablebase, TablebaseError, normalize_name, table_names

chess = pytest.importorskip("chess")
syzygy = pytest.importorskip("chess.syzygy")

TB_DIR = SHARED_DATA / "syzygy"
NEEDS_DATA = pytest.mark.skipif(
    not TB_DIR.is_dir(), reason=f"Syzygy tables absent: expected {TB_DIR} (../shared/data/syzygy)")
NAMES = sorted({p.stem for p in TB_DIR.glob("*.rtbw")}, key=lambda n: (len(n), n)) if TB_DIR.is_dir() else []
PER_KIND = 25
LETTER = {"K": 6, "Q": 5, "R": 4, "B": 3, "N": 2, "P": 1}


@pytest.fixture(scope="module")
def ours() -> Iterator[Tablebase]:
    """Our tablebase over the shared tables."""
    with Tablebase([TB_DIR]) as tb:
        yield tb


@pytest.fixture(scope="module")
def oracle() -> Iterator[object]:
    """python-chess's tablebase over the same tables."""
    tb = syzygy.open_tablebase(str(TB_DIR))
    yield tb
    tb.close()


def random_position(name: str, rng: random.Random, *, kind: str) -> object | None:
    """A random legal python-chess board of a table's material, or None when `kind` asked
    for something this material cannot have. kind: "any", "capture" (a legal capture on the
    board), "ep" (a legal en passant capture)."""
    white, black = name.split("v")
    if kind == "ep" and not ("P" in white and "P" in black):
        return None
    for _ in range(5000):
        board = chess.Board(None)
        board.turn = rng.random() < 0.5
        used: set[int] = set()
        pieces = [(c, chess.WHITE) for c in white] + [(c, chess.BLACK) for c in black]
        if kind == "ep":
            # The side not to move has just pushed a pawn two squares, beside one of ours.
            them = not board.turn
            rank = 3 if them == chess.WHITE else 4
            file = rng.randrange(8)
            beside = file + rng.choice([-1, 1])
            if not 0 <= beside < 8:
                continue
            pushed = chess.square(file, rank)
            board.set_piece_at(pushed, chess.Piece(chess.PAWN, them))
            board.set_piece_at(chess.square(beside, rank), chess.Piece(chess.PAWN, board.turn))
            used |= {pushed, chess.square(beside, rank)}
            pieces.remove(("P", them))
            pieces.remove(("P", board.turn))
            step = -8 if them == chess.WHITE else 8
            if board.piece_at(pushed + step) or board.piece_at(pushed + 2 * step):
                continue
            used |= {pushed + step, pushed + 2 * step}
            board.ep_square = pushed + step
        for letter, color in pieces:
            while True:
                sq = rng.randrange(64)
                if sq in used or (letter == "P" and chess.square_rank(sq) in (0, 7)):
                    continue
                break
            used.add(sq)
            board.set_piece_at(sq, chess.Piece(LETTER[letter], color))
        board.halfmove_clock = rng.choice([0, 0, 1, 37, 99])
        if not board.is_valid():
            continue
        if kind == "capture" and not any(board.generate_legal_captures()):
            continue
        if kind == "ep" and not board.has_legal_en_passant():
            continue
        return board
    return None


def compare_table(name: str, ours: Tablebase, oracle: object, per_kind: int, seed: int) -> dict[str, int]:
    """Probe random positions of one table with both; every WDL and DTZ must agree."""
    rng = random.Random(f"{name}-{seed}")
    counts = {"any": 0, "capture": 0, "ep": 0, "dtz": 0, "black": 0, "white": 0}
    with_dtz = ours.has_dtz(name)
    for kind in ("any", "capture", "ep"):
        for _ in range(per_kind):
            theirs = random_position(name, rng, kind=kind)
            if theirs is None:
                break
            fen = theirs.fen(en_passant="fen")
            board = Board(fen)
            assert ours.probe_wdl(board) == oracle.probe_wdl(theirs), fen
            assert board.fen(en_passant="fen") == fen, "the probe must leave the board as it was"
            if with_dtz:
                assert ours.probe_dtz(board) == oracle.probe_dtz(theirs), fen
                counts["dtz"] += 1
            counts[kind] += 1
            counts["white" if theirs.turn else "black"] += 1
    return counts


@NEEDS_DATA
@pytest.mark.parametrize("name", NAMES)
def test_every_table_matches_python_chess(name: str, ours: Tablebase, oracle: object) -> None:
    """WDL and DTZ equal python-chess's on random positions of each table, of each kind."""
    counts = compare_table(name, ours, oracle, PER_KIND, seed=1)
    assert counts["any"] == PER_KIND and counts["capture"] == PER_KIND
    assert counts["white"] and counts["black"]
    white, black = name.split("v")
    if "P" in white and "P" in black:
        assert counts["ep"] == PER_KIND
    if ours.has_dtz(name):
        assert counts["dtz"] == counts["any"] + counts["capture"] + counts["ep"]


@NEEDS_DATA
@pytest.mark.slow
@pytest.mark.skipif("RUNNER_TB_SWEEP" not in os.environ, reason="larger sweep: set RUNNER_TB_SWEEP=N")
def test_sweep(ours: Tablebase, oracle: object) -> None:
    """The larger sweep: RUNNER_TB_SWEEP positions per table and kind, another seed."""
    per_kind = int(os.environ["RUNNER_TB_SWEEP"])
    for name in NAMES:
        counts = compare_table(name, ours, oracle, per_kind, seed=2)
        assert counts["any"] == per_kind


# Hand-picked positions: values checked against python-chess, each a case of the format.
CASES = [
    ("8/2K5/4B3/3N4/8/8/4k3/8 b - - 0 1", -2, -53),  # KBNvK, the DTZ side not stored
    ("8/8/8/8/8/8/2K5/k1Q5 b - - 0 1", -2, -2),  # KQvK: black to move, mirrored colours
    ("4k3/8/8/8/8/8/8/4K2R w - - 0 1", 2, 21),  # KRvK
    ("8/8/8/4k3/8/8/3PK3/8 w - - 0 1", 2, 11),  # KPvK pawn table
    ("3K4/5k2/8/4pP2/8/8/8/8 w - e6 1 1", 0, 0),  # KPvKP: en passant saves the draw
    ("4K3/8/8/2pP4/8/8/k7/8 w - c6 99 1", 2, 1),  # KPvKP: en passant wins
    ("8/8/8/8/8/8/8/K1k5 w - - 0 1", 0, 0),  # bare kings
]


@NEEDS_DATA
@pytest.mark.parametrize(("fen", "wdl", "dtz"), CASES)
def test_known_positions(fen: str, wdl: int, dtz: int, ours: Tablebase, oracle: object) -> None:
    """Fixed positions give python-chess's values."""
    board = Board(fen)
    theirs = chess.Board(fen)
    assert (oracle.probe_wdl(theirs), oracle.probe_dtz(theirs)) == (wdl, dtz)
    assert (ours.probe_wdl(board), ours.probe_dtz(board)) == (wdl, dtz)


# KRBvKR is the one table here that stores fifty-move values (a search of its positions found
# these); a cursed win and, one move on, a blessed loss.
CURSED = "8/4RK1k/7B/8/8/8/1r6/8 w - - 0 1"
BLESSED = "8/4RK1k/8/8/5B2/8/1r6/8 b - - 1 1"


@NEEDS_DATA
def test_cursed_win_and_blessed_loss(ours: Tablebase, oracle: object) -> None:
    """The fifty-move rule's values 1 and -1, as stored and with the colours swapped."""
    if "KRBvKR" not in NAMES:
        pytest.skip("KRBvKR.rtbw is not among the shared tables")
    for fen, value in ((CURSED, 1), (BLESSED, -1)):
        theirs = chess.Board(fen)
        for board in (theirs, theirs.mirror()):
            assert oracle.probe_wdl(board) == value
            assert ours.probe_wdl(Board(board.fen())) == value, board.fen()


@NEEDS_DATA
def test_best_move_keeps_the_result(ours: Tablebase) -> None:
    """The best move by DTZ keeps the WDL result: after it, the opponent stands as badly."""
    rng = random.Random(7)
    for name in ("KQvK", "KRvK", "KPvK", "KBNvK", "KRvKN", "KPvKP"):
        for _ in range(20):
            theirs = random_position(name, rng, kind="any")
            board = Board(theirs.fen())
            wdl = ours.probe_wdl(board)
            move = ours.best_move(board)
            if not list(board.legal_moves):
                assert move is None
                continue
            assert move is not None and move in board.legal_moves
            board.push(move)
            after = ours.probe_wdl(board)
            assert wdl is not None and after is not None
            sign = (wdl > 0) - (wdl < 0)
            assert -((after > 0) - (after < 0)) == sign, (theirs.fen(), move.uci())


@NEEDS_DATA
def test_best_move_mates(ours: Tablebase) -> None:
    """A mate in one is the best move (DTZ 1)."""
    board = Board("k7/8/1K6/8/8/8/7Q/8 w - - 0 1")
    move = ours.best_move(board)
    assert move is not None
    board.push(move)
    assert board.is_checkmate()


def test_missing_tables_are_unknown(tmp_path: Path) -> None:
    """No tables, too many pieces, castling rights: None, never an error."""
    with Tablebase([tmp_path]) as tb:
        assert tb.max_pieces == 0 and tb.complete_pieces == 2 and tb.tables() == []
        assert tb.probe_wdl(Board("8/8/8/8/8/8/2K5/k1Q5 b - - 0 1")) is None
        assert tb.probe_dtz(Board("8/8/8/8/8/8/2K5/k1Q5 b - - 0 1")) is None
        assert tb.best_move(Board("8/8/8/8/8/8/2K5/k1Q5 b - - 0 1")) is None


@NEEDS_DATA
def test_unknown_cases_with_tables(ours: Tablebase) -> None:
    """Castling rights, more pieces than any table, a table not present: None."""
    assert ours.probe_wdl(Board("4k3/8/8/8/8/8/8/4K2R w K - 0 1")) is None
    assert ours.probe_wdl(Board()) is None
    assert ours.pieces(Board()) == 32
    # Only a few 5-piece tables are present: KQQvKQ (say) is not (and no capture here
    # resolves the position into a 4-piece table).
    board = Board("3qk3/8/8/8/8/8/8/QQ2K3 w - - 0 1")
    if "KQQvKQ" not in ours.tables():
        assert ours.probe_wdl(board) is None and ours.probe_dtz(board) is None


@NEEDS_DATA
def test_close_unmaps_and_a_later_probe_maps_again() -> None:
    """close() (and leaving the with block) unmaps the files; probing again reopens them."""
    board = Board("8/8/8/8/8/8/2K5/k1Q5 b - - 0 1")
    with Tablebase(str(TB_DIR)) as tb:
        assert tb.probe_wdl(board) == -2
        table = tb._wdl_names["KQvK"]
        assert table.mm is not None
    assert table.mm is None
    assert tb.probe_wdl(board) == -2 and table.mm is not None
    tb.close()


def test_missing_directory_is_an_error(tmp_path: Path) -> None:
    """A directory that does not exist is named in the error."""
    missing = tmp_path / "nowhere"
    with pytest.raises(TablebaseError, match="nowhere"):
        Tablebase([missing])


@NEEDS_DATA
def test_listing_and_several_directories(tmp_path: Path) -> None:
    """Tables are found across ':'-separated directories; counts and completeness."""
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    for name in table_names(3):
        for ext in ("rtbw", "rtbz"):
            (one / f"{name}.{ext}").symlink_to(TB_DIR / f"{name}.{ext}")
    (two / "KRvKN.rtbw").symlink_to(TB_DIR / "KRvKN.rtbw")
    (two / "notes.txt").write_text("not a table")
    tb = Tablebase.from_paths(f"{one}{os.pathsep}{two}")
    try:
        assert tb.complete_pieces == 3
        assert tb.max_pieces == 4
        assert tb.tables() == ["KBvK", "KNvK", "KPvK", "KQvK", "KRvK", "KRvKN"]
        assert tb.has_wdl("KRvKN") and not tb.has_dtz("KRvKN")
        assert tb.probe_wdl(Board("8/8/8/8/8/8/2K5/k1Q5 b - - 0 1")) == -2
        # WDL found, DTZ not: DTZ is unknown.
        krkn = Board("7n/8/8/R7/8/8/K6k/8 w - - 37 1")
        assert tb.probe_wdl(krkn) == 2 and tb.probe_dtz(krkn) is None
    finally:
        tb.close()
    full = Tablebase([TB_DIR])
    assert full.complete_pieces == 4 and full.max_pieces == 5
    assert set(table_names(4)) <= set(full.tables())


def test_table_names() -> None:
    """Every table name of 3 and 4 pieces, named as the files are."""
    assert table_names(3) == ["KBvK", "KNvK", "KPvK", "KQvK", "KRvK"]
    assert len(table_names(4)) == 30 and "KRvKN" in table_names(4) and "KNvKR" not in table_names(4)
    assert normalize_name("KP", "KQ") == "KQvKP"
    assert normalize_name("K", "KRP") == "KRPvK"


@NEEDS_DATA
def test_corrupt_file_is_a_clear_error(tmp_path: Path) -> None:
    """A truncated or garbled file raises TablebaseError naming it; a missing one does not."""
    shutil.copy(TB_DIR / "KQvK.rtbw", tmp_path / "KQvK.rtbw")
    with open(tmp_path / "KQvK.rtbw", "r+b") as f:
        f.write(b"\0\0\0\0")
    (tmp_path / "KRvK.rtbw").write_bytes(b"\x71\xe8\x23\x5d" + b"\0" * 76)
    with Tablebase([tmp_path]) as tb:
        with pytest.raises(TablebaseError, match="KQvK.rtbw"):
            tb.probe_wdl(Board("8/8/8/8/8/8/2K5/k1Q5 b - - 0 1"))
        with pytest.raises(TablebaseError, match="KRvK.rtbw"):
            tb.probe_wdl(Board("4k3/8/8/8/8/8/8/4K2R w - - 0 1"))
        assert tb.probe_wdl(Board("4k3/8/8/8/8/8/8/4K2B w - - 0 1")) is None


def test_index_constants_match_the_reference() -> None:
    """Our generated index tables equal python-chess's written-out ones."""
    from runner.tablebase import _index as ours_format

    for name in ("TRIANGLE", "LOWER", "DIAG", "FLAP", "PTWIST", "INVFLAP", "KK_IDX"):
        assert getattr(ours_format, name) == getattr(syzygy, name), name
    for k in range(5):
        assert ours_format.PAWNIDX[k] == syzygy.PAWNIDX[k]
        assert ours_format.PFACTOR[k] == syzygy.PFACTOR[k]
