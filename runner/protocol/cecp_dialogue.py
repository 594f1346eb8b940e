"""What a CECP engine is told for a game and before each search, in the configured dialogue.

Pure functions of the game's setup, the engine's configuration and the features it
announced; `CecpEngine` sends the lines they return. Where the protocol leaves a choice the
`CecpDialogue` decides (see there): the runner's own ``full`` dialogue, or the ``lean`` one.

Compiled by mypyc (`runner.compiled`): patching here is not seen by compiled callers and
``RUNNER_PURE=1`` runs this source; docs/development.md says what else follows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from runner.clock import TimeControl
from runner.protocol.cecp_commands import (
    UNTIMED_SECONDS,
    clock_commands,
    edit_commands,
    edit_loses_castling,
    time_control_commands,
)
from runner.protocol.cecp_features import CecpFeatures
from runner.protocol.engine import CecpDialogue, ClockState, EngineConfig, GameSetup
from runner.types import Variant

__all__ = ["ending_commands", "game_commands", "move_lines", "position_commands", "position_refusal",
           "search_commands", "unseen_from"]

NEW_GAME_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
"""The position CECP's ``new`` sets up (runner.rules is not imported here: start-up cost)."""


def position_refusal(fen: str, variant: Variant, features: CecpFeatures) -> str | None:
    """Why `fen` cannot be stated to an engine with these features, or None: without
    setboard, ``edit`` would misstate the castling rights of a standard position whose king
    and rook are at home but whose rights are lost (the engine would castle illegally)."""
    if features.flag("setboard", False) or variant is not Variant.STANDARD:
        return None
    lost = edit_loses_castling(fen)
    if lost is None:
        return None
    return (f"it has no setboard, and its 'edit' command would give it the castling rights "
            f"{lost} (king and rook on their home squares), which the position has lost")


def position_commands(name: str, fen: str, variant: Variant, features: CecpFeatures,
                      dialogue: CecpDialogue) -> list[str]:
    """``setboard FEN``, or the ``edit`` idiom for an engine without setboard; ValueError
    naming engine `name` for a position ``edit`` would misstate (see `position_refusal`).
    The lean dialogue makes a dummy move ``b2b3`` first when Black is to move, setboard or
    not (the same engine then gets the same lines whatever its features)."""
    lean = dialogue is CecpDialogue.LEAN
    black_to_move = fen.split()[1:2] == ["b"]
    dummy = ["b2b3"] if lean and black_to_move else []
    if features.flag("setboard", False):
        return [*dummy, f"setboard {fen}"]
    refusal = position_refusal(fen, variant, features)
    if refusal is not None:
        raise ValueError(
            f"engine {name} cannot be given the position {fen!r}: {refusal}; use "
            "openings without such positions for this engine, or an engine with setboard")
    if lean:
        return [*dummy, *edit_commands(fen, dummy_move=None, by_file=True)]
    return edit_commands(fen)


def game_commands(config: EngineConfig, setup: GameSetup, features: CecpFeatures) -> list[str]:
    """The lines that start a game: resources, ``new``, the variant, ``force``, and the
    position and the time control in the dialogue's order, ``post``, pondering, the names."""
    lean = config.cecp_dialogue is CecpDialogue.LEAN
    lines: list[str] = []
    if config.memory_mb is not None and features.flag("memory", False):
        lines.append(f"memory {config.memory_mb}")
    if config.cores is not None and features.flag("smp", False):
        lines.append(f"cores {config.cores}")
    lines.append("new")
    if not lean:
        lines.extend(config.init_strings)  # the lean dialogue sent them once, at start-up
    if setup.variant is Variant.FISCHERANDOM:
        lines.append("variant fischerandom")
    lines.append("force")
    position: list[str] = []
    if setup.start_fen is not None and not (setup.variant is Variant.STANDARD
                                            and setup.start_fen == NEW_GAME_FEN):
        # "new" already set this position up. fairymax 5.0b plays other moves after an
        # "edit" of it than after "new" alone (seen 50 moves later in a game), and
        # cutechess-cli sends nothing here either (tests/test_peer_games.py).
        position = position_commands(config.name, setup.start_fen, setup.variant, features,
                                     config.cecp_dialogue)
    if lean:
        lines.extend(position)
    nps = config.nps if features.flag("nps", True) else None
    lines.extend(time_control_commands(setup.time_control, nps, day_beside_depth=not lean))
    lines.append("post")
    lines.append("hard" if config.ponder else "easy")
    if setup.opponent and features.flag("name", False):
        # "computer" only in the lean dialogue, and only to engines that asked for names:
        # fairymax, gnuchess and phalanx reject it as an unknown command, and fairymax
        # 5.0b-1+b1 (Debian 12) then crashes with SIGSEGV about one time in two (it parses
        # the word as a move); none of them announces name=1.
        if lean:
            lines.append("computer")
        lines.append(f"name {setup.opponent}")
    if not lean:
        lines.extend(position)
    return lines


def search_commands(config: EngineConfig, setup: GameSetup, features: CecpFeatures,
                    clocks: ClockState, new_moves: Sequence[str], *, forced: bool,
                    draw_offered: bool, period_sent: int) -> tuple[list[str], int]:
    """The lines that start a search after `new_moves` (as the engine reads them): a draw
    offer, the clocks, the moves (from force mode: the moves, the colour, ``go``; else the
    one move); and the time-control period now sent (see `clock_commands`)."""
    lean = config.cecp_dialogue is CecpDialogue.LEAN
    moves = move_lines(features, new_moves)
    lines: list[str] = []
    if draw_offered and features.flag("draw", True):
        lines.append("draw")
    clock_lines, period_sent = clock_commands(
        setup.time_control, clocks, period_sent, features.flag("time", True))
    if lean and not clock_lines and features.flag("time", True) \
            and _untimed(setup.time_control):
        # The move time's number, read as centiseconds (864 s): cutechess-cli's habit, and
        # longer than any search to a depth of the engines it is used with.
        clock_lines = [f"time {UNTIMED_SECONDS}"]
    if forced or len(moves) != 1:
        if lean:
            lines.extend(["force"] if not forced else [])
            lines.extend(moves)
            lines.extend(clock_lines)
        else:
            lines.extend(clock_lines)
            lines.extend(["force"] if not forced else [])
            lines.extend(moves)
            if features.flag("colors", True):
                lines.append(setup.side.value)
        lines.append("go")
    else:
        lines.extend(clock_lines)
        lines.extend(moves)
    return lines, period_sent


def _untimed(tc: TimeControl) -> bool:
    """No clock and no move time: a depth limit, a node limit or nothing."""
    return not tc.periods and tc.move_time is None


_COMMENT_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029{}]+")
"""What is taken out of a result comment before it is sent (see `ending_commands`)."""


def unseen_from(known: Sequence[str], own: Sequence[int], moves: Sequence[str]) -> int | None:
    """Where the moves of a game (`moves`) the engine has not seen begin, or None when there
    are none or `moves` does not extend those it knows (`known`; its own moves, at the
    indices `own`, may be written in its notation there)."""
    if len(moves) <= len(known):
        return None
    for index, move in enumerate(known):
        if moves[index] != move and index not in own:
            return None
    return len(known)


def ending_commands(config: EngineConfig, features: CecpFeatures, result: str, comment: str,
                    unseen: Sequence[str]) -> list[str]:
    """The lines that tell the engine a game is over: ``result`` then ``force``; the lean
    dialogue, as cutechess-cli: ``force``, the moves it has not seen (`unseen`, as it reads
    them), then ``result``."""
    # The comment may quote an engine's own text: no control character, and no brace that
    # would end it early.
    comment = _COMMENT_UNSAFE.sub(" ", comment).strip()
    text = f"result {result}" + (f" {{{comment}}}" if comment else "")
    if config.cecp_dialogue is not CecpDialogue.LEAN:
        return [text, "force"]
    return ["force", *move_lines(features, unseen), text]


def move_lines(features: CecpFeatures, moves: Sequence[str]) -> list[str]:
    """`moves` as the engine reads them (``usermove e2e4`` when it asks for the word)."""
    usermove = features.flag("usermove", False)
    return [f"usermove {m}" if usermove else m for m in moves]
