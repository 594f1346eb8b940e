"""The PGN reader against real files (python-chess as the oracle) and against broken inputs."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import chess
import chess.pgn
import pytest

from runner.pgn.reader import PgnGame, check_pgn, needs_chess960, parse_games, read_games
from runner.pgn.splitter import TokenKind, split_games, unescape_tag_value
from tests.conftest import SHARED_DATA, shared_cases, shared_file

PGN_DIR = SHARED_DATA / "pgn"
REAL_FILES = sorted(PGN_DIR.glob("*.pgn")) if PGN_DIR.is_dir() else []


def _python_chess_games(text: str) -> list[chess.pgn.Game]:
    handle = io.StringIO(text.lstrip("\ufeff"))
    games = []
    while (game := chess.pgn.read_game(handle)) is not None:
        games.append(game)
    return games


def _assert_same_game(ours: PgnGame, theirs: chess.pgn.Game) -> None:
    """Same tags, same main line, same final position as python-chess."""
    expected_tags = {name: unescape_tag_value(value) for name, value in theirs.headers.items()}
    roster = {name: value for name, value in expected_tags.items() if name in chess.pgn.TAG_ROSTER}
    assert {**roster, **ours.tags} == expected_tags
    assert ours.uci_moves == [move.uci() for move in theirs.mainline_moves()]
    assert ours.final_fen == theirs.end().board().fen()
    assert ours.start_fen == theirs.board().fen()
    assert ours.chess960 == theirs.board().chess960


def test_the_shared_pgn_corpus_is_present() -> None:
    shared_file("pgn", "kasparov-deep-blue-1997.pgn")
    assert len(REAL_FILES) >= 9


@pytest.mark.parametrize("path", shared_cases(REAL_FILES, PGN_DIR, ids=lambda path: path.name))
def test_real_files_read_game_for_game_like_python_chess(path: Path) -> None:
    ours = list(read_games(path))
    theirs = _python_chess_games(path.read_text(encoding="utf-8-sig"))
    assert len(ours) == len(theirs) > 0
    for game, oracle in zip(ours, theirs, strict=True):
        assert game.ok, game.error
        _assert_same_game(game, oracle)


def test_eight_move_book_sample_reads_like_python_chess() -> None:
    """Every 97th game of the 34,700-game book, read at its byte offset by both readers."""
    path = shared_file("books", "8moves_v3.pgn")
    with open(path, "rb") as stream:
        raws = [raw for index, raw in enumerate(split_games(stream, source=str(path)))
                if index % 97 == 0]
    assert len(raws) > 300
    with open(path, encoding="utf-8", newline="") as handle:
        for raw in raws:
            handle.seek(raw.offset)
            oracle = chess.pgn.read_game(handle)
            assert oracle is not None
            game = next(read_games(path, offset=raw.offset, line=raw.line, limit=1))
            assert game.line == raw.line
            _assert_same_game(game, oracle)


def test_offsets_and_lines_locate_each_game() -> None:
    path = shared_file("pgn", "kasparov-deep-blue-1997.pgn")
    games = list(read_games(path))
    data = path.read_bytes()
    lines = data.split(b"\n")
    for game in games:
        assert data[game.offset:].startswith(b"[Event ")
        assert lines[game.line - 1].startswith(b"[Event ")
    assert [game.offset for game in games][:3] == [0, 717, 1436]


def test_utf8_bom_and_blank_line_inside_tags() -> None:
    bom = list(read_games(shared_file("pgn", "utf8-bom.pgn")))
    assert [game.tags["Event"] for game in bom] == ["A", "B"]
    empty_line = list(read_games(shared_file("pgn", "chessbase-empty-line.pgn")))
    assert len(empty_line) == 1
    assert empty_line[0].tags["Event"] == "AlphaZero vs. Stockfish"
    assert empty_line[0].tags["Date"] == "2017.12.04"


def test_null_move_is_reported_and_the_game_goes_on() -> None:
    (game,) = read_games(shared_file("pgn", "anastasian-lewis.pgn"))
    assert game.ok
    nulls = [move for move in game.moves if move.is_null]
    assert len(nulls) == 1 and nulls[0].san == "--"
    assert any("null move" in str(notice) and ":20:" in str(notice) for notice in game.notices)
    (dashes,) = parse_games("1. e4 -- 2. d4 *")
    assert dashes.uci_moves == ["e2e4", "0000", "d2d4"]


def test_comments_nags_and_variations() -> None:
    text = (
        "[Event \"x\"]\n\n"
        "{start} 1. e4 $1 {a brace\ncomment} e5!? (1... c5 {sicilian} 2. Nf3 (2. c3) d6) "
        "; rest of line\n2. Nf3 ?? Nc6 $14 1-0\n"
    )
    (game,) = parse_games(text)
    assert game.ok and game.result == "1-0"
    assert game.starting_comment == "start"
    assert game.uci_moves == ["e2e4", "e7e5", "g1f3", "b8c6"]
    e4, e5, nf3, nc6 = game.moves
    assert e4.nags == [1] and e4.comment == "a brace comment"
    assert e5.nags == [5] and e5.variations == [] and e5.comment == "rest of line"
    assert nf3.nags == [4] and nc6.nags == [14]
    (kept,) = parse_games(text, keep_variations=True)
    (sicilian,) = kept.moves[1].variations
    assert [move.san for move in sicilian] == ["c5", "Nf3", "d6"]
    assert sicilian[0].comment == "sicilian"
    assert [move.san for move in sicilian[1].variations[0]] == ["c3"]
    assert kept.uci_moves == game.uci_moves


def test_coordinate_and_long_algebraic_movetext() -> None:
    (game,) = parse_games("e2e4 e7e5 g1f3 b8c6 f1c4 g8f6 e1g1 *")
    assert [move.san for move in game.moves][-1] == "O-O"
    (long_form,) = parse_games(
        "1. e2-e4 e7-e5 2. Ng1-f3 Nb8-c6 3. Bf1-b5 a7-a6 4. Bb5xc6 d7xc6 5. 0-0 *"
    )
    assert long_form.ok
    assert [move.san for move in long_form.moves] == [
        "e4", "e5", "Nf3", "Nc6", "Bb5", "a6", "Bxc6", "dxc6", "O-O",
    ]
    (wrong_piece,) = parse_games("1. Ne2-e4 *")
    assert wrong_piece.error is not None and wrong_piece.error.message == "illegal move"


def test_missing_result_is_a_notice_not_an_error() -> None:
    (game,) = parse_games('[Event "x"]\n\n1. e4 e5 2. Nf3\n')
    assert game.ok and game.result == "*"
    assert [notice.message for notice in game.notices] == ["game ends without a result"]


def test_escaped_tag_values_are_unescaped() -> None:
    (game,) = parse_games('[White "Smith, \\"Bob\\" \\\\ Jr"]\n[Black "x"]\n\n*\n')
    assert game.tags["White"] == 'Smith, "Bob" \\ Jr'


def test_chess960_from_variant_tag_and_from_shredder_fen() -> None:
    fen = "1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w KQkq - 0 1"
    (tagged,) = parse_games(f'[Variant "Chess960"]\n[FEN "{fen}"]\n[SetUp "1"]\n\n1. O-O *\n')
    assert tagged.ok and tagged.chess960 and tagged.uci_moves == ["e1g1"]
    shredder = fen.replace("KQkq", "GBgb")
    (detected,) = parse_games(f'[FEN "{shredder}"]\n\n1. O-O-O O-O *\n')
    assert detected.ok and detected.chess960 and detected.uci_moves == ["e1b1", "e8g8"]


# -- broken inputs: each reported with file, line and token; the next game still loads -------

NEXT_GAME = '\n\n[Event "next"]\n\n1. d4 d5 *\n'


def _broken_then_next(text: str) -> tuple[PgnGame, PgnGame]:
    games = list(read_games(io.BytesIO(text.encode("latin-1") + NEXT_GAME.encode()),
                            name="broken.pgn"))
    assert len(games) == 2
    broken, following = games
    assert following.ok and following.tags["Event"] == "next"
    assert following.uci_moves == ["d2d4", "d7d5"]
    assert broken.error is not None
    return broken, following


@pytest.mark.parametrize(
    ("text", "line", "message", "token"),
    [
        ('[Event "cut"]\n\n1. e4 e5 2. Nf', 3, "not a move", "Nf"),
        ('[Event "illegal"]\n\n1. e4 e5\n2. Ke3 *', 4, "illegal move", "Ke3"),
        ('[Event "fen"]\n[FEN "8/8/8/8 w - - 0 1"]\n\n1. e4 *', 2, "bad FEN tag", "8/8/8/8 w - - 0 1"),
        ('[Event "comment"]\n\n1. e4 {never closed\n2. d4 d5', 3, "unterminated comment",
         "{never closed"),
        ('[Event "junk"]\n\n1. e4 \x00\x01\x9c\xff\x02 *', 3, "binary data", "\x00\x01"),
        ('[Event "trunc', 1, "malformed tag pair", '[Event "trunc'),
        ('[Event "ambiguous"]\n[FEN "4k3/8/8/8/8/8/4N3/4K2N w - - 0 1"]\n\n1. Ng3 *', 4,
         "ambiguous move", "Ng3"),
    ],
    ids=["truncated", "illegal", "bad-fen", "unterminated-comment", "binary-junk",
         "truncated-tag", "ambiguous"],
)
def test_broken_inputs_name_file_line_and_token(
    text: str, line: int, message: str, token: str
) -> None:
    broken, _ = _broken_then_next(text)
    error = broken.error
    assert error is not None
    assert error.source == "broken.pgn" and error.line == line
    assert message in error.message
    assert error.token.startswith(token)
    assert str(error).startswith(f"broken.pgn:{line}: ")


def test_binary_junk_between_games(tmp_path: Path) -> None:
    path = tmp_path / "junk.pgn"
    junk = bytes(range(256)) * 3
    path.write_bytes(b'[Event "one"]\n\n1. e4 *\n\n' + junk + b"\n\n" + NEXT_GAME.encode())
    games = list(read_games(path))
    assert [game.tags.get("Event") for game in games if game.ok] == ["one", "next"]
    assert any(not game.ok for game in games)
    report = check_pgn(path)
    assert report.games == len(games) and report.errors
    assert all(str(path) in str(error) for error in report.errors)


def test_long_lines_are_read_in_bounded_pieces(tmp_path: Path) -> None:
    path = tmp_path / "long.pgn"
    path.write_bytes(b"x" * (3 << 20) + b"\n\n" + NEXT_GAME.encode())
    games = list(read_games(path))
    assert len(games) == 2
    assert games[0].error is not None and games[0].error.line == 1
    assert len(str(games[0].error)) < 200
    assert games[1].ok and games[1].tags["Event"] == "next"
    assert games[1].line == 5


def test_splitter_tokens_keep_line_numbers() -> None:
    text = b'[Event "x"]\n\n1. e4 {two\nlines} e5 $3\n( 1... c5 ) 1/2-1/2\n'
    (raw,) = split_games(io.BytesIO(text), source="t")
    kinds = [(token.kind, token.text, token.line) for token in raw.tokens]
    assert kinds == [
        (TokenKind.WORD, "e4", 3),
        (TokenKind.COMMENT, "two lines", 3),
        (TokenKind.WORD, "e5", 4),
        (TokenKind.NAG, "$3", 4),
        (TokenKind.OPEN, "(", 5),
        (TokenKind.WORD, "c5", 5),
        (TokenKind.CLOSE, ")", 5),
        (TokenKind.RESULT, "1/2-1/2", 5),
    ]


@pytest.mark.parametrize(
    "fen",
    [
        "4k3/8/8/8/8/8/8/4K3 w K - 0 1",
        "r3k2r/8/8/8/8/8/8/R3K2R w HAha - 0 1",
        "1r2k1r1/8/8/8/8/8/8/1R2K1R1 w KQkq - 0 1",
        "1r2k1r1/8/8/8/8/8/8/1R2K1R1 w GBgb - 0 1",
        "rk5r/8/8/8/8/8/8/RK5R w KQkq - 0 1",
        "r3k1r1/8/8/8/8/8/8/R3K1R1 w Qk - 0 1",
        "r3k1rr/8/8/8/8/8/8/R3K1RR w KQkq - 0 1",
        chess.STARTING_FEN,
    ],
)
def test_needs_chess960_agrees_with_python_chess(fen: str) -> None:
    assert needs_chess960(fen) == chess.Board(fen).has_chess960_castling_rights()


@pytest.mark.timeout(60)
def test_pgn_check_command_exit_codes(tmp_path: Path) -> None:
    good = shared_file("pgn", "kasparov-deep-blue-1997.pgn")
    bad = tmp_path / "bad.pgn"
    bad.write_text('[Event "x"]\n\n1. e4 e5 2. Qxf7 *\n' + NEXT_GAME)
    ok = subprocess.run([sys.executable, "-m", "runner", "pgn", "check", str(good)],
                        capture_output=True, text=True, timeout=60, check=False)
    assert ok.returncode == 0 and f"{good}: 6 games, 0 broken" in ok.stdout
    broken = subprocess.run([sys.executable, "-m", "runner", "pgn", "check", str(good), str(bad)],
                            capture_output=True, text=True, timeout=60, check=False)
    assert broken.returncode == 1
    assert f"error: {bad}:3: illegal move at 'Qxf7'" in broken.stdout
    assert f"{bad}: 2 games, 1 broken" in broken.stdout
    missing = subprocess.run([sys.executable, "-m", "runner", "pgn", "check", "/no/such.pgn"],
                             capture_output=True, text=True, timeout=60, check=False)
    assert missing.returncode == 2 and "no such file" in missing.stderr
