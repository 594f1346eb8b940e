"""fastchess's checks of what engines say while they search, as warnings after the fact.

fastchess looks at every scored ``info`` line of every move: a PV move that is illegal or
that goes on after the game would be over (threefold repetition, fifty moves, mate,
stalemate), with ``-check-mate-pvs`` a mating PV of the wrong length or not ending in mate,
a ``bestmove`` other than the last PV's first move, and two engines both claiming a mate in
their favour. The runner keeps each game's protocol lines in its record, so the same checks
run on them when the game ends and give fastchess's warnings, in its words, in move order.

A line is parsed here only when the engine layer did not read it into the move's record
already: at a shallow depth a search prints one scored line, which the UCI client parsed once
(`runner.protocol.uci_parse`) and the game loop copied into the move (`engine_read`); parsing it
again cost about 10 us a ply (issue 38). Such a search is checked by a short path
(`_check_read`), without the lists a search of several lines needs.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from runner.game.record import GameRecord
from runner.protocol.uci_parse import UciInfo, parse_info
from runner.rules import STARTING_FEN, Board, Move
from runner.types import MoveRecord

__all__ = ["engine_read", "last_info_line", "parsed_info", "pv_warnings", "search_lines"]

_Line = tuple[tuple[str, ...], int | None, str | None]
"""What the PV check reads of a scored line: its PV, mate score and bound."""


@functools.lru_cache(maxsize=4096)
def parsed_info(line: str) -> UciInfo:
    """`parse_info` of one line, remembered: a game's PV check and its PGN comments read the
    same lines (each scored ``info`` line was parsed twice per game; the parsed line is
    immutable). Bounded: a few games' worth of lines."""
    return parse_info(line)


def search_lines(record: GameRecord) -> dict[int, list[str]]:
    """Each engine move's output (by ply): the lines the engine printed after its ``go``.
    The answer for the game last asked is kept (the PV check and the game's PGN both read
    it as the game ends); callers only read it."""
    global _last_searched
    kept = _last_searched
    if kept is not None and kept[0] is record:
        return kept[1]
    found = _search_lines(record)
    _last_searched = (record, found)
    return found


_last_searched: tuple[GameRecord, dict[int, list[str]]] | None = None
"""The game `search_lines` last read, and its answer (the record is held, so its identity
cannot be taken by another one meanwhile)."""


def _search_lines(record: GameRecord) -> dict[int, list[str]]:
    searches: dict[bool, list[list[str]]] = {}
    for white, entries in ((True, record.protocol_lines[0]), (False, record.protocol_lines[1])):
        runs: list[list[str]] = []
        current: list[str] | None = None
        # Unpacked, not read by attribute: this loop sees every line the engines printed.
        for _stamp, direction, text in entries:
            if direction == "<":
                if current is not None:
                    current.append(text)
            elif direction == ">" and text.startswith("go"):
                current = []
                runs.append(current)
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


def engine_read(record: GameRecord, index: int, lines: Sequence[str]) -> str | None:
    """`_engine_read` of the move of ply `index` (`lines`: its search's, from `search_lines`),
    remembered for the game last asked: the PV check and the PGN's comment both ask it."""
    global _last_read
    kept = _last_read
    if kept is None or kept[0] is not record:
        kept = _last_read = (record, {})
    found = kept[1]
    if index in found:
        return found[index]
    answer = found[index] = _engine_read(record, index, lines)
    return answer


_last_read: tuple[GameRecord, dict[int, str | None]] | None = None
"""The game `engine_read` last read, and its answers by ply (the record is held, so its
identity cannot be taken by another one meanwhile)."""


def _engine_read(record: GameRecord, index: int, lines: Sequence[str]) -> str | None:
    """The search's one scored line when the engine layer read it into the move's record
    (`record.moves[index]`, played after the search printed `lines`), so that the move's
    figures (score, mate, depth, seldepth, nodes, nps, hashfull, tbhits, PV) are the line's as
    `parse_info` reads it, without a bound; else None (the line is to be parsed here).

    The UCI client (`runner.protocol.uci_reading`) merges every ``info`` line of a search that
    is not a message, a second ``multipv`` skipped, and the game loop copies the result into
    the move. So the move holds exactly the line's fields when the line is the search's only
    ``info`` line that is not an ``info string`` message, without ``string`` in it, ``multipv``
    1 if any, neither clipped in the transcript nor a bound, and the search's ``bestmove``
    (after it) is the move played; nor pondered, nor a score turned to White's view. The
    figures the checks and the PGN's comment read (PV, score, depth) are looked up in the
    line as well: a record made otherwise (a test's) is never taken for the line."""
    played = record.moves[index]
    if played.book or played.ponder_hit is not None or record.spec.white_pov[1]:
        return None
    found: str | None = None
    for line in lines:
        if line.startswith("info string ") or line == "info string":
            continue  # a message: neither merged nor scored
        if line.startswith("bestmove "):
            if found is None:
                return None
            words = line.split()
            # The search's answer: the engine layer merged nothing printed after it.
            return found if len(words) > 1 and words[1] == played.uci else None
        if found is not None or "info" not in line:
            return None  # a second info line (merged too), or another line: not sure
        if not line.startswith("info ") or " score " not in line or "string" in line \
                or "info string" in line or _bound(line) or line.endswith(" in all]"):
            return None
        if "multipv" in line and not (line.count("multipv") == 1 and (
                " multipv 1 " in line or line.endswith(" multipv 1"))):
            return None
        if not _holds(line, record.moves[index]):
            return None
        found = line
    return None


def _holds(line: str, played: MoveRecord) -> bool:
    """Whether `line` (one ``info`` line, each word once) says the PV, score and depth of
    `played`, as `parse_info` would read them."""
    pv = played.pv
    if pv:
        if line.count(" pv ") != 1 or not line.endswith(" pv " + " ".join(pv)):
            return False
    elif " pv " in line:
        return False
    if line.count(" score ") != 1:
        return False
    spaced = line + " "
    if played.mate is not None:
        if f" score mate {played.mate} " not in spaced:
            return False
    elif played.score_cp is None or f" score cp {played.score_cp} " not in spaced:
        return False
    depth = played.depth
    if depth is None:
        return " depth " not in line
    return line.count(" depth ") == 1 and f" depth {depth} " in spaced


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


def _pv_problem(board: Board, info: _Line, check_mate_pvs: bool,
                over: Callable[[], str | None], played: int = 0) -> str | None:
    """What is wrong with the PV of `info` (a line's PV, mate score and bound) from the
    position `played` plies before `board` (None: nothing). The first `played` PV moves are
    already on `board` (the move the game played when the PV starts with it: legal, and not
    to be played twice) and were found clean; the rest is played on `board` itself and taken
    back before returning: a copy of the board per line would copy the whole game's history
    each time. `over` is `_game_over` of `board` as it stands, asked once per position
    however many lines the engine printed."""
    pv, mate, bound = info
    if not pv:
        return None
    pushed = 0
    try:
        for text in pv[played:]:
            ended = over() if pushed == 0 else _game_over(board)
            if ended is not None:
                return _OVER[ended].format(text, "{}")
            move = _legal(board, text)
            if move is None:
                return f"Illegal PV move - move {text} from {{}}"
            board.push(move)
            pushed += 1
        if not check_mate_pvs or mate is None or bound is not None:
            return None
        plies = mate * 2 - 1 if mate > 0 else mate * -2
        if len(pv) < plies:
            return "Incomplete mating PV - from {}"
        if len(pv) > plies:
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
    position after it, which is the next ply's. The first `played` plies' positions had a
    legal move played from them (the game's own): neither mate nor stalemate, so only the
    fifty-move count and the repetitions are asked there, not the king's lines."""

    def __init__(self, board: Board, played: int = 0) -> None:
        self._board = board
        self._played = played
        self._found: dict[int, str | None] = {}

    def at(self, ply: int) -> Callable[[], str | None]:
        """The answer for ply `ply`, asked of the board when it stands there."""
        return functools.partial(self.get, ply)

    def get(self, ply: int) -> str | None:
        """The answer for ply `ply`; the board must stand there if it was not asked before."""
        found = self._found
        if ply in found:
            return found[ply]
        board = self._board
        if ply < self._played:
            answer = "fifty" if board.halfmove_clock >= 100 \
                else "threefold" if board.is_repetition(3) else None
        else:
            answer = _game_over(board)
        found[ply] = answer
        return answer


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
    played_moves = record.moves
    ends = _Ends(board, len(played_moves))

    def emit(warning: str, info: str) -> None:
        out.append(separator.join((f"Warning; {warning}", info, f"Position; {position}",
                                   f"Moves; {' '.join(moves)}")))

    def last_line(ply: int) -> str:
        """The move's last scored line (for the mate-sign warning, which is rare: asked
        only then)."""
        lines = lines_by_ply.get(ply)
        return "" if lines is None or played_moves[ply].book else last_info_line(lines)

    previous_mate: int | None = None  # the last move's mate score, None for a book move
    for index, played in enumerate(played_moves):
        uci = played.uci
        lines = lines_by_ply.get(index)
        if lines is None or played.book:
            board.push(board.parse_uci(uci))
        else:
            name = names[0] if board.turn else names[1]
            read = engine_read(record, index, lines)
            if read is not None:
                _check_read(board, ends, index, played, read, check_mate_pvs, name, emit)
            else:
                _check_search(board, ends, index, uci, lines, _lines_parsed(lines),
                              check_mate_pvs, name, emit)
        moves.append(uci)
        mate = played.mate
        if previous_mate is not None and mate is not None and previous_mate * mate > 0:
            white_to_move = board.turn
            name = names[1] if white_to_move else names[0]
            them_name = names[0] if white_to_move else names[1]
            emit(f"Sign mismatch in mate scores {previous_mate} and {mate} from "
                 f"{them_name} ({'White' if white_to_move else 'Black'}) and {name} "
                 f"({'Black' if white_to_move else 'White'})",
                 f"Infos; {last_line(index - 1)} ; {last_line(index)}")
        previous_mate = None if played.book else mate
    return out


def _lines_parsed(lines: Sequence[str]) -> tuple[list[str], list[_Line]]:
    """The scored lines of a search the engine layer did not read into its move's record
    (`engine_read` found none), and what the PV check reads of each: parsed."""
    scored = _scored(lines)
    infos = [parsed_info(line) for line in scored]
    return scored, [(info.pv, info.mate, info.bound) for info in infos]


def _check_read(board: Board, ends: _Ends, index: int, played: MoveRecord, line: str,
                check_mate_pvs: bool, name: str, emit: Callable[[str, str], None]) -> None:
    """`_check_search` of a search whose one scored line the engine layer read into the
    move's record (`engine_read`: `line`, its PV and mate score the move's, no bound, multipv
    1 if any), then the move played on `board`: the same warnings in the same order, without
    the lists a search of several lines needs (most searches at a shallow depth are this)."""
    uci = played.uci
    pv = played.pv
    problem: str | None = None
    mismatch = False
    check_after = False
    if pv and pv[0] == uci:
        ended = ends.get(index)
        if ended is not None:
            problem = _OVER[ended].format(uci, "{}")
        else:  # else nothing is left to look at past the move
            check_after = len(pv) > 1 or (check_mate_pvs and played.mate is not None)
    elif pv:
        problem = _pv_problem(board, (pv, played.mate, None), check_mate_pvs, ends.at(index))
        # The line is the last (only) one of the first PV and no bound: the bestmove check.
        mismatch = _differs(board, pv[0], uci)
    board.push(board.parse_uci(uci))
    if check_after:
        problem = _pv_problem(board, (pv, played.mate, None), check_mate_pvs,
                              ends.at(index + 1), played=1)
    if problem is not None:
        emit(problem.format(name), f"Info; {line}")
    if mismatch:
        emit(f"Bestmove does not match beginning of last PV - move {uci} from {name}",
             f"Info; {line}")


def _check_search(board: Board, ends: _Ends, index: int, uci: str, lines: Sequence[str],
                  read: tuple[list[str], list[_Line]], check_mate_pvs: bool, name: str,
                  emit: Callable[[str, str], None]) -> None:
    """The warnings of one engine move's search (ply `index`, the move `uci` the engine
    played from `board`, `read` its scored lines and what they say), then the move played
    on `board`."""
    scored, infos = read
    # A PV that starts with the move played (most do) goes on from the position after
    # it, with the move pushed once for all of them: its first step needs no check
    # of legality, only of the game's end before it.
    problems: list[str | None] = [None] * len(infos)
    after: list[int] = []
    for at, info in enumerate(infos):
        pv, mate, bound = info
        if pv and pv[0] == uci:
            ended = ends.get(index)
            if ended is not None:
                problems[at] = _OVER[ended].format(uci, "{}")
            elif len(pv) > 1 or (check_mate_pvs and mate is not None and bound is None):
                after.append(at)  # else nothing is left to look at past the move
        else:
            problems[at] = _pv_problem(board, info, check_mate_pvs, ends.at(index))
    mismatch = None
    for at in range(len(scored) - 1, -1, -1):  # the last line of the first PV
        line = scored[at]
        if " multipv " not in line or " multipv 1 " in line or line.endswith(" multipv 1"):
            pv = infos[at][0]
            if not _bound(line) and pv and pv[0] != uci and _differs(board, pv[0], uci):
                mismatch = line
            break
    board.push(board.parse_uci(uci))
    for at in after:
        problems[at] = _pv_problem(board, infos[at], check_mate_pvs, ends.at(index + 1),
                                   played=1)
    for line, problem in zip(scored, problems, strict=True):
        if problem is not None:
            emit(problem.format(name), f"Info; {line}")
    if mismatch is not None:
        emit(f"Bestmove does not match beginning of last PV - move {uci} from {name}",
             f"Info; {mismatch}")
