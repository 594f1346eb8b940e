"""Opening books on the files testers use (EPD, Chess960 EPD, PGN, Polyglot), with python-chess
as the oracle, plus order, seed, start and resumable cursors."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import chess
import chess.pgn
import chess.polyglot
import pytest

from runner.books.openings import (
    CursorState,
    EpdBook,
    OpeningBookError,
    OpeningCursor,
    PgnBook,
    open_book,
)
from runner.books.polyglot import PolyglotBook, PolyglotError, decode_move, probe
from runner.rules import Board
from tests.conftest import shared_file


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _sample(count: int, every: int) -> list[int]:
    return list(range(0, count, every)) + [count - 1]


# -- EPD books -------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "expected"), [("noob_3moves.epd", 150_932),
                                                ("UHO_4060_v3.epd", 242_201)])
def test_epd_books_agree_with_python_chess(name: str, expected: int) -> None:
    path = shared_file("books", name)
    lines = _lines(path)
    book = open_book(path)
    assert isinstance(book, EpdBook)
    assert len(book) == expected == len(lines)
    for index in _sample(expected, 797):
        opening = book.opening(index)
        oracle = chess.Board(lines[index])
        assert opening.fen == oracle.fen()
        assert opening.moves == () and not opening.chess960
        assert opening.source == f"{path}:{index + 1}"


def test_chess960_epd_with_outer_rook_rights() -> None:
    path = shared_file("books", "3moves_FRC.epd")
    lines = _lines(path)
    book = open_book(path)
    assert isinstance(book, EpdBook) and book.chess960  # decided from the first lines
    assert len(book) == 126_113
    assert not open_book(shared_file("books", "noob_3moves.epd")).chess960
    for index in _sample(len(lines), 1999):
        opening = book.opening(index)
        oracle = chess.Board(lines[index], chess960=True)
        assert opening.chess960
        board = Board(opening.fen, chess960=True)
        assert board.castling_rights == oracle.castling_rights
        assert sorted(move.uci() for move in board.legal_moves) == sorted(
            move.uci() for move in oracle.legal_moves
        )


def test_epd_operations_comments_blank_lines_and_crlf(tmp_path: Path) -> None:
    path = tmp_path / "ops.epd"
    path.write_bytes(
        b"# a comment line\r\n"
        b"\r\n"
        b'rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - hmvc 0; fmvn 1; id "e4";\r\n'
        b'r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - c0 "Nc6"; hmvc 2; fmvn 3;\r\n'
        b"   \r\n"
        b"4k3/8/8/8/8/8/8/4K2R w K - 7 40\r\n"
        b"\r\n"
    )
    book = EpdBook(path)
    assert len(book) == 3
    first, second, third = (book.opening(index) for index in range(3))
    assert first.name == "e4" and first.fen.endswith(" b KQkq - 0 1")
    assert second.name == "Nc6" and second.fen.endswith(" w KQkq - 2 3")
    assert third.fen == "4k3/8/8/8/8/8/8/4K2R w K - 7 40"
    assert [first.source, second.source, third.source] == [f"{path}:3", f"{path}:4", f"{path}:6"]
    with pytest.raises(IndexError):
        book.opening(3)


def test_epd_groups_agree_with_the_full_pattern() -> None:
    """The fast scan of an EPD book's groups (issue 38's start-up) finds exactly the group
    starts the full pattern does, on books with and without blank, comment, indented and CRLF
    lines, with and without a last newline, around the 64-entry group size."""
    from runner.books import openings

    pool = [b"8/8/8/8/8/8/8/K1k5 w - -", b"8/8/8/8/8/8/8/K1k5 b - - 0 1\r", b"", b"   ",
            b"\t# note", b"# comment", b"  8/8/8/8/8/8/8/K1k5 w - -", b"\r", b"\x0b", b"x"]
    rng = random.Random(38)
    texts = [b"", b"\n", b"x", b"x\n" * 64, b"x\n" * 128, b"x\n" * 129 + b"x", b"x\n" * 63 + b"\n"]
    for _ in range(300):
        clean_run = [pool[0]] * rng.choice([0, 1, 63, 64, 65, 127, 128, 130])
        lines = clean_run + [rng.choice(pool) for _ in range(rng.randrange(0, 140))]
        if rng.random() < 0.5:
            lines = [rng.choice(pool[:2]) for _ in range(rng.randrange(1, 200))]
        texts.append(b"\n".join(lines) + (b"\n" if rng.random() < 0.5 else b""))
    for text in texts:
        expected = [match.start() for match in openings._EPD_GROUP.finditer(text)]
        assert list(openings._epd_groups(text)) == expected, text


def test_bad_epd_line_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.epd"
    good = "4k3/8/8/8/8/8/8/4K3 w - - 0 1"
    path.write_text(f"{good}\n{good}\nnot a position at all\n{good}\n8/8/8 w - -\n")
    book = EpdBook(path)
    assert len(book) == 5
    with pytest.raises(OpeningBookError, match=rf"{path}:3: bad position 'not a position"):
        book.opening(2)
    with pytest.raises(OpeningBookError, match=rf"{path}:5: bad position"):
        book.opening(4)
    assert book.opening(3).fen == good
    cursor = OpeningCursor(book, start=2)
    with pytest.raises(OpeningBookError, match=":3: "):
        cursor.next()
    assert cursor.next().index == 3  # the bad entry was passed over


def test_missing_and_empty_books(tmp_path: Path) -> None:
    with pytest.raises(OpeningBookError, match="no such book file"):
        open_book(tmp_path / "absent.epd")
    empty = tmp_path / "empty.epd"
    empty.write_text("")
    book = open_book(empty)
    assert len(book) == 0
    with pytest.raises(OpeningBookError, match="empty"):
        OpeningCursor(book).next()
    with pytest.raises(OpeningBookError, match="empty"):
        OpeningCursor(book, order="random").next()


# -- PGN books -------------------------------------------------------------------------------


def test_pgn_book_first_plies_agree_with_python_chess() -> None:
    path = shared_file("books", "8moves_v3.pgn")
    book = open_book(path, plies=8)
    assert isinstance(book, PgnBook)
    assert len(book) == 34_700
    data = path.read_bytes()
    line_starts = [0] + [index + 1 for index, byte in enumerate(data) if byte == 10]
    for index in _sample(len(book), 331):
        opening = book.opening(index)
        line = int(opening.source.rsplit(":", 1)[1])
        oracle = chess.pgn.read_game(io.StringIO(data[line_starts[line - 1]:].decode()))
        assert oracle is not None
        expected = [move.uci() for move in oracle.mainline_moves()][:8]
        assert list(opening.moves) == expected and len(expected) == 8
        assert opening.fen == chess.STARTING_FEN
    whole = open_book(path).opening(0)
    assert len(whole.moves) == 16  # no plies limit: the whole game


def test_pgn_book_errors_and_short_games(tmp_path: Path) -> None:
    path = tmp_path / "book.pgn"
    path.write_text(
        '[Event "a"]\n\n1. e4 e5 2. Nf3 *\n\n'
        '[Event "b"]\n\n1. d4 Ke7 *\n\n'
        '[Event "c"]\n[FEN "4k3/8/8/8/8/8/8/4K2R w K - 0 1"]\n[SetUp "1"]\n\n1. O-O Kd7 *\n'
    )
    book = PgnBook(path, plies=2)
    assert len(book) == 3
    assert book.opening(0).moves == ("e2e4", "e7e5")
    with pytest.raises(OpeningBookError, match=rf"{path}:7: illegal move at 'Ke7'"):
        book.opening(1)
    assert PgnBook(path, plies=1).opening(1).moves == ("d2d4",)
    third = book.opening(2)
    assert third.fen == "4k3/8/8/8/8/8/8/4K2R w K - 0 1" and third.moves == ("e1g1", "e8d7")


# -- cursors ---------------------------------------------------------------------------------


@pytest.fixture
def seven(tmp_path: Path) -> EpdBook:
    """A book of seven distinct positions (white king on a1 ... g1)."""
    path = tmp_path / "seven.epd"
    path.write_text("".join(f"4k3/8/8/8/8/8/8/{'' if i == 0 else i}K{7 - i if i < 7 else ''} w - -\n"
                            for i in range(7)))
    return EpdBook(path)


def test_sequential_order_start_and_wrap(seven: EpdBook) -> None:
    cursor = OpeningCursor(seven, start=5)
    assert [cursor.next().index for _ in range(5)] == [5, 6, 0, 1, 2]
    assert cursor.state == CursorState("sequential", 0, 5, 5)


def test_random_order_is_a_seeded_permutation_per_cycle(seven: EpdBook) -> None:
    cursor = OpeningCursor(seven, order="random", seed=11)
    drawn = [cursor.next().index for _ in range(21)]
    for cycle in range(3):
        assert sorted(drawn[cycle * 7:(cycle + 1) * 7]) == list(range(7))
    again = OpeningCursor(seven, order="random", seed=11)
    assert [again.next().index for _ in range(21)] == drawn
    others = {tuple(OpeningCursor(seven, order="random", seed=seed).next().index
                    for _ in range(1)) for seed in range(20)}
    assert len(others) > 1
    late = OpeningCursor(seven, order="random", seed=11, start=9)
    assert [late.next().index for _ in range(5)] == drawn[9:14]


@pytest.mark.parametrize("order", ["sequential", "random"])
def test_cursor_state_survives_a_restart(order: str) -> None:
    book = open_book(shared_file("books", "UHO_4060_v3.epd"))
    cursor = OpeningCursor(book, order=order, seed=2024, start=3)
    first_part = [cursor.next().fen for _ in range(25)]
    saved = json.dumps(cursor.state.to_dict())
    expected = [cursor.next().fen for _ in range(25)]
    resumed = OpeningCursor.restore(open_book(book.path), CursorState.from_dict(json.loads(saved)))
    assert [resumed.next().fen for _ in range(25)] == expected
    assert len(set(first_part + expected)) == 50


@pytest.mark.parametrize("name", ["UHO_4060_v3.epd", "8moves_v3.pgn"])
@pytest.mark.parametrize("order", ["sequential", "random"])
def test_first_opening_is_served_fast_with_little_memory(name: str, order: str) -> None:
    path = shared_file("books", name)
    started = time.process_time()  # CPU time: other processes' load does not count
    opening = OpeningCursor(open_book(path, plies=8), order=order, seed=7).next()
    spent = time.process_time() - started
    assert opening.fen
    assert spent < 0.5, f"first opening took {spent:.3f}s of CPU"
    tracemalloc.start()  # a second run for memory: tracing slows allocation down
    again = OpeningCursor(open_book(path, plies=8), order=order, seed=7).next()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert again == opening
    assert peak < 2_000_000, f"peak Python memory {peak} bytes"


# -- Polyglot --------------------------------------------------------------------------------


def test_polyglot_agrees_with_python_chess_on_thousands_of_positions() -> None:
    path = shared_file("books", "performance.bin")
    rng = random.Random(20261122)
    with PolyglotBook(path) as ours, chess.polyglot.open_reader(path) as theirs:
        assert len(ours) == 92_954
        probed = with_moves = castles = 0
        while probed < 3000:
            oracle = chess.Board()
            for _ in range(40):
                board = Board(oracle.fen())
                expected = [(e.move.uci(), e.weight, e.learn) for e in theirs.find_all(oracle)]
                found = [(e.move.uci(), e.weight, e.learn) for e in ours.entries(board)]
                assert found == expected, oracle.fen()
                probed += 1
                if not expected:
                    break
                with_moves += 1
                castles += any(oracle.is_castling(chess.Move.from_uci(u)) for u, _, _ in expected)
                seed = rng.randrange(1 << 32)
                pick = ours.choose(board, rng=random.Random(seed))
                assert pick is not None
                assert pick.move.uci() == theirs.weighted_choice(
                    oracle, random=random.Random(seed)).move.uci()
                best = ours.choose(board, best_only=True)
                assert best is not None and best.move.uci() == theirs.find(oracle).move.uci()
                oracle.push(chess.Move.from_uci(pick.move.uci()))
        assert with_moves > 1000 and castles > 10


def test_polyglot_line_bookdepth_and_castling_decode() -> None:
    path = shared_file("books", "performance.bin")
    with PolyglotBook(path) as book:
        board = Board()
        line = book.line(board, depth=6, rng=random.Random(3))
        assert len(line) == 6 and board.fen() == chess.STARTING_FEN
        for move in line:
            assert move in board.legal_moves
            board.push(move)
        assert book.line(Board(), depth=0) == []
        raw_castle = [raw for raw in (book.raw_entry(i) for i in range(len(book)))
                      if raw.raw_move & 0xFFF == (4 << 6 | 7)]
        assert raw_castle and decode_move(raw_castle[0].raw_move).uci() == "e1h1"
    trap = shared_file("books", "lasker-trap.bin")
    with PolyglotBook(trap) as small:
        assert len(small) == 7


def test_bad_polyglot_file_and_probe_cli(tmp_path: Path) -> None:
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"\x00" * 17)
    with pytest.raises(PolyglotError, match="not a multiple of 16"):
        PolyglotBook(bad)
    book = shared_file("books", "performance.bin")
    lines = probe(book, "startpos")
    assert [line.uci for line in lines] == ["e2e4", "d2d4", "c2c4"]
    assert sum(line.share for line in lines) == pytest.approx(1.0)
    run = subprocess.run([sys.executable, "-m", "runner", "book", "probe", str(book)],
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0 and run.stdout.split()[:2] == ["e4", "e2e4"]
    run = subprocess.run([sys.executable, "-m", "runner", "book", "probe", str(bad)],
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 2 and "not a multiple of 16" in run.stderr


def test_pgn_book_index_ignores_bracket_lines_inside_comments(tmp_path: Path) -> None:
    path = tmp_path / "clock.pgn"
    path.write_text(
        '[Event "a"]\n\n1. e4 {thinking\n[%clk 0:01:00]} e5 *\n\n'
        '[Event "b"]\n\n[Site "blank line in the tags"]\n1. d4 *\n'
    )
    book = PgnBook(path)
    assert len(book) == 2
    assert [book.opening(index).moves for index in range(2)] == [("e2e4", "e7e5"), ("d2d4",)]


def _shuffle_movetext(plies: int, per_line: int | None = None) -> str:
    """Legal movetext of `plies` knight shuffles, on one line or `per_line` moves a line."""
    cycle = ["Nf3", "Nf6", "Ng1", "Ng8"]
    moves = [f"{i // 2 + 1}. {cycle[i % 4]}" if i % 2 == 0 else cycle[i % 4] for i in range(plies)]
    if per_line is None:
        return " ".join(moves)
    return "\n".join(" ".join(moves[i:i + per_line]) for i in range(0, plies, per_line))


def test_a_book_line_longer_than_the_bound_is_an_error_naming_file_and_line(tmp_path) -> None:
    # Issue 31: a one-game book of 2.5 million plies on one line took 3 GB and crashed the
    # engine. The line is refused unread past the bound, with its file and line.
    from runner.books.openings import BOOK_LINE_BYTES

    book = tmp_path / "huge.pgn"
    book.write_text('[Event "short"]\n\n1. e4 e5 *\n\n[Event "huge"]\n\n'
                    + _shuffle_movetext(2_500_000) + " *\n")
    assert book.stat().st_size > 10 * BOOK_LINE_BYTES
    opened = PgnBook(book)
    assert opened.opening(0).moves == ("e2e4", "e7e5")
    with pytest.raises(OpeningBookError,
                       match=rf"huge\.pgn:7: line longer than {BOOK_LINE_BYTES} bytes"):
        opened.opening(1)
    epd = tmp_path / "huge.epd"
    epd.write_text("4k3/8/8/8/8/8/8/4K2R w K - 0 1\n4k3/8/8/8/8/8/8/4K2R w K - 0 1 c0 \""
                   + "x" * (BOOK_LINE_BYTES + 10) + "\";\n")
    assert EpdBook(epd).opening(0).fen.startswith("4k3/")
    with pytest.raises(OpeningBookError, match=r"huge\.epd:2: line longer than"):
        EpdBook(epd).opening(1)


def test_pgn_openings_are_capped_by_default(tmp_path) -> None:
    from runner.books.openings import DEFAULT_PLIES

    book = tmp_path / "long.pgn"
    book.write_text('[Event "long"]\n\n' + _shuffle_movetext(DEFAULT_PLIES + 200, 8) + " *\n")
    assert len(PgnBook(book).opening(0).moves) == DEFAULT_PLIES
    assert len(PgnBook(book, plies=DEFAULT_PLIES + 100).opening(0).moves) == DEFAULT_PLIES + 100
    assert len(PgnBook(book, plies=4).opening(0).moves) == 4
