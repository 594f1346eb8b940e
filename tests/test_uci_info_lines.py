"""`merge_info_lines` against the line-by-line fold it stands for (issue 38: a search's
``info`` lines are kept and settled at its ``bestmove``, parsing only those that count)."""

from __future__ import annotations

import random

import pytest

from runner.protocol.engine import SearchInfo
from runner.protocol.uci_parse import merge_info, merge_info_lines, parse_info


def _fold(old: SearchInfo | None, lines: list[str], bound: bool) -> tuple[SearchInfo | None, bool]:
    """The reading as it was: every line parsed and merged in order."""
    for text in lines:
        info = parse_info(text)
        if info.multipv not in (None, 1):
            continue
        old, bound = merge_info(old, info, bound)
    return old, bound


def _random_line(chooser: random.Random) -> str:
    """An ``info`` line (without ``info``) with a random choice of fields."""
    words: list[str] = []
    for name in ("depth", "seldepth", "multipv", "nodes", "nps", "hashfull", "tbhits", "time"):
        if chooser.random() < 0.45:
            top = 3 if name == "multipv" else 5000
            words += [name, str(chooser.randint(1, top))]
    if chooser.random() < 0.3:
        words += ["currmove", "e2e4", "currmovenumber", "3"]
    if chooser.random() < 0.6:
        words += ["score", chooser.choice(["cp", "mate"]), str(chooser.randint(-300, 300))]
        if chooser.random() < 0.35:
            words.append(chooser.choice(["lowerbound", "upperbound"]))
    if chooser.random() < 0.5:
        words += ["pv", *chooser.sample(["e2e4", "e7e5", "g1f3", "b8c6", "f1b5"],
                                        chooser.randint(0, 4))]
    if chooser.random() < 0.05:  # malformed: parsed leniently all the same
        chooser.shuffle(words)
    return " ".join(words)


@pytest.mark.parametrize("seed", range(8))
def test_same_as_merging_each_line(seed):
    chooser = random.Random(seed)
    for _ in range(300):
        lines = [_random_line(chooser) for _ in range(chooser.randint(0, 12))]
        old = None if chooser.random() < 0.5 else _fold(None, [_random_line(chooser)], False)[0]
        bound = chooser.random() < 0.3
        assert merge_info_lines(old, lines, bound) == _fold(old, lines, bound), lines


def test_exact_score_wins_over_a_later_bound():
    lines = ["depth 9 score cp 31 pv e2e4", "depth 10 score cp 55 lowerbound pv e2e4",
             "depth 10 nodes 900"]
    info, bound = merge_info_lines(None, lines, False)
    assert info is not None and (info.score_cp, info.depth, info.nodes, bound) == (31, 10, 900, False)


def test_only_other_multipv_lines_leave_the_report_as_it_was():
    assert merge_info_lines(None, ["multipv 2 depth 4 score cp 3"], False) == (None, False)
