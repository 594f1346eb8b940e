"""The two CECP dialogues (runner.protocol.cecp_dialogue): what each says for a game and
before a search. The lean one is compared with cutechess-cli itself on real engines in
tests/test_cecp_dialogue_peer.py; here each of its choices is pinned down on its own."""

from __future__ import annotations

import pytest

from runner.clock import TimeControl
from runner.protocol.cecp_dialogue import game_commands, position_commands, search_commands
from runner.protocol.cecp_features import CecpFeatures
from runner.protocol.engine import CecpDialogue, ClockState, EngineConfig, GameSetup, Side

_BLACK_FEN = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"


def _features(**values: str) -> CecpFeatures:
    features = CecpFeatures()
    features.record(tuple(values.items()))
    return features


def _config(dialogue: CecpDialogue, **overrides: object) -> EngineConfig:
    return EngineConfig(name="e", argv=("e",), cecp_dialogue=dialogue, **overrides)  # type: ignore[arg-type]


def _setup(tc: str, **overrides: object) -> GameSetup:
    return GameSetup(time_control=TimeControl.parse(tc), side=Side.WHITE, **overrides)  # type: ignore[arg-type]


def test_full_dialogue_is_the_runners_own() -> None:
    """Clock first, a day's move time beside a depth, the position last, the colour before go."""
    setup = _setup("inf depth=3", start_fen=_BLACK_FEN, opponent="other")
    features = _features(setboard="1", name="1")
    lines = game_commands(_config(CecpDialogue.FULL), setup, features)
    assert lines == ["new", "force", "st 86400", "sd 3", "post", "easy", "name other",
                     f"setboard {_BLACK_FEN}"]
    search, _ = search_commands(_config(CecpDialogue.FULL), setup, features, ClockState(),
                                ["e7e5"], forced=True, draw_offered=False, period_sent=0)
    assert search == ["e7e5", "white", "go"]


def test_lean_dialogue_sets_the_position_first_and_no_move_time_beside_a_depth() -> None:
    """The lean dialogue's game: position (with the dummy move for Black), then the depth
    alone, then ``computer`` before the opponent's name."""
    setup = _setup("inf depth=3", start_fen=_BLACK_FEN, opponent="other")
    lines = game_commands(_config(CecpDialogue.LEAN), setup, _features(setboard="1", name="1"))
    assert lines == ["new", "force", "b2b3", f"setboard {_BLACK_FEN}", "sd 3", "post", "easy",
                     "computer", "name other"]


def test_lean_dialogue_search_sends_moves_then_clock_and_no_colour() -> None:
    """From force mode: the moves, ``time``/``otim``, ``go``; untimed: ``time 86400``."""
    config = _config(CecpDialogue.LEAN)
    timed = _setup("40/20")
    lines, _ = search_commands(config, timed, _features(), ClockState(20.0, 19.5, 40), ["e2e4"],
                               forced=True, draw_offered=False, period_sent=0)
    assert lines == ["e2e4", "time 2000", "otim 1950", "go"]
    untimed = _setup("inf depth=2")
    lines, _ = search_commands(config, untimed, _features(), ClockState(), [],
                               forced=True, draw_offered=False, period_sent=0)
    assert lines == ["time 86400", "go"]
    lines, _ = search_commands(config, untimed, _features(time="0"), ClockState(), ["d2d4"],
                               forced=False, draw_offered=False, period_sent=0)
    assert lines == ["d2d4"]


@pytest.mark.parametrize("tc, expected", [
    ("inf", ["st 86400"]),
    ("inf depth=4", ["sd 4"]),
    ("st=2", ["st 2"]),
    ("st=0.2", ["level 1 0:01 0"]),  # not cutechess-cli's "st 0": hoichess refuses that
    ("40/20", ["level 40 0:20 0"]),
    ("3+0.05", ["level 0 0:03 0.05"]),
    ("40/20 depth=5", ["level 40 0:20 0", "sd 5"]),
])
def test_lean_time_controls(tc: str, expected: list[str]) -> None:
    """Each kind of time control as the lean dialogue states it."""
    lines = game_commands(_config(CecpDialogue.LEAN), _setup(tc), _features())
    assert lines[lines.index("force") + 1:lines.index("post")] == expected


def test_lean_edit_lists_pieces_file_by_file_after_the_dummy_move() -> None:
    """Without setboard: ``b2b3``, ``edit``, the pieces a1, a2, ... h8 for each side."""
    lines = position_commands("e", _BLACK_FEN, _setup("inf").variant, _features(),
                              CecpDialogue.LEAN)
    assert lines[:4] == ["b2b3", "edit", "#", "Ra1"]
    white = lines[lines.index("#") + 1:lines.index("c")]
    assert white == sorted(white, key=lambda piece: piece[1:])
    assert "Pe4" in white and "Pe2" not in white
    assert lines[-1] == "."
    full = position_commands("e", _BLACK_FEN, _setup("inf").variant, _features(),
                             CecpDialogue.FULL)
    assert full[:3] == ["a2a3", "edit", "#"]
    assert sorted(full) == sorted(["a2a3", *lines[1:]])


def test_lean_dialogue_keeps_init_strings_for_start_up() -> None:
    """The lean dialogue sends no init string at ``new`` (they go once, before ``xboard``)."""
    setup = _setup("40/20")
    lean = game_commands(_config(CecpDialogue.LEAN, init_strings=("hash 16",)), setup,
                         _features())
    full = game_commands(_config(CecpDialogue.FULL, init_strings=("hash 16",)), setup,
                         _features())
    assert "hash 16" not in lean
    assert full[:2] == ["new", "hash 16"]
