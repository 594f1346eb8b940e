"""The PGN writer: export-format details, and round trips through our reader and python-chess."""

from __future__ import annotations

import io
from datetime import UTC, datetime, timedelta

import chess
import chess.pgn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from runner.pgn.reader import PgnGame, parse_games, parse_move_comment, read_games
from runner.pgn.splitter import unescape_tag_value
from runner.pgn.writer import (
    LINE_WIDTH,
    SEVEN_TAG_ROSTER,
    GameDescription,
    format_game,
    format_move_comment,
    format_score,
    time_control_tag,
)
from runner.rules import Board
from runner.types import MoveRecord
from tests.conftest import SHARED_DATA, shared_file


def _tag_lines(text: str) -> list[tuple[str, str]]:
    head = text.split("\n\n", 1)[0]
    pairs = []
    for line in head.splitlines():
        name, _, rest = line[1:-1].partition(" ")
        pairs.append((name, rest[1:-1]))
    return pairs


def _movetext_lines(text: str) -> list[str]:
    return text.split("\n\n", 1)[1].rstrip("\n").split("\n")


def test_seven_tag_roster_first_then_setup_variant_and_extras() -> None:
    start = datetime(2024, 5, 1, 12, 0, 0, 250000, tzinfo=UTC)
    fen = "bnrbkrqn/pppppppp/8/8/8/8/PPPPPPPP/BNRBKRQN w KQkq - 0 1"
    game = GameDescription(
        tags={"White": "A", "Black": "B", "Round": "3", "Opening": "x", "Event": "E"},
        moves=[MoveRecord("e4")], result="1/2-1/2", start_fen=fen, chess960=True,
        time_control=time_control_tag(60, 0.5), termination="adjudication",
        start_time=start, end_time=start + timedelta(minutes=2, seconds=5),
    )
    names = [name for name, _ in _tag_lines(format_game(game))]
    assert tuple(names[:7]) == SEVEN_TAG_ROSTER
    assert names[7:] == [
        "Variant", "SetUp", "FEN", "TimeControl", "Termination", "PlyCount",
        "GameStartTime", "GameEndTime", "GameDuration", "Opening",
    ]
    tags = dict(_tag_lines(format_game(game)))
    assert tags["Site"] == "?" and tags["Date"] == "2024.05.01" and tags["Result"] == "1/2-1/2"
    assert tags["Variant"] == "fischerandom" and tags["FEN"] == fen and tags["SetUp"] == "1"
    assert tags["TimeControl"] == "60+0.5" and tags["PlyCount"] == "1"
    assert tags["GameStartTime"] == "2024-05-01T12:00:00.250 UTC"
    assert tags["GameDuration"] == "00:02:05"


def test_standard_start_has_no_fen_and_unknown_date() -> None:
    tags = dict(_tag_lines(format_game(GameDescription())))
    assert "FEN" not in tags and "SetUp" not in tags and "Variant" not in tags
    assert tags["Date"] == "????.??.??" and tags["Result"] == "*"


def test_time_control_forms() -> None:
    assert time_control_tag(60) == "60"
    assert time_control_tag(60, 0.5) == "60+0.5"
    assert time_control_tag(0, 1) == "0+1"
    assert time_control_tag(60, moves=40) == "40/60"
    assert time_control_tag(7200, 30, moves=40) == "40/7200+30"


def test_tag_values_are_escaped_and_kept_on_one_line() -> None:
    text = format_game(GameDescription(tags={"White": 'Bob "the \\ Fish"\nline'}))
    assert '[White "Bob \\"the \\\\ Fish\\" line"]' in text
    (game,) = parse_games(text)
    assert game.tags["White"] == 'Bob "the \\ Fish" line'


def test_move_comments_in_cutechess_form() -> None:
    assert format_move_comment(MoveRecord("e4", score_cp=31, depth=12, time=0.5)) == "+0.31/12 0.50s"
    assert format_move_comment(MoveRecord("e4", score_cp=-5, depth=3, time=0.042)) == "-0.05/3 0.042s"
    assert format_move_comment(MoveRecord("e4", score_cp=0, depth=30, time=48)) == "0.00/30 48.0s"
    assert format_move_comment(MoveRecord("e4", mate=5, depth=20, time=125)) == "+M5/20 125s"
    assert format_score(None, -3) == "-M3"
    assert format_move_comment(MoveRecord("e4", book=True, time=0.0)) == "book"
    assert format_move_comment(MoveRecord("e4")) == ""


def test_final_comment_carries_the_reason_and_black_moves_get_numbers_after_comments() -> None:
    moves = [MoveRecord("f3", score_cp=-20, depth=5, time=0.1), MoveRecord("e5"),
             MoveRecord("g4"), MoveRecord("Qh4#", mate=1, depth=1, time=0.01)]
    text = format_game(GameDescription(moves=moves, result="0-1", reason="Black mates"))
    assert _movetext_lines(text) == [
        "1. f3 {-0.20/5 0.10s} 1... e5 2. g4 Qh4# {+M1/1 0.010s, Black mates} 0-1"
    ]
    empty = format_game(GameDescription(result="1-0", reason="Black loses on time"))
    assert _movetext_lines(empty) == ["{Black loses on time} 1-0"]


def test_black_to_move_start_and_long_lines_wrap_under_80_columns() -> None:
    board = Board("4k3/8/8/8/8/8/8/R3K3 b Q - 0 41")
    records = []
    for _ in range(60):
        move = sorted(board.legal_moves, key=lambda m: m.uci())[0]
        records.append(MoveRecord(board.san(move), score_cp=-1234, depth=40, time=12.5))
        board.push(move)
        if board.is_game_over():
            break
    text = format_game(GameDescription(moves=records, start_fen="4k3/8/8/8/8/8/8/R3K3 b Q - 0 41",
                                       reason="x " * 60))
    lines = _movetext_lines(text)
    assert lines[0].startswith("41... ")
    assert len(lines) > 5 and all(len(line) <= LINE_WIDTH for line in lines)
    (game,) = parse_games(text)
    assert game.ok and [move.san for move in game.moves] == [r.san for r in records]


# -- round trips -----------------------------------------------------------------------------


def _description_of(game: PgnGame) -> GameDescription:
    """What the game loop would have handed the writer for a game read from a file."""
    moves = []
    for move in game.moves:
        note = parse_move_comment(move.comment)
        moves.append(MoveRecord(move.san, note.score_cp, note.mate, note.depth, note.time,
                                note.book, note.rest))
    roster = {name: value for name, value in game.tags.items()
              if name not in ("Result", "FEN", "SetUp", "Variant", "PlyCount")}
    start = None if game.start_fen == chess.STARTING_FEN else game.start_fen
    return GameDescription(tags=roster, moves=moves, result=game.result, start_fen=start,
                           chess960=game.chess960)


def _printed_step(seconds: float) -> float:
    """Half the last printed digit of a move time (format_seconds keeps ~3 digits)."""
    # Half the last written digit, plus a hair: 0.875 written as 0.88 is 0.005 away in
    # decimal but 0.0050000000000000044 in binary floating point.
    return 1e-9 + (0.0005 if seconds < 0.1 else 0.005 if seconds < 10 else 0.05 if seconds < 100 else 0.5)


def _check_round_trip(description: GameDescription) -> None:
    text = format_game(description)
    for line in _movetext_lines(text):
        assert len(line) <= LINE_WIDTH or " " not in line
    (ours,) = parse_games(text)
    assert ours.ok, ours.error
    assert [move.san for move in ours.moves] == [move.san for move in description.moves]
    assert ours.result == description.result
    for name, value in description.tags.items():
        assert ours.tags[name] == value
    for index, (read, written) in enumerate(zip(ours.moves, description.moves, strict=True)):
        note = parse_move_comment(read.comment)
        assert note.book == written.book
        if not written.book:
            assert note.score_cp == written.score_cp and note.mate == written.mate
            assert note.depth == (written.depth if (written.score_cp is not None
                                                     or written.mate is not None) else None)
            if written.time is None:
                assert note.time is None
            else:
                assert note.time is not None
                assert abs(note.time - written.time) <= _printed_step(written.time)
        extra = [text for text in (written.comment.strip(),) if text]
        if index == len(description.moves) - 1 and description.reason:
            extra.append(description.reason)
        assert note.rest == ", ".join(" ".join(part.split()) for part in extra)
    (theirs,) = [chess.pgn.read_game(io.StringIO(text))]
    assert theirs is not None and not theirs.errors
    assert [move.uci() for move in theirs.mainline_moves()] == ours.uci_moves
    assert theirs.end().board().fen() == ours.final_fen
    assert {k: unescape_tag_value(v) for k, v in theirs.headers.items()} == ours.tags
    theirs_comments = [" ".join(node.comment.split()) for node in theirs.mainline()]
    assert theirs_comments == [move.comment for move in ours.moves]


def test_real_games_round_trip() -> None:
    shared_file("pgn", "cutechess-fischerrandom.pgn")
    count = 0
    for path in sorted((SHARED_DATA / "pgn").glob("*.pgn")):
        for game in read_games(path):
            if any(move.is_null for move in game.moves):
                continue  # a null move has no SAN our writer would produce
            _check_round_trip(_description_of(game))
            count += 1
    book = shared_file("books", "8moves_v3.pgn")
    for game in read_games(book, limit=300):
        _check_round_trip(_description_of(game))
        count += 1
    assert count > 300


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)).filter(str.isprintable), max_size=30)
_FRC_STARTS = [
    "bnrbkrqn/pppppppp/8/8/8/8/PPPPPPPP/BNRBKRQN w KQkq - 0 1",
    "qrbnkbrn/pppppppp/8/8/8/8/PPPPPPPP/QRBNKBRN w KQkq - 0 1",
    "rkrnbbqn/pppppppp/8/8/8/8/PPPPPPPP/RKRNBBQN w KQkq - 0 1",
]


@st.composite
def _games(draw: st.DrawFn) -> GameDescription:
    chess960 = draw(st.booleans())
    start = draw(st.sampled_from(_FRC_STARTS)) if chess960 else draw(
        st.sampled_from([None, "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 3 17"]))
    board = Board(start or chess.STARTING_FEN, chess960=chess960)
    records = []
    for choice in draw(st.lists(st.integers(0, 1 << 16), max_size=90)):
        legal = sorted(board.legal_moves, key=lambda move: move.uci())
        if not legal:
            break
        move = legal[choice % len(legal)]
        kind = draw(st.sampled_from(["none", "book", "score", "mate"]))
        mate = draw(st.integers(1, 60)) * draw(st.sampled_from([1, -1]))
        record = MoveRecord(
            board.san(move),
            score_cp=draw(st.integers(-30000, 30000)) if kind == "score" else None,
            mate=mate if kind == "mate" else None,
            depth=draw(st.none() | st.integers(1, 120)),
            time=draw(st.none() | st.floats(0, 5000, allow_nan=False)),
            book=kind == "book",
            comment=draw(st.sampled_from(["", "", "pv e4 e5", "x, y"])),
        )
        records.append(record)
        board.push(move)
    tags = {name: draw(_TEXT) for name in ("Event", "Site", "White", "Black", "Round")}
    tags["Extra_Tag"] = draw(_TEXT)
    return GameDescription(
        tags=tags, moves=records, result=draw(st.sampled_from(["1-0", "0-1", "1/2-1/2", "*"])),
        start_fen=start, chess960=chess960,
        reason=draw(st.none() | st.sampled_from(["White mates", "Black loses on time",
                                                 "Draw by 3-fold repetition"])),
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_games())
def test_random_games_round_trip(description: GameDescription) -> None:
    _check_round_trip(description)


def test_unprintable_characters_in_tags_become_spaces() -> None:
    text = format_game(GameDescription(tags={"White": "a\tb\x00c\u2028d"}))
    (game,) = parse_games(text)
    assert game.tags["White"] == "a b c d"
