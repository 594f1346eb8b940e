"""Adjudication trackers as pure state machines: draw window, resignation, mate scores, length."""

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
    """Update ply by ply; whether a verdict stood after each ply."""
    fired = []
    for score, fullmove, zeroing in plies:
        tracker.update(score, fullmove, zeroing)
        fired.append(tracker.verdict() is not None)
    return fired


def _quiet_plies(first_move: int, count: int, score: int = 0) -> list[tuple[int, int, bool]]:
    """`count` plies starting with White's move `first_move`, none zeroing, all scoring `score`."""
    return [(score, first_move + i // 2, False) for i in range(count)]


# ------------------------------------------------------------------------------- draw


def test_draw_fires_after_both_sides_kept_the_window_for_n_moves_each():
    rules = AdjudicationRules(draw_move_number=10, draw_move_count=3, draw_score=20)
    fired = _feed_draw(DrawTracker(rules), _quiet_plies(10, 6, score=20))
    assert fired == [False] * 5 + [True]


def test_draw_never_fires_when_switched_off():
    tracker = DrawTracker(AdjudicationRules(draw_move_number=None, draw_move_count=1))
    assert not any(_feed_draw(tracker, _quiet_plies(1, 200)))


def test_draw_plies_before_the_start_move_do_not_count():
    rules = AdjudicationRules(draw_move_number=20, draw_move_count=2, draw_score=10)
    tracker = DrawTracker(rules)
    # Move 17 White .. move 19 Black: six quiet plies, all before move 20.
    assert not any(_feed_draw(tracker, _quiet_plies(17, 6)))
    assert _feed_draw(tracker, _quiet_plies(20, 4)) == [False, False, False, True]


@pytest.mark.parametrize("score", [11, -11, 5000, -MATE_SCORE_CP, None])
def test_draw_a_score_outside_the_window_or_missing_restarts_the_count(score):
    rules = AdjudicationRules(draw_move_number=1, draw_move_count=2, draw_score=10)
    tracker = DrawTracker(rules)
    plies = [*_quiet_plies(1, 3, score=-10), (score, 2, False), *_quiet_plies(3, 4, score=10)]
    fired = _feed_draw(tracker, plies)
    assert fired == [False] * 7 + [True]
    assert tracker.count == 4


def test_draw_a_capture_or_pawn_move_restarts_the_count():
    rules = AdjudicationRules(draw_move_number=1, draw_move_count=2, draw_score=10)
    tracker = DrawTracker(rules)
    plies = [(0, 1, False), (0, 1, False), (0, 2, False), (0, 2, True), (0, 3, False),
             (0, 3, False), (0, 4, False), (0, 4, False)]
    fired = _feed_draw(tracker, plies)
    # Three quiet plies, then the zeroing one: the four after it are needed afresh.
    assert fired == [False] * 7 + [True]


def test_draw_verdict_is_a_draw_with_a_reason():
    rules = AdjudicationRules(draw_move_number=1, draw_move_count=1, draw_score=7)
    tracker = DrawTracker(rules)
    _feed_draw(tracker, _quiet_plies(1, 2))
    verdict = tracker.verdict()
    assert verdict is not None
    assert verdict.result == "1/2-1/2"
    assert "7 cp" in verdict.reason


# ------------------------------------------------------------------------------- resign


def test_resign_one_sided_fires_on_the_loser_s_own_scores_alone():
    rules = AdjudicationRules(resign_move_count=3, resign_score=500)
    tracker = ResignTracker(rules)
    verdicts = []
    for _ in range(3):
        tracker.update(WHITE, 40)  # White does not see the win: one-sided needs no agreement
        tracker.update(BLACK, -500)
        verdicts.append(tracker.verdict())
    assert verdicts[:2] == [None, None]
    assert verdicts[2] is not None
    assert verdicts[2].result == "1-0"
    assert "White" in verdicts[2].reason


def test_resign_white_losing_gives_black_the_win():
    tracker = ResignTracker(AdjudicationRules(resign_move_count=2, resign_score=300))
    for _ in range(2):
        assert tracker.verdict() is None
        tracker.update(WHITE, -301)
        tracker.update(BLACK, 0)
    verdict = tracker.verdict()
    assert verdict is not None and verdict.result == "0-1"


def test_resign_a_better_score_in_between_restarts_the_count():
    tracker = ResignTracker(AdjudicationRules(resign_move_count=2, resign_score=300))
    for score in (-400, -299, -400):
        tracker.update(BLACK, score)
        assert tracker.verdict() is None
    tracker.update(BLACK, -400)
    assert tracker.verdict() is not None


def test_resign_a_missing_score_restarts_the_count():
    tracker = ResignTracker(AdjudicationRules(resign_move_count=2, resign_score=300))
    for score in (-400, None, -400):
        tracker.update(BLACK, score)
    assert tracker.verdict() is None


def test_resign_two_sided_needs_the_winner_to_agree():
    rules = AdjudicationRules(resign_move_count=2, resign_score=500, resign_two_sided=True)
    tracker = ResignTracker(rules)
    for _ in range(4):
        tracker.update(WHITE, 499)  # just short of agreeing
        tracker.update(BLACK, -900)
    assert tracker.verdict() is None
    tracker.update(WHITE, 500)
    tracker.update(BLACK, -900)
    assert tracker.verdict() is None  # one agreeing move of two
    tracker.update(WHITE, 650)
    tracker.update(BLACK, -900)
    verdict = tracker.verdict()
    assert verdict is not None and verdict.result == "1-0"


def test_resign_two_sided_winner_alone_is_not_enough():
    rules = AdjudicationRules(resign_move_count=2, resign_score=500, resign_two_sided=True)
    tracker = ResignTracker(rules)
    for _ in range(5):
        tracker.update(WHITE, 900)
        tracker.update(BLACK, -100)
    assert tracker.verdict() is None


@pytest.mark.parametrize("count", [None, 0])
def test_resign_switched_off_never_fires(count):
    tracker = ResignTracker(AdjudicationRules(resign_move_count=count, resign_score=1))
    for _ in range(50):
        tracker.update(WHITE, -MATE_SCORE_CP)
        tracker.update(BLACK, MATE_SCORE_CP)
    assert tracker.verdict() is None


def test_resign_count_zero_does_not_end_a_level_game_at_once():
    tracker = ResignTracker(AdjudicationRules(resign_move_count=0, resign_score=600))
    tracker.update(WHITE, 0)
    assert tracker.verdict() is None


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
    for fullmove in (1, 2):
        white = effective_score(None, 4 - fullmove)
        black = effective_score(None, -(4 - fullmove))
        resign.update(WHITE, white)
        draw.update(white, fullmove, False)
        resign.update(BLACK, black)
        draw.update(black, fullmove, False)
    assert draw.verdict() is None
    verdict = resign.verdict()
    assert verdict is not None and verdict.result == "1-0"


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
