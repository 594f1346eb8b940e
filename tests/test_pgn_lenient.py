"""Reading PGN leniently, as python-chess and pgn-extract do (issue 21 item 18): tag values with
unescaped quotes, and movetext lines longer than one read, all read with a notice rather than
refused; reading stays streaming and linear. Writing stays strict."""

from __future__ import annotations

import io
import time
import tracemalloc

import pytest

import runner.pgn.splitter as splitter
from runner.pgn.reader import check_pgn, parse_games, read_games
from runner.pgn.writer import escape_tag_value

chess_pgn = pytest.importorskip("chess.pgn")
chess = pytest.importorskip("chess")


def test_tags_with_unescaped_quotes_as_python_chess_writes_them(tmp_path) -> None:
    value = 'held-out "quoted" \\ event'
    games = []
    for number in range(3):
        game = chess_pgn.Game()
        game.headers["Event"] = value
        game.headers["Round"] = str(number + 1)
        game.add_main_variation(chess.Move.from_uci("e2e4"))
        games.append(str(game))
    text = "\n\n".join(games) + "\n"
    assert '[Event "held-out "quoted" \\ event"]' in text  # python-chess 1.11 does not escape
    path = tmp_path / "held-out.pgn"
    path.write_text(text)
    ours = list(read_games(path))
    theirs = chess_pgn.read_game(io.StringIO(text))
    assert [game.ok for game in ours] == [True, True, True]
    assert all(game.tags["Event"] == theirs.headers["Event"] == value for game in ours)
    assert [game.tags["Round"] for game in ours] == ["1", "2", "3"]
    assert all(game.uci_moves == ["e2e4"] for game in ours)
    report = check_pgn(path)
    assert not report.errors and len(report.notices) == 3
    assert "unescaped quotes" in str(report.notices[0]) and f"{path}:1:" in str(report.notices[0])
    # Written back strictly: escaped, and read again to the same value without a notice.
    (again,) = parse_games(f'[Event "{escape_tag_value(value)}"]\n\n1. e4 *\n')
    assert again.tags["Event"] == value and not again.notices


def test_other_backslashes_are_kept_and_truncated_tags_still_refused() -> None:
    (game,) = parse_games('[Site "C:\\games\\x"]\n\n*\n')
    assert game.ok and game.tags["Site"] == "C:\\games\\x"
    (broken, _) = parse_games('[Event "trunc\n\n*\n\n[Event "n"]\n\n*\n')
    assert broken.error is not None and "malformed tag pair" in broken.error.message


def _line_with_move_at(position: int, move: str = "Nf3") -> str:
    """'1. e4 e5 2. {pad} Nf3 Nc6 *' with `move` starting at byte `position` of the line."""
    head = "1. e4 e5 2. {"
    pad = "x" * (position - len(head) - 2)
    line = f"{head}{pad}}} {move} Nc6 *"
    assert line.index(f" {move} ") + 1 == position
    return line


@pytest.mark.parametrize("shift", [-2, -1, 0, 1])
def test_a_move_cut_by_the_read_boundary_is_read_whole(shift: int) -> None:
    line = _line_with_move_at(splitter.MAX_LINE_BYTES + shift)
    (game,) = list(read_games(io.BytesIO(f'[Event "x"]\n\n{line}\n'.encode())))
    assert game.ok, game.error
    assert game.uci_moves == ["e2e4", "e7e5", "g1f3", "b8c6"] and game.result == "*"


def test_a_character_cut_by_the_read_boundary_stays_whole() -> None:
    head = "1. e4 {"
    comment = "é" * ((splitter.MAX_LINE_BYTES + 5) // 2) + " end"
    data = f'[Event "x"]\n\n{head}{comment}}} e5 *\n'.encode()
    (game,) = list(read_games(io.BytesIO(data)))
    assert game.ok and game.moves[0].comment == comment and game.uci_moves == ["e2e4", "e7e5"]


def test_long_lines_of_moves_comments_and_blanks_in_small_pieces(monkeypatch) -> None:
    monkeypatch.setattr(splitter, "MAX_LINE_BYTES", 64)
    cycle = ("Nf3 Nf6", "Ng1 Ng8")
    moves = " ".join(f"{n + 1}. {cycle[n % 2]}" for n in range(400))
    text = (f'[Event "long"]\n\n{moves} {{a comment {"y" * 100} over pieces}} '
            f'{" " * 300}1/2-1/2 ; {"z" * 200} 1. e4\n\n[Event "next"]\n\n1. d4 *\n')
    first, second = parse_games(text)
    assert first.ok and len(first.moves) == 800 and first.result == "1/2-1/2"
    assert first.final_fen.split()[0] == chess.STARTING_BOARD_FEN
    # The ';' comment after the result goes to the last move too, whole across the pieces.
    assert first.moves[-1].comment == f"a comment {'y' * 100} over pieces {'z' * 200} 1. e4"
    assert second.ok and second.uci_moves == ["d2d4"] and second.line == 5


def _commented_game(moves: int, comment_bytes: int) -> bytes:
    pad = "c" * comment_bytes
    cycle = ("Nf3 Nf6", "Ng1 Ng8")
    body = " ".join(f"{n + 1}. {cycle[n % 2]} {{{pad}}}" for n in range(moves))
    return f'[Event "big"]\n\n{body} *\n'.encode()


def _read_cost(data: bytes) -> tuple[float, int]:
    tracemalloc.start()
    began = time.process_time()  # CPU time: the machine's load does not count
    (game,) = list(read_games(io.BytesIO(data)))
    seconds = time.process_time() - began
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert game.ok and len(game.moves) > 0
    return seconds, peak


def test_a_multi_megabyte_line_reads_in_linear_time_and_memory() -> None:
    small = _commented_game(16, 1 << 17)  # 2 MiB on one line
    large = _commented_game(32, 1 << 17)  # 4 MiB
    (t_small, m_small), (t_large, m_large) = _read_cost(small), _read_cost(large)
    # Memory: the comments are kept (they are the game), plus a few pieces of one read.
    assert m_large < 4 * len(large), f"{m_large / 1e6:.1f} MB for {len(large) / 1e6:.1f} MB"
    assert m_large < 2.6 * m_small
    assert t_large < 3 * t_small + 0.5, f"{t_small:.2f} s then {t_large:.2f} s"
