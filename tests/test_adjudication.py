"""Adjudication trackers as pure state machines: draw window, resignation, mate scores, length.

Each convention is the peers' (fastchess, and cutechess-cli where the two agree); the
comments name the case of docs/adjudication.md a test pins down. tests/test_peer_games.py
checks the same rules against the real peers game for game.
"""

from __future__ import annotations

import pytest

from runner.game.adjudication import (
    MATE_SCORE_CP,
    AdjudicationRules,
    DrawTracker,
    ResignTracker,
    effective_score,
    max_moves_verdict,
)

WHITE, BLACK = True, False


def _feed_draw(tracker: DrawTracker, plies: list[tuple[int | None, int, bool]]) -> list[bool]:
    """Update ply by ply with (score, moves played after the ply, zeroing); whether a verdict
    stood after each ply."""
    fired = []
    for score, moves_played, zeroing in plies:
        tracker.update(score, zeroing)
        fired.append(tracker.verdict(moves_played) is not None)
    return fired


def _quiet_plies(first_ply: int, count: int, score: int = 0) -> list[tuple[int, int, bool]]:
    """``count`` plies from ply ``first_ply`` of a game from move 1, none zeroing, all
    scoring ``score``; the moves played after ply p are p // 2."""
    return [(score, (first_ply + i) // 2, False) for i in range(count)]


# ------------------------------------------------------------------------------- draw


def test_draw_fires_after_both_sides_kept_the_window_for_n_moves_each():
    rules = AdjudicationRules(draw_move_number=10, draw_move_count=3, draw_score=20)
    fired = _feed_draw(DrawTracker(rules), _quiet_plies(21, 6, score=20))
    assert fired == [False] * 5 + [True]


def test_draw_never_fires_when_switched_off():
    tracker = DrawTracker(AdjudicationRules(draw_move_number=None, draw_move_count=1))
    assert not any(_feed_draw(tracker, _quiet_plies(1, 200)))


def test_draw_start_move_gates_the_verdict_but_earlier_plies_count():
    # Both peers count quiet plies from the first engine move on; the start move only
    # decides when the verdict may be given. Plies 31..40 are quiet: the count reaches 4 at
    # ply 34, but the 20th move is complete only after ply 40, where the draw fires.
    rules = AdjudicationRules(draw_move_number=20, draw_move_count=2, draw_score=10)
    fired = _feed_draw(DrawTracker(rules), _quiet_plies(31, 10))
    assert fired == [False] * 9 + [True]


def test_draw_start_move_reads_the_fens_move_number():
    # fastchess: the position's full move number minus one after the ply, so a FEN at move
    # 30 is past a start move of 20 at once (cutechess-cli would count plies from the FEN).
    rules = AdjudicationRules(draw_move_number=20, draw_move_count=1, draw_score=10)
    fired = _feed_draw(DrawTracker(rules), [(0, 29, False), (0, 30, False)])
    assert fired == [False, True]


@pytest.mark.parametrize("score", [11, -11, 5000, -MATE_SCORE_CP, None])
def test_draw_a_score_outside_the_window_or_missing_restarts_the_count(score):
    rules = AdjudicationRules(draw_move_number=1, draw_move_count=2, draw_score=10)
    tracker = DrawTracker(rules)
    plies = [*_quiet_plies(2, 3, score=-10), (score, 2, False), *_quiet_plies(6, 4, score=10)]
    fired = _feed_draw(tracker, plies)
    assert fired == [False] * 7 + [True]
    assert tracker.count == 4


def test_draw_a_mate_score_never_counts_even_inside_a_huge_window():
    rules = AdjudicationRules(draw_move_number=0, draw_move_count=1, draw_score=MATE_SCORE_CP)
    tracker = DrawTracker(rules)
    assert _feed_draw(tracker, [(0, 1, False), (MATE_SCORE_CP, 1, False)]) == [False, False]


def test_draw_a_capture_or_pawn_move_restarts_the_count_and_counts_itself():
    # The case: both peers restart the count on a zeroing ply and then count that
    # ply's own score, so a quiet stretch that begins with a capture is one ply longer.
    rules = AdjudicationRules(draw_move_number=1, draw_move_count=2, draw_score=10)
    tracker = DrawTracker(rules)
    plies = [(0, 1, False), (0, 1, False), (0, 2, False), (0, 2, True), (0, 3, False),
             (0, 3, False), (0, 4, False)]
    fired = _feed_draw(tracker, plies)
    # Three quiet plies, then the zeroing one starts a new count at 1: four plies later.
    assert fired == [False] * 6 + [True]


def test_draw_a_zeroing_ply_outside_the_window_restarts_at_zero():
    rules = AdjudicationRules(draw_move_number=1, draw_move_count=1, draw_score=10)
    tracker = DrawTracker(rules)
    assert _feed_draw(tracker, [(0, 1, False), (50, 1, True), (0, 2, False), (0, 2, False)]) \
        == [False, False, False, True]


def test_draw_verdict_is_a_draw_with_a_reason():
    rules = AdjudicationRules(draw_move_number=1, draw_move_count=1, draw_score=7)
    tracker = DrawTracker(rules)
    _feed_draw(tracker, _quiet_plies(2, 2))
    verdict = tracker.verdict(2)
    assert verdict is not None
    assert verdict.result == "1/2-1/2"
    assert "7 cp" in verdict.reason


# ------------------------------------------------------------------------------- resign


def _feed_resign(tracker: ResignTracker, plies: list[tuple[bool, int | None]]) -> list[str | None]:
    """Update ply by ply with (white moved, score); the verdict's result after each ply."""
    results = []
    for white_moved, score in plies:
        tracker.update(white_moved, score)
        verdict = tracker.verdict(white_moved, score)
        results.append(None if verdict is None else str(verdict.result))
    return results


def test_resign_one_sided_fires_on_the_loser_s_own_scores_alone():
    rules = AdjudicationRules(resign_move_count=3, resign_score=500)
    results = _feed_resign(ResignTracker(rules), [(WHITE, 40), (BLACK, -500)] * 3)
    # White never sees the win: one-sided needs no agreement. Black's third such move ends it.
    assert results == [None] * 5 + ["1-0"]


def test_resign_white_losing_gives_black_the_win():
    tracker = ResignTracker(AdjudicationRules(resign_move_count=2, resign_score=300))
    results = _feed_resign(tracker, [(WHITE, -301), (BLACK, 0), (WHITE, -301)])
    assert results == [None, None, "0-1"]
    verdict = tracker.verdict(WHITE, -301)
    assert verdict is not None and "Black wins" in verdict.reason


def test_resign_a_better_score_in_between_restarts_the_count():
    tracker = ResignTracker(AdjudicationRules(resign_move_count=2, resign_score=300))
    results = _feed_resign(tracker, [(BLACK, s) for s in (-400, -299, -400, -400)])
    assert results == [None, None, None, "1-0"]


def test_resign_a_missing_score_restarts_the_count():
    tracker = ResignTracker(AdjudicationRules(resign_move_count=2, resign_score=300))
    assert _feed_resign(tracker, [(BLACK, -400), (BLACK, None), (BLACK, -400)]) == [None] * 3


def test_resign_a_mate_against_the_mover_counts_whatever_the_threshold():
    tracker = ResignTracker(AdjudicationRules(resign_move_count=1, resign_score=200_000))
    assert _feed_resign(tracker, [(WHITE, -MATE_SCORE_CP)]) == ["0-1"]


def test_resign_two_sided_counts_plies_of_both_sides_and_fires_on_the_loser_s_ply():
    # fastchess: one count of consecutive plies of either side whose score is at least the
    # threshold away from zero; 2 * movecount of them, and the ply's mover must be losing.
    # The stretch starts with the loser: after six plies the winner has moved, so the verdict
    # waits for the loser's next ply (cutechess-cli ends on the same ply here).
    rules = AdjudicationRules(resign_move_count=3, resign_score=500, resign_two_sided=True)
    plies = [(BLACK, -600), (WHITE, 600)] * 3 + [(BLACK, -600)]
    assert _feed_resign(ResignTracker(rules), plies) == [None] * 6 + ["1-0"]


def test_resign_two_sided_a_small_score_of_either_side_restarts():
    rules = AdjudicationRules(resign_move_count=2, resign_score=500, resign_two_sided=True)
    plies = [(WHITE, 499), (BLACK, -900), (WHITE, 650), (BLACK, -900), (WHITE, 650), (BLACK, -900)]
    assert _feed_resign(ResignTracker(rules), plies) == [None] * 5 + ["1-0"]


def test_resign_two_sided_winner_alone_is_not_enough():
    rules = AdjudicationRules(resign_move_count=2, resign_score=500, resign_two_sided=True)
    plies = [(WHITE, 900), (BLACK, -100)] * 5
    assert not any(_feed_resign(ResignTracker(rules), plies))


@pytest.mark.parametrize("count", [None, 0])
def test_resign_switched_off_never_fires(count):
    tracker = ResignTracker(AdjudicationRules(resign_move_count=count, resign_score=1))
    assert not any(_feed_resign(tracker, [(WHITE, -MATE_SCORE_CP), (BLACK, MATE_SCORE_CP)] * 50))


def test_resign_count_zero_does_not_end_a_level_game_at_once():
    tracker = ResignTracker(AdjudicationRules(resign_move_count=0, resign_score=600))
    assert _feed_resign(tracker, [(WHITE, 0)]) == [None]


# ------------------------------------------------------------------------------- mate scores


def test_effective_score_maps_mates_beyond_any_threshold():
    assert effective_score(None, 3) == MATE_SCORE_CP
    assert effective_score(99_997, 2) == MATE_SCORE_CP
    assert effective_score(None, -1) == -MATE_SCORE_CP
    assert effective_score(-31_990, -5) == -MATE_SCORE_CP
    assert effective_score(-35, None) == -35
    assert effective_score(None, None) is None


def test_mate_scores_drive_resignation_and_break_the_draw_window():
    rules = AdjudicationRules(resign_move_count=2, resign_score=90_000, resign_two_sided=True,
                              draw_move_number=1, draw_move_count=1, draw_score=50)
    resign = ResignTracker(rules)
    draw = DrawTracker(rules)
    results = []
    for fullmove in (1, 2):
        white = effective_score(None, 4 - fullmove)
        black = effective_score(None, -(4 - fullmove))
        for mover, score in ((WHITE, white), (BLACK, black)):
            resign.update(mover, score)
            draw.update(score, False)
            assert draw.verdict(fullmove) is None
            verdict = resign.verdict(mover, score)
            results.append(None if verdict is None else str(verdict.result))
    assert results == [None, None, None, "1-0"]


# ------------------------------------------------------------------------------- max moves


def test_max_moves_counts_full_moves_in_plies():
    rules = AdjudicationRules(max_moves=40)
    assert max_moves_verdict(rules, 79) is None
    verdict = max_moves_verdict(rules, 80)
    assert verdict is not None
    assert verdict.result == "1/2-1/2"
    assert "40" in verdict.reason


@pytest.mark.parametrize("max_moves", [None, 0])
def test_max_moves_off(max_moves):
    assert max_moves_verdict(AdjudicationRules(max_moves=max_moves), 10_000) is None


# ------------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "kwargs",
    [
        {"draw_move_number": -1},
        {"resign_move_count": -2},
        {"max_moves": -1},
        {"draw_move_count": 0},
        {"draw_score": -1},
        {"resign_score": -5},
    ],
)
def test_rules_reject_negative_settings(kwargs):
    with pytest.raises(ValueError):
        AdjudicationRules(**kwargs)


# -- tablebases ---------------------------------------------------------------------------------


def test_positions_beyond_the_tables_cost_no_probe(tmp_path) -> None:
    """The rule looks at the clock, the castling rights and the piece count before any probe:
    along a whole game no table file is even mapped until a position the tables cover with a
    zero clock comes (seen in /proc/self/maps, on a private copy of two small tables)."""
    import random
    import shutil

    from conftest import SHARED_DATA

    from runner.game.adjudication import TablebaseJudge
    from runner.rules import STARTING_FEN, Board
    from runner.tablebase import Tablebase

    shared = SHARED_DATA / "syzygy"
    if not (shared / "KQvK.rtbw").exists():
        pytest.skip(f"Syzygy tables absent (expected {shared})")
    for name in ("KQvK.rtbw", "KRvK.rtbw"):
        shutil.copy(shared / name, tmp_path / name)

    def mapped() -> bool:
        with open("/proc/self/maps") as maps:
            return str(tmp_path) in maps.read()

    rules = AdjudicationRules(tablebases=(str(tmp_path),))
    with Tablebase([tmp_path]) as tables:
        judge = TablebaseJudge(rules, tables)
        chooser = random.Random(3)
        board = Board(STARTING_FEN)
        seen = 0
        while board.occupied.bit_count() > 3 and not board.outcome():
            assert judge.verdict(board) is None
            seen += 1
            board.push(chooser.choice(list(board.legal_moves)))
        assert seen > 50 and not mapped()
        # A three-piece position with a zero clock is probed (the table is mapped then).
        won = Board("8/8/8/4k3/8/8/8/4K2Q b - - 0 1")
        verdict = judge.verdict(won)
        assert verdict is not None and verdict.reason == "White wins by adjudication: SyzygyTB"
        assert mapped()
        # The same position after a king move (clock 1) is not: fastchess probes at 0 only.
        assert judge.verdict(Board("8/8/8/4k3/8/8/8/4K2Q b - - 1 1")) is None


def test_a_damaged_table_is_unknown_not_a_failed_game(tmp_path, caplog) -> None:
    """A table file that is not a Syzygy table (a bad copy, a truncated download): the
    position is unknown and the game plays on (a failed game would be replayed for ever),
    with a warning naming the file."""
    from runner.game.adjudication import TablebaseJudge
    from runner.rules import Board
    from runner.tablebase import Tablebase

    (tmp_path / "KQvK.rtbw").write_bytes(b"\0" * 272)
    rules = AdjudicationRules(tablebases=(str(tmp_path),))
    with Tablebase([tmp_path]) as tables:
        judge = TablebaseJudge(rules, tables)
        assert judge.verdict(Board("8/8/8/4k3/8/8/8/4K2Q b - - 0 1")) is None
    assert "KQvK.rtbw" in caplog.text
