"""fastchess's checks of what engines say while they search, as warnings after the fact.

fastchess looks at every scored ``info`` line of every move: a PV move that is illegal or
that goes on after the game would be over (threefold repetition, fifty moves, mate,
stalemate), with ``-check-mate-pvs`` a mating PV of the wrong length or not ending in mate,
a ``bestmove`` other than the last PV's first move, and two engines both claiming a mate in
their favour. The runner keeps each game's protocol lines in its record, so the same checks
run on them when the game ends and give fastchess's warnings, in its words, in move order.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from runner.game.record import GameRecord
from runner.protocol.uci_parse import UciInfo, parse_info
from runner.rules import STARTING_FEN, Board, Move

__all__ = ["last_info_line", "parsed_info", "pv_warnings", "search_lines"]


@functools.lru_cache(maxsize=4096)
def parsed_info(line: str) -> UciInfo:
    """`parse_info` of one line, remembered: a game's PV check and its PGN comments read the
    same lines (each scored ``info`` line was parsed twice per game; the parsed line is
    immutable). Bounded: a few games' worth of lines."""
    return parse_info(line)


def search_lines(record: GameRecord) -> dict[int, list[str]]:
    """Each engine move's output (by ply): the lines the engine printed after its ``go``."""
    searches: dict[bool, list[list[str]]] = {}
    for white, entries in ((True, record.protocol_lines[0]), (False, record.protocol_lines[1])):
        runs: list[list[str]] = []
        for entry in entries:
            if entry.direction == ">" and entry.text.startswith("go"):
                runs.append([])
            elif entry.direction == "<" and runs:
                runs[-1].append(entry.text)
        searches[white] = runs
    first_white = (record.spec.start_fen or STARTING_FEN).split()[1] == "w"
    plies: dict[bool, list[int]] = {True: [], False: []}
    for index, played in enumerate(record.moves):
        if not played.book:
            plies[(index % 2 == 0) == first_white].append(index)
    found: dict[int, list[str]] = {}
    for white, indices in plies.items():
        runs = searches[white]
        # A transcript that lost its oldest lines (it keeps the newest few thousand) lacks
        # the first searches: the searches it has are the last moves'.
        skip = max(0, len(indices) - len(runs))
        for index, lines in zip(indices[skip:], runs, strict=False):
            found[index] = lines
    return found


def _scored(lines: Sequence[str]) -> list[str]:
    return [line for line in lines
            if "info string" not in line and "info" in line and " score " in line]


def _bound(line: str) -> bool:
    return "lowerbound" in line or "upperbound" in line


def last_info_line(lines: Sequence[str]) -> str:
    """fastchess's ``lastInfoLine``: the last scored line of the first PV, exact preferred."""
    fallback = ""
    for line in reversed(lines):
        if "info string" in line or "info" not in line or " score " not in line:
            continue
        if " multipv " in line and " multipv 1" not in line:
            continue
        if not _bound(line):
            return line
        fallback = fallback or line
    return fallback


def _game_over(board: Board) -> str | None:
    """chess-library's ``isGameOver`` without insufficient material, as fastchess's PV check asks it."""
    if board.halfmove_clock >= 100:
        return "checkmate" if board.is_checkmate() else "fifty"
    if board.is_repetition(3):
        return "threefold"
    # Mate and stalemate in one look at the king's lines, stopping at the first legal move
    # found: most PV positions have one.
    check, has_moves = board.check_and_any_legal()
    if has_moves:
        return None
    return "checkmate" if check else "stalemate"


_OVER = {"threefold": "PV continues after threefold repetition - move {} from {}",
         "fifty": "PV continues after fifty-move rule - move {} from {}",
         "checkmate": "PV continues after checkmate - move {} from {}",
         "stalemate": "PV continues after stalemate - move {} from {}"}


def _legal(board: Board, text: str) -> Move | None:
    try:
        move = board.parse_uci(text)
    except ValueError:
        return None
    return move if board.is_legal(move) else None


def _differs(board: Board, first: str, played: str) -> bool:
    """Whether the PV's first move is not the move played (an illegal one never is; the
    same move may be written two ways, a Chess960 castling say)."""
    move = _legal(board, first)
    return move is None or move != board.parse_uci(played)


def _pv_problem(board: Board, info: UciInfo, check_mate_pvs: bool,
                over: Callable[[], str | None], played: int = 0) -> str | None:
    """What is wrong with `info`'s PV from the position `played` plies before `board` (None:
    nothing). The first `played` PV moves are already on `board` (the move the game played
    when the PV starts with it: legal, and not to be played twice) and were found clean; the
    rest is played on `board` itself and taken back before returning: a copy of the board
    per line would copy the whole game's history each time. `over` is `_game_over` of
    `board` as it stands, asked once per position however many lines the engine printed."""
    if not info.pv:
        return None
    pushed = 0
    try:
        for text in info.pv[played:]:
            ended = over() if pushed == 0 else _game_over(board)
            if ended is not None:
                return _OVER[ended].format(text, "{}")
            move = _legal(board, text)
            if move is None:
                return f"Illegal PV move - move {text} from {{}}"
            board.push(move)
            pushed += 1
        if not check_mate_pvs or info.mate is None or info.bound is not None:
            return None
        plies = info.mate * 2 - 1 if info.mate > 0 else info.mate * -2
        if len(info.pv) < plies:
            return "Incomplete mating PV - from {}"
        if len(info.pv) > plies:
            return "Too long mating PV - from {}"
        if not board.is_checkmate():
            return "Mating PV does not end with checkmate - from {}"
        return None
    finally:
        for _ in range(pushed):
            board.pop()


class _Ends:
    """`_game_over` of the game's positions by ply, each computed once: a ply's PVs ask it of
    the position before the move, and a PV that starts with the move played asks it of the
    position after it, which is the next ply's."""

    def __init__(self, board: Board) -> None:
        self._board = board
        self._found: dict[int, str | None] = {}

    def at(self, ply: int) -> Callable[[], str | None]:
        """The answer for ply `ply`, asked of the board when it stands there."""

        def over() -> str | None:
            if ply not in self._found:
                self._found[ply] = _game_over(self._board)
            return self._found[ply]

        return over


def pv_warnings(record: GameRecord, check_mate_pvs: bool, separator: str) -> list[str]:
    """fastchess's PV and mate-score warnings for the game, each one message (its lines
    joined by `separator`: a line break, or `` :: `` under ``-testEnv``)."""
    lines_by_ply = search_lines(record)
    start = record.spec.start_fen or STARTING_FEN
    frc = record.spec.variant.value == "fischerandom"
    board = Board(start, chess960=frc)
    fen = board.fen(shredder=frc)
    position = "startpos" if fen == STARTING_FEN else f"fen {fen}"
    names = (record.white, record.black)
    out: list[str] = []
    moves: list[str] = []
    last_info: dict[int, str] = {}
    ends = _Ends(board)

    def emit(warning: str, info: str) -> None:
        out.append(separator.join((f"Warning; {warning}", info, f"Position; {position}",
                                   f"Moves; {' '.join(moves)}")))

    for index, played in enumerate(record.moves):
        name = names[0] if board.turn else names[1]
        lines = lines_by_ply.get(index)
        if lines is not None and not played.book:
            scored = _scored(lines)
            infos = [parsed_info(line) for line in scored]
            # A PV that starts with the move played (most do) goes on from the position after
            # it, with the move pushed once for all of them: its first step needs no check
            # of legality, only of the game's end before it.
            problems: list[str | None] = [None] * len(infos)
            after: list[int] = []
            for at, info in enumerate(infos):
                if info.pv and info.pv[0] == played.uci:
                    ended = ends.at(index)()
                    if ended is not None:
                        problems[at] = _OVER[ended].format(played.uci, "{}")
                    else:
                        after.append(at)
                else:
                    problems[at] = _pv_problem(board, info, check_mate_pvs, ends.at(index))
            mismatch = None
            firsts = [i for i, line in enumerate(scored) if " multipv " not in line
                      or " multipv 1 " in f"{line} "]
            if firsts:
                last = scored[firsts[-1]]
                info = infos[firsts[-1]]
                if not _bound(last) and info.pv and info.pv[0] != played.uci \
                        and _differs(board, info.pv[0], played.uci):
                    mismatch = last
            board.push(board.parse_uci(played.uci))
            for at in after:
                problems[at] = _pv_problem(board, infos[at], check_mate_pvs,
                                           ends.at(index + 1), played=1)
            for line, problem in zip(scored, problems, strict=True):
                if problem is not None:
                    emit(problem.format(name), f"Info; {line}")
            if mismatch is not None:
                emit(f"Bestmove does not match beginning of last PV - move {played.uci} "
                     f"from {name}", f"Info; {mismatch}")
            last_info[index] = last_info_line(lines)
        else:
            board.push(board.parse_uci(played.uci))
        moves.append(played.uci)
        if index >= 1:
            them = record.moves[index - 1]
            if not them.book and them.mate is not None and played.mate is not None \
                    and them.mate * played.mate > 0:
                white_to_move = board.turn
                them_name = names[0] if white_to_move else names[1]
                emit(f"Sign mismatch in mate scores {them.mate} and {played.mate} from "
                     f"{them_name} ({'White' if white_to_move else 'Black'}) and {name} "
                     f"({'Black' if white_to_move else 'White'})",
                     f"Infos; {last_info.get(index - 1, '')} ; {last_info.get(index, '')}")
    return out
