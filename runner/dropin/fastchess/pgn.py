"""fastchess's PGN and EPD for one game record: its tags in its order, its move comments.

fastchess writes (``PgnBuilder``): the Seven Tag Roster with ``Round`` the pair number, the
engines' ``id name``/``id author``, ``SetUp``/``FEN`` for any start but the standard one (and
always in Chess960), ``Variant "Chess960"``, then ``GameDuration``, ``GameStartTime``,
``GameEndTime`` (local time), ``PlyCount``, ``Termination`` and the time control; a tag with
an empty value is left out. Each move carries ``{score/depth time}`` and the keys the
``-pgnout`` options ask for, the last one the reason the game ended; ``min=true`` writes no
optional tag and no comment. Movetext lines end before column 81, a move, its number and its
comment being never split.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from runner.dropin.fastchess.pvcheck import engine_read, last_info_line, parsed_info, search_lines
from runner.dropin.fastchess.settings import EngineSummary, FastchessSettings
from runner.game.record import GameRecord, GameTermination
from runner.rules import STARTING_FEN, Board, Move, Result
from runner.types import MoveRecord, Variant

__all__ = [
    "EngineId",
    "epd_line",
    "fastchess_reason",
    "fastchess_termination",
    "game_pgn",
    "move_time_ms",
    "seconds_text",
    "time_control_text",
]

_LINE = 80


@dataclass(frozen=True)
class EngineId:
    """What a UCI engine says of itself (``id name``, ``id author``); empty when it says nothing."""

    name: str = ""
    author: str = ""


def _color(white: bool) -> str:
    return "White" if white else "Black"


def _loser_is_white(record: GameRecord) -> bool:
    """The side that lost (for a draw: the side to move at the end)."""
    if record.result == Result.WHITE_WINS:
        return False
    if record.result == Result.BLACK_WINS:
        return True
    return record.final_fen.split()[1] == "w"


def fastchess_reason(record: GameRecord) -> str:
    """The reason fastchess gives for how the game ended (``White mates``, ``Draw by adjudication``)."""
    term = record.termination
    result = record.result
    loser_white = _loser_is_white(record)
    winner = _color(not loser_white)
    if term is GameTermination.CHECKMATE:
        return f"{winner} mates"
    if term is GameTermination.STALEMATE:
        return "Draw by stalemate"
    if term is GameTermination.INSUFFICIENT_MATERIAL:
        return "Draw by insufficient mating material"
    if term in (GameTermination.THREEFOLD_REPETITION, GameTermination.FIVEFOLD_REPETITION):
        return "Draw by 3-fold repetition"
    if term in (GameTermination.FIFTY_MOVES, GameTermination.SEVENTYFIVE_MOVES):
        return "Draw by fifty moves rule"
    if term is GameTermination.TABLEBASE:
        if result == Result.DRAW:
            return "Draw by adjudication: SyzygyTB"
        return f"{winner} wins by adjudication: SyzygyTB"
    if term in (GameTermination.ADJUDICATION, GameTermination.MAX_MOVES,
                GameTermination.RESIGNATION, GameTermination.DRAW_AGREEMENT):
        return "Draw by adjudication" if result == Result.DRAW else f"{winner} wins by adjudication"
    if term is GameTermination.TIME_FORFEIT:
        return f"{_color(loser_white)} loses on time ({_overrun_ms(record)}ms overrun)"
    if term in (GameTermination.ILLEGAL_MOVE, GameTermination.FALSE_CLAIM):
        return f"{_color(loser_white)} makes an illegal move"
    if term is GameTermination.STALL:
        return f"{_color(loser_white)}'s connection stalls"
    if term is GameTermination.DISCONNECT:
        return f"{_color(loser_white)} disconnects"
    return "Game interrupted"


def fastchess_termination(record: GameRecord) -> str:
    """The PGN ``Termination`` value fastchess writes."""
    term = record.termination
    if term in (GameTermination.TABLEBASE, GameTermination.ADJUDICATION,
                GameTermination.MAX_MOVES, GameTermination.RESIGNATION,
                GameTermination.DRAW_AGREEMENT):
        return "adjudication"
    if term in (GameTermination.DISCONNECT, GameTermination.STALL):
        return "abandoned"
    if term is GameTermination.TIME_FORFEIT:
        return "time forfeit"
    if term in (GameTermination.ILLEGAL_MOVE, GameTermination.FALSE_CLAIM):
        return "illegal move"
    if term is GameTermination.ERROR:
        return "unterminated"
    return "normal"


def _overrun_ms(record: GameRecord) -> int:
    """Milliseconds past the flag: the runner's reason says how long the move took
    (``... (1.234 s used)``) and the clock replayed over the loser's moves says what was left."""
    reason = record.reason
    marker = reason.rfind(" s used")
    if marker < 0:
        return 0
    try:
        used = float(reason[reason.rfind("(", 0, marker) + 1:marker])
    except ValueError:
        return 0
    loser_white = _loser_is_white(record)
    control = record.spec.white_tc if loser_white else record.spec.black_tc
    from runner.clock import Clock

    clock = Clock(control)
    white_to_move = (record.spec.start_fen or STARTING_FEN).split()[1] == "w"
    for move in record.moves:
        if white_to_move == loser_white and not move.book and move.time is not None:
            clock.spend(move.time)
        white_to_move = not white_to_move
    left = clock.time_left()
    if left is None:
        return 0
    return max(0, int((used - left) * 1000))


def seconds_text(millis: int) -> str:
    """A time in milliseconds as fastchess writes it: seconds with three decimals."""
    return f"{millis / 1000.0:.3f}s"


def move_time_ms(seconds: float | None) -> int:
    """A move's time in whole milliseconds, as fastchess measures it (truncated)."""
    return 0 if seconds is None else int(seconds * 1000)


def _g(value: float, digits: int) -> str:
    return f"{value:.{digits}g}"


def time_control_text(engine: EngineSummary) -> str:
    """fastchess's ``TimeControl`` tag value (``40/60+0.5``, ``0.1/move``, ``-``)."""
    if engine.fixed_time_ms > 0:
        return f"{_g(engine.fixed_time_ms / 1000.0, 8)}/move"
    text = ""
    if engine.tc_moves == 0 and engine.tc_time_ms == 0 and engine.tc_increment_ms == 0:
        text = "-"
    if engine.tc_moves > 0:
        text += f"{engine.tc_moves}/"
    if engine.tc_time_ms + engine.tc_increment_ms > 0:
        text += _g(engine.tc_time_ms / 1000.0, 6)
    if engine.tc_increment_ms > 0:
        text += f"+{_g(engine.tc_increment_ms / 1000.0, 6)}"
    return text


def _tc_key(engine: EngineSummary) -> tuple[int, int, int, int]:
    return (engine.tc_moves, engine.tc_time_ms, engine.tc_increment_ms, engine.fixed_time_ms)


def _local(moment: datetime) -> datetime:
    return moment.astimezone()


def _iso(moment: datetime) -> str:
    local = _local(moment)
    offset = local.utcoffset()
    minutes = int(offset.total_seconds() // 60) if offset is not None else 0
    sign = "+" if minutes >= 0 else "-"
    minutes = abs(minutes)
    return f"{local:%Y-%m-%dT%H:%M:%S} {sign}{minutes // 60:02d}{minutes % 60:02d}"


def _duration(seconds: float) -> str:
    whole = max(0, int(seconds))
    return f"{whole // 3600:02d}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def _score_text(score_cp: int | None, mate: int | None) -> str:
    if mate is not None:
        plies = mate * 2 - 1 if mate > 0 else mate * -2
        return f"{'+' if mate > 0 else '-'}M{plies}"
    if score_cp is not None:
        sign = "+" if score_cp > 0 else "-" if score_cp < 0 else ""
        return f"{sign}{abs(score_cp) / 100.0:.2f}"
    return ""


def _lan(board: Board, move: Move) -> str:
    """chess-library's long algebraic notation: ``Ng1f3``, ``e4xd5``, ``e7e8=Q+``, ``O-O``."""
    if board.is_castling(move):
        text = "O-O" if board.is_kingside_castling(move) else "O-O-O"
    else:
        piece = board.piece_type_at(move.from_square)
        letters = " PNBRQK"
        text = "" if piece is None or piece == 1 else letters[piece]
        capture = board.is_capture(move)
        text += move.uci()[:2] + ("x" if capture else "") + move.uci()[2:4]
        if move.promotion:
            text += "=" + letters[move.promotion]
    board.push(move)
    if board.is_check():
        text += "#" if board.is_checkmate() else "+"
    board.pop()
    return text


def _illegal_text(record: GameRecord) -> str | None:
    """The move text an engine sent that lost on an illegal move (None: none known)."""
    if record.termination is not GameTermination.ILLEGAL_MOVE:
        return None
    head, sep, tail = record.reason.partition(": ")
    return tail.strip() if sep and tail.strip() else None


def game_pgn(record: GameRecord, round_number: int, settings: FastchessSettings,
             engines: Mapping[str, EngineSummary], ids: Mapping[str, EngineId]) -> str:
    """The game as fastchess writes it into ``-pgnout`` (ending in a blank line)."""
    frc = record.spec.variant is Variant.FISCHERANDOM
    result = str(record.result) if record.result in (
        Result.WHITE_WINS, Result.BLACK_WINS, Result.DRAW) else "*"
    tags: list[tuple[str, str]] = []

    def tag(name: str, value: str) -> None:
        if value:
            tags.append((name, value))

    tag("Event", settings.event)
    tag("Site", settings.site)
    tag("Date", f"{_local(record.started_at):%Y.%m.%d}")
    tag("Round", str(round_number))
    tag("White", record.white)
    tag("Black", record.black)
    tag("Result", result)
    if not settings.pgn_min:
        white_id, black_id = ids.get(record.white, EngineId()), ids.get(record.black, EngineId())
        tag("EngineWhiteName", white_id.name)
        tag("EngineWhiteAuthor", white_id.author)
        tag("EngineBlackName", black_id.name)
        tag("EngineBlackAuthor", black_id.author)
    start = Board(record.spec.start_fen or STARTING_FEN, chess960=frc)
    start_fen = start.fen(shredder=frc)
    if start_fen != STARTING_FEN or frc:
        tag("SetUp", "1")
        tag("FEN", start_fen)
    if frc:
        tag("Variant", "Chess960")
    illegal = _illegal_text(record)
    if not settings.pgn_min:
        tag("GameDuration", _duration(record.duration))
        tag("GameStartTime", _iso(record.started_at))
        tag("GameEndTime", _iso(record.ended_at))
        tag("PlyCount", str(len(record.moves) + (1 if illegal is not None else 0)))
        tag("Termination", fastchess_termination(record))
        white = engines.get(record.white, EngineSummary(record.white))
        black = engines.get(record.black, EngineSummary(record.black))
        if _tc_key(white) == _tc_key(black):
            tag("TimeControl", time_control_text(white))
        else:
            tag("WhiteTimeControl", time_control_text(white))
            tag("BlackTimeControl", time_control_text(black))
    if not settings.pgn_min and not frc:
        opening = _classify(record)
        if opening is not None:
            tag("ECO", opening[0])
            tag("Opening", opening[1])
    reason = fastchess_reason(record)
    black_starts = start.turn is False
    fullmove = start.fullmove_number
    tokens = _movetext(record, start, settings, reason, illegal)
    return _render(tags, tokens, result, black_starts, fullmove) + "\n\n"


def _movetext(record: GameRecord, board: Board, settings: FastchessSettings, reason: str,
              illegal: str | None) -> list[tuple[str, str]]:
    """(move, comment) for every ply, fastchess's notation and comment keys."""
    out: list[tuple[str, str]] = []
    moves = record.moves
    matched = _matched_lines(record, settings.pgn_match_lines) if settings.pgn_match_lines \
        else {}
    if not moves and illegal is not None:
        return [("", f"{reason}: {illegal}")]
    searches = search_lines(record) if not settings.pgn_min and any(record.protocol_lines) \
        else None
    # The board is followed only when a move's text needs it: LAN, or SAN the record lacks.
    follow = settings.pgn_notation == "lan" or (
        settings.pgn_notation == "san" and not all(played.san for played in moves))
    # The keys beyond ``{score/depth time}`` are looked at once, not at every move: without
    # any (the default), a move's comment is that pair alone.
    extras = not settings.pgn_min and (
        settings.pgn_timeleft or settings.pgn_latency or settings.pgn_nodes
        or settings.pgn_seldepth or settings.pgn_nps or settings.pgn_hashfull
        or settings.pgn_tbhits or settings.pgn_pv or bool(matched))
    notation = settings.pgn_notation
    last_index = len(moves) - 1
    for index, played in enumerate(moves):
        move = board.parse_uci(played.uci) if follow else None
        if notation == "san":
            text = played.san or board.san(board.parse_uci(played.uci))
        elif notation == "lan":
            assert move is not None
            text = _lan(board, move)
        else:
            text = played.uci
        comment = ""
        if not settings.pgn_min:
            if played.book:
                comment = "book"
            else:
                figures = _as_fastchess_reads(record, index, searches.get(index, [])) \
                    if searches is not None else _Figures.recorded(played)
                comment = (f"{_score_text(figures.score_cp, figures.mate)}/{figures.depth or 0} "
                           f"{seconds_text(move_time_ms(played.time))}")
                if extras:
                    comment = _extra_keys(comment, played, figures, settings,
                                          matched.get(index))
                if index == last_index:
                    comment += f", {reason}: {illegal}" if illegal is not None \
                        else f", {reason}" if reason else ""
        out.append((text, comment))
        if move is not None:
            board.push(move)
    return out


def _extra_keys(comment: str, played: MoveRecord, figures: _Figures,
                settings: FastchessSettings, matched: list[str] | None) -> str:
    """A move's comment with the keys the ``-pgnout`` options ask for added (``tl=``,
    ``n=``, ``pv=``, ``line=``...), in fastchess's order."""
    parts = [comment]
    if settings.pgn_timeleft:
        parts.append(f"tl={seconds_text(_ms(played.time_left))}")
    if settings.pgn_latency:
        parts.append(f"latency={seconds_text(_ms(played.latency))}")
    if settings.pgn_nodes:
        parts.append(f"n={figures.nodes or 0}")
    if settings.pgn_seldepth:
        parts.append(f"sd={figures.seldepth or 0}")
    if settings.pgn_nps:
        parts.append(f"nps={figures.nps or 0}")
    if settings.pgn_hashfull:
        parts.append(f"hashfull={figures.hashfull or 0}")
    if settings.pgn_tbhits:
        parts.append(f"tbhits={figures.tbhits or 0}")
    if settings.pgn_pv:
        parts.append(f'pv="{" ".join(figures.pv)}"')
    if matched:
        parts.append(", ".join(f'line="{line}"' for line in matched))
    return ", ".join(p for p in parts if p)


class _Figures(NamedTuple):
    """A move's search figures as its PGN comment shows them."""

    score_cp: int | None
    mate: int | None
    depth: int | None
    seldepth: int | None
    nodes: int | None
    nps: int | None
    hashfull: int | None
    tbhits: int | None
    pv: tuple[str, ...]

    @classmethod
    def recorded(cls, played: MoveRecord) -> _Figures:
        """The runner's own figures of the move (no transcript to read them from)."""
        return cls(played.score_cp, played.mate, played.depth, played.seldepth, played.nodes,
                   played.nps, played.hashfull, played.tbhits, played.pv)


_NO_FIGURES = _Figures(None, None, 0, 0, 0, 0, 0, 0, ())


def _as_fastchess_reads(record: GameRecord, index: int, lines: Sequence[str]) -> _Figures:
    """The figures of the move of ply `index` as fastchess takes them from the engine's lines
    of its search (``Match::addMoveData``): all from one line, the last scored ``info`` of the
    first PV with an exact score preferred to a bound (`last_info_line`), none at all when the
    engine printed no more than its ``bestmove``. The runner's own figures (a bound's deeper
    depth among them) stay for the runner's PGN; but when that line is the one the engine
    layer read into the move (`engine_read`), they are the line's and it is not parsed again.
    Otherwise the PV check parsed the line before (`parsed_info` remembers it). No copy of
    the move is made (a ``dataclasses.replace`` per ply was a third of this comment's cost)."""
    if len(lines) <= 1:
        return _NO_FIGURES
    if engine_read(record, index, lines) is not None:
        played = record.moves[index]
        return _Figures(played.score_cp, played.mate, played.depth or 0, played.seldepth or 0,
                        played.nodes or 0, played.nps or 0, played.hashfull or 0,
                        played.tbhits or 0, played.pv)
    info = parsed_info(last_info_line(lines))
    return _Figures(info.score_cp, info.mate, info.depth or 0, info.seldepth or 0,
                    info.nodes or 0, info.nps or 0, info.hashfull or 0, info.tbhits or 0,
                    info.pv)


def _matched_lines(record: GameRecord, patterns: Sequence[str]) -> dict[int, list[str]]:
    """``match_line=``: for each engine move (by ply), per pattern the last line the engine
    printed for that move's search (after its ``go``) that the pattern finds."""
    compiled = [re.compile(p) for p in patterns]
    found: dict[int, list[str]] = {}
    for index, lines in search_lines(record).items():
        hits = []
        for pattern in compiled:
            hit = next((line for line in reversed(lines) if pattern.search(line)), None)
            if hit is not None:
                hits.append(hit)
        if hits:
            found[index] = hits
    return found


def _ms(seconds: float | None) -> int:
    return 0 if seconds is None else round(seconds * 1000)


def _render(tags: Sequence[tuple[str, str]], moves: Sequence[tuple[str, str]], result: str,
            black_starts: bool, fullmove: int) -> str:
    """fastchess's ``PGNGenerator::generate``: tags, a blank line, wrapped movetext, result."""
    text = "".join(f'[{name} "{value}"]\n' for name, value in tags)
    if tags:
        text += "\n"
    body: list[str] = []
    length = 0

    def append(token: str) -> None:
        nonlocal length
        if length > 0 and length + len(token) + 1 > _LINE:
            body.append("\n")
            length = 0
        if length > 0:
            body.append(" ")
            length += 1
        body.append(token)
        length += len(token)

    counter = int(black_starts) + 2 * fullmove - 1
    for index, (move, comment) in enumerate(moves):
        white = index % 2 == 0 if not black_starts else index % 2 != 0
        token = ""
        if move:
            number = (counter + 1) // 2
            if white:
                token = f"{number}. {move}"
            elif index == 0:
                token = f"{number}... {move}"
            else:
                token = move
        counter += 1
        if comment:
            token += f"{' ' if move else ''}{{{comment}}}"
        append(token)
    append(result)
    return text + "".join(body)


@functools.cache
def _openings() -> dict[str, tuple[str, str]]:
    """ECO code and name by position (the first four FEN fields): the table fastchess uses,
    which is lichess-org/chess-openings of 2025-07-31 (public domain), shipped as data."""
    # Read by this module's own loader (from a directory or a zip alike, as pkgutil.get_data
    # does) and inflated by zlib, which the run has loaded already: importlib.resources,
    # gzip and pkgutil would add their modules (zipfile among them) to every run that names
    # an opening, a third of the table's cost (issue 38).
    import zlib

    loader: Any = __spec__.loader
    raw: bytes = loader.get_data(os.path.join(os.path.dirname(__file__), "openings.tsv.gz"))
    table: dict[str, tuple[str, str]] = {}
    for line in zlib.decompress(raw, wbits=31).decode().splitlines():
        if line and not line.startswith("#"):
            key, eco, name = line.split("\t")
            table[key] = (eco, name)
    return table


def _classify(record: GameRecord) -> tuple[str, str] | None:
    """The opening of the last position of the game that the table names (fastchess's
    ``getOpeningClassification``): the start position first, then after each move."""
    table = _openings()
    fewest = _fewest_pieces()
    occupancies = _occupancies()
    board = Board(record.spec.start_fen or STARTING_FEN)
    found = table.get(board.epd())
    for played in record.moves:
        board.push_uci(played.uci)
        if board.occupied.bit_count() < fewest:
            break  # no move adds a piece: no later position can be in the table either
        # Writing the position out costs more than the move: only a position whose occupied
        # squares some named position has can be named.
        if board.occupied not in occupancies:
            continue
        named = table.get(board.epd())
        if named is not None:
            found = named
    return found


_SQUARES_OF = str.maketrans({**{str(n): "0" * n for n in range(1, 9)}, "/": None,
                             **dict.fromkeys("PNBRQKpnbrqk", "1")})


@functools.cache
def _occupancies() -> frozenset[int]:
    """The occupied squares (as a bitboard) of every position the openings table names."""
    found = set()
    rank_masks: dict[str, int] = {}
    """A rank's occupied files by its FEN text (few distinct ranks recur in the table)."""
    for key in _openings():
        # The placement runs from a8 to h1; the bitboard's bit n is square n, a1 first.
        occupied = 0
        shift = 56
        for rank in key[:key.index(" ")].split("/"):
            mask = rank_masks.get(rank)
            if mask is None:
                mask = rank_masks[rank] = int(rank.translate(_SQUARES_OF)[::-1], 2)
            occupied |= mask << shift
            shift -= 8
        found.add(occupied)
    return frozenset(found)


@functools.cache
def _fewest_pieces() -> int:
    """The fewest pieces on the board in any position the openings table names."""
    return min(occupied.bit_count() for occupied in _occupancies())


def epd_line(record: GameRecord) -> str:
    """fastchess's ``-epdout`` line: the final position, ``hmvc`` and ``fmvn`` operations."""
    fields = record.final_fen.split()
    return f"{' '.join(fields[:4])} hmvc {fields[4]}; fmvn {fields[5]};\n"
