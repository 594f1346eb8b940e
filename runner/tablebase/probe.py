"""Probing Syzygy tables on a `runner.rules.Board`: WDL, DTZ and the best move by DTZ.

The tables store positions as if the side to move had just made a capture or pawn move and
without en passant rights; a WDL table may store a wrong value where the best move is a
capture (the generator left those entries free for better compression). So a probe
resolves captures by a small alpha-beta search over captures first, then handles en
passant separately, as the reference prober does. DTZ tables store one side to move only;
for the other side the probe searches one ply. Results follow python-chess's convention:
WDL -2..2 from the side to move (1 a cursed win, -1 a blessed loss), DTZ signed.

The board passed in is used for the search (moves pushed and popped) and is returned
unchanged; do not share one board between threads while it is being probed.
"""

from __future__ import annotations

import os
import re
import struct
from collections.abc import Iterable
from itertools import combinations_with_replacement
from types import TracebackType

from runner.rules import BB_SQUARES, Board, Move
from runner.rules.movegen import generate_legal
from runner.tablebase._format import PA_FLAGS, WDL_TO_MAP, DtzFile, TableFile, WdlFile, material_key
from runner.tablebase._index import encode_pawn, encode_piece, pawn_file
from runner.tablebase._pairs import TablebaseError, decompress

_NAME = re.compile(r"^(K[QRBNP]*)v(K[QRBNP]*)\.(rtbw|rtbz)$")
_U16 = struct.Struct("<H").unpack_from
_CORRUPT = (IndexError, struct.error, ValueError, KeyError)


class _Missing(Exception):
    """A table the probe needs is not present (the public calls answer None)."""


def dtz_before_zeroing(wdl: int) -> int:
    """The DTZ of a position whose best move zeroes the fifty-move counter."""
    if wdl == 0:
        return 0
    return (1 if wdl > 0 else -1) * (1 if abs(wdl) == 2 else 101)


def _name_key(name: str) -> int:
    """The material key of a table name such as ``"KRvKP"``."""
    white, black = name.split("v")
    return material_key(white, black)


def _wdl_of_dtz(dtz: int) -> int:
    """The WDL class a DTZ value stands for (cursed beyond 100 plies)."""
    if dtz > 0:
        return 2 if dtz <= 100 else 1
    if dtz < 0:
        return -2 if dtz >= -100 else -1
    return 0


_WDL_TO_DTZ = (-1, -101, 0, 101, 1)


def board_key(board: Board) -> int:
    """The material key of a board (see `runner.tablebase._format.material_key`)."""
    w = board.occupied_co[1]
    b = board.occupied_co[0]
    p, n, bi, r, q, k = board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings
    return ((p & w).bit_count() | (n & w).bit_count() << 4 | (bi & w).bit_count() << 8
            | (r & w).bit_count() << 12 | (q & w).bit_count() << 16 | (k & w).bit_count() << 20
            | (p & b).bit_count() << 24 | (n & b).bit_count() << 28 | (bi & b).bit_count() << 32
            | (r & b).bit_count() << 36 | (q & b).bit_count() << 40 | (k & b).bit_count() << 44)


def _squares(bb: int, mirror: int, out: list[int]) -> None:
    """Append the squares of a bitboard (lowest first), XOR-ed with `mirror`."""
    while bb:
        low = bb & -bb
        out.append((low.bit_length() - 1) ^ mirror)
        bb ^= low


def _attacks_any(board: Board, color: bool, targets: int) -> bool:
    """Whether `color` attacks any of the `targets` squares: most positions have no capture,
    and this costs a fraction of generating the legal captures to find none."""
    while targets:
        low = targets & -targets
        if board.attackers_mask(color, low.bit_length() - 1):
            return True
        targets ^= low
    return False


def _orientation(t: TableFile, key: int, turn: bool) -> tuple[int, int, int]:
    """(colour flip 0/1, square flip 0/0x38, stored side) for a board with material `key`.

    A table stores one colour as its "white"; a board with the colours the other way round
    is probed with colours and ranks swapped. A symmetric table stores only White to move:
    Black to move is probed as the mirror image.
    """
    if t.symmetric:
        return (0, 0, 0) if turn else (1, 0x38, 0)
    if key != t.key:
        return 1, 0x38, int(turn)
    return 0, 0, int(not turn)


class Tablebase:
    """A set of Syzygy tables found in some directories; files are mapped when first probed.

    `directories` is a list of directories (a single path is one directory; see `from_paths`
    for a ``:``-separated list). Raises `TablebaseError` when a directory does not exist.
    When two directories hold the same table, the first one listed wins.

    Kept whole over 300 lines (tests/test_sizes.py): the probe recursion (`_probe_ab`, the
    DTZ search) reads the open tables on every node of every adjudicated position, so the
    table keeping and the probing stay one object rather than add a hop per node.
    """

    def __init__(self, directories: Iterable[str | os.PathLike[str]] | str | os.PathLike[str]) -> None:
        if isinstance(directories, (str, os.PathLike)):
            directories = [directories]  # one directory, not the characters of its name
        self.directories = [os.fspath(d) for d in directories]
        self._wdl: dict[int, WdlFile] = {}
        self._dtz: dict[int, DtzFile] = {}
        self._wdl_names: dict[str, WdlFile] = {}
        self._dtz_names: dict[str, DtzFile] = {}
        for directory in self.directories:
            if not os.path.isdir(directory):
                raise TablebaseError(f"tablebase directory does not exist: {directory}")
            for entry in sorted(os.listdir(directory)):
                m = _NAME.match(entry)
                if m is None or m.group(1).count("K") != 1 or m.group(2).count("K") != 1:
                    continue
                name = f"{m.group(1)}v{m.group(2)}"
                if not 3 <= len(name) - 1 <= 7:
                    continue
                path = os.path.join(directory, entry)
                if not os.path.isfile(path):
                    continue
                if m.group(3) == "rtbw":
                    if name not in self._wdl_names:
                        wdl = self._wdl_names[name] = WdlFile(path, name)
                        self._wdl.setdefault(wdl.key, wdl)
                        self._wdl.setdefault(wdl.mirrored_key, wdl)
                elif name not in self._dtz_names:
                    dtz = self._dtz_names[name] = DtzFile(path, name)
                    self._dtz.setdefault(dtz.key, dtz)
                    self._dtz.setdefault(dtz.mirrored_key, dtz)
        counts = [len(n) - 1 for n in (*self._wdl_names, *self._dtz_names)]
        self.max_pieces: int = max(counts, default=0)
        """The largest piece count for which any table is present (0: no tables)."""
        self.complete_pieces: int = self._complete()
        """The largest N such that every WDL table of N pieces and fewer is present (2: none)."""

    @classmethod
    def from_paths(cls, text: str) -> Tablebase:
        """Tables from a list of directories separated by ``os.pathsep`` (``:`` on POSIX)."""
        return cls([part for part in text.split(os.pathsep) if part])

    def _complete(self) -> int:
        """The largest N with every WDL table of 3..N pieces present."""
        done = 2
        for n in range(3, 8):
            if not all(_name_key(name) in self._wdl for name in table_names(n)):
                break
            done = n
        return done

    # ------------------------------------------------------------------ listing

    def tables(self) -> list[str]:
        """Names of the tables found (WDL or DTZ), fewest pieces first."""
        names = set(self._wdl_names) | set(self._dtz_names)
        return sorted(names, key=lambda n: (len(n), n))

    def has_wdl(self, name: str) -> bool:
        """Whether the WDL file of a table (``"KRvK"``) was found."""
        return name in self._wdl_names

    def has_dtz(self, name: str) -> bool:
        """Whether the DTZ file of a table (``"KRvK"``) was found."""
        return name in self._dtz_names

    @staticmethod
    def pieces(board: Board) -> int:
        """The number of pieces on the board, kings included (cheap: check before probing)."""
        return board.occupied.bit_count()

    # ------------------------------------------------------------------ life cycle

    def close(self) -> None:
        """Unmap every open file (a later probe maps them again); not while another thread
        is probing."""
        for table in (*self._wdl_names.values(), *self._dtz_names.values()):
            table.close()

    def __enter__(self) -> Tablebase:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    # ------------------------------------------------------------------ public probes

    def _probeable(self, board: Board) -> bool:
        """Whether a board can be probed at all (no castling, few enough pieces)."""
        return not board.castling_rights and board.occupied.bit_count() <= self.max_pieces

    def probe_wdl(self, board: Board) -> int | None:
        """WDL from the side to move (2 win, 1 cursed win, 0 draw, -1 blessed loss, -2 loss)
        as if the fifty-move counter had just been reset; None when a table is missing, the
        position has too many pieces or castling rights."""
        if not self._probeable(board):
            return None
        try:
            return self._wdl_root(board)
        except _Missing:
            return None

    def probe_dtz(self, board: Board) -> int | None:
        """Signed DTZ50'' (plies to a zeroing move, python-chess's convention and rounding);
        None when a WDL or DTZ table is missing, too many pieces or castling rights."""
        if not self._probeable(board):
            return None
        try:
            return self._dtz_root(board)
        except _Missing:
            return None

    def best_move(self, board: Board) -> Move | None:
        """The move that keeps the best WDL result and then the best DTZ (fastest zeroing
        when winning, slowest when losing); None when the position cannot be probed or has
        no legal move."""
        if not self._probeable(board):
            return None
        try:
            return self._best_move(board)
        except _Missing:
            return None

    def move_dtz(self, board: Board, move: Move) -> int | None:
        """The DTZ of the position reached by a legal move, from the mover's side, counted
        from before the move (1 for a mate, the zeroing values for captures and pawn moves)."""
        if not self._probeable(board):
            return None
        try:
            return self._move_dtz(board, move)
        except _Missing:
            return None

    # ------------------------------------------------------------------ table lookups

    def _wdl_table(self, board: Board) -> int:
        """The WDL value stored for the board (captures and en passant not resolved)."""
        if board.occupied == board.kings:
            return 0
        key = board_key(board)
        t = self._wdl.get(key)
        if t is None:
            raise _Missing(key)
        if not t.ready:
            t.ensure()
        mm = t.mm
        assert mm is not None
        cm, mirror, bside = _orientation(t, key, board.turn)
        occ = board.occupied_co
        bbs = (0, board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings)
        pos: list[int] = []
        try:
            if not t.has_pawns:
                side = t.side[0][bside]
                for ptype, cbit in side.groups:
                    _squares(bbs[ptype] & occ[1 - (cbit ^ cm)], 0, pos)
                idx = encode_piece(t.enc, side.norm, pos, side.factor, t.num)
                return decompress(mm, t.pairs[0][bside], idx) - 2
            ptype, cbit = t.side[0][0].groups[0]
            _squares(bbs[ptype] & occ[1 - (cbit ^ cm)], mirror, pos)
            lead, other = t.pawns
            f = pawn_file(pos, lead)
            side = t.side[f][bside]
            for ptype, cbit in side.groups[1:]:
                _squares(bbs[ptype] & occ[1 - (cbit ^ cm)], mirror, pos)
            idx = encode_pawn(lead, other, side.norm, pos, side.factor, t.num)
            return decompress(mm, t.pairs[f][bside], idx) - 2
        except _CORRUPT as exc:
            raise TablebaseError(f"{t.path}: corrupt WDL table ({exc!r})") from exc

    def _dtz_table(self, board: Board, wdl: int) -> int | None:
        """The DTZ value stored for the board, None when the file stores the other side."""
        key = board_key(board)
        t = self._dtz.get(key)
        if t is None:
            raise _Missing(key)
        if not t.ready:
            t.ensure()
        mm = t.mm
        assert mm is not None
        cm, mirror, bside = _orientation(t, key, board.turn)
        occ = board.occupied_co
        bbs = (0, board.pawns, board.knights, board.bishops, board.rooks, board.queens, board.kings)
        pos: list[int] = []
        try:
            if not t.has_pawns:
                f = 0
                if (t.flags[0] & 1) != bside and not t.symmetric:
                    return None
                side = t.side[0]
                for ptype, cbit in side.groups:
                    _squares(bbs[ptype] & occ[1 - (cbit ^ cm)], 0, pos)
                idx = encode_piece(t.enc, side.norm, pos, side.factor, t.num)
            else:
                ptype, cbit = t.side[0].groups[0]
                _squares(bbs[ptype] & occ[1 - (cbit ^ cm)], mirror, pos)
                lead, other = t.pawns
                f = pawn_file(pos, lead)
                if (t.flags[f] & 1) != bside:
                    return None
                side = t.side[f]
                for ptype, cbit in side.groups[1:]:
                    _squares(bbs[ptype] & occ[1 - (cbit ^ cm)], mirror, pos)
                idx = encode_pawn(lead, other, side.norm, pos, side.factor, t.num)
            res = decompress(mm, t.pairs[f], idx)
            flags = t.flags[f]
            if flags & 2:
                slot = t.map_idx[f][WDL_TO_MAP[wdl + 2]] + res
                res = mm[t.map + slot] if not flags & 16 else _U16(mm, t.map + 2 * slot)[0]
        except _CORRUPT as exc:
            raise TablebaseError(f"{t.path}: corrupt DTZ table ({exc!r})") from exc
        # Stored in full moves unless the flag says plies; cursed values always in moves.
        if not flags & PA_FLAGS[wdl + 2] or wdl & 1:
            res *= 2
        return res

    # ------------------------------------------------------------------ searches

    def _probe_ab(self, board: Board, alpha: int, beta: int) -> tuple[int, int]:
        """WDL with captures resolved: (value, 2 when a capture is best, else 1)."""
        turn = board.turn
        them = board.occupied_co[not turn]
        if _attacks_any(board, turn, them & ~board.kings):
            for move in generate_legal(board, to_mask=them):
                board.push(move)
                try:
                    v = -self._probe_ab(board, -beta, -alpha)[0]
                finally:
                    board.pop()
                if v > alpha:
                    if v >= beta:
                        return v, 2
                    alpha = v
        v = self._wdl_table(board)
        if alpha >= v:
            return alpha, 1 + (alpha > 0)
        return v, 1

    def _ep_moves(self, board: Board) -> list[Move]:
        """The legal en passant captures."""
        ep = board.ep_square
        if ep is None:
            return []
        pawns = board.pawns & board.occupied_co[board.turn]
        return [m for m in generate_legal(board, from_mask=pawns, to_mask=BB_SQUARES[ep])
                if board.is_en_passant(m)]

    def _only_ep(self, board: Board) -> bool:
        """Whether every legal move is an en passant capture."""
        return all(board.is_en_passant(m) for m in board.generate_legal_moves())

    def _best_ep(self, board: Board, moves: list[Move]) -> int:
        """The best WDL among en passant captures (-3 when there are none)."""
        best = -3
        for move in moves:
            board.push(move)
            try:
                v = -self._probe_ab(board, -2, 2)[0]
            finally:
                board.pop()
            if v > best:
                best = v
        return best

    def _wdl_root(self, board: Board) -> int:
        """WDL of a position, en passant included."""
        v = self._probe_ab(board, -2, 2)[0]
        if board.ep_square is None:
            return v
        moves = self._ep_moves(board)
        if not moves:
            return v
        v1 = self._best_ep(board, moves)
        if v1 >= v:
            return v1
        # A losing en passant capture counts only when it is the only legal move.
        if v == 0 and self._only_ep(board):
            return v1
        return v

    def _dtz_no_ep(self, board: Board) -> int:
        """DTZ of a position ignoring en passant captures."""
        wdl, success = self._probe_ab(board, -2, 2)
        if wdl == 0:
            return 0
        if success == 2:
            return dtz_before_zeroing(wdl)
        turn_pieces = board.occupied_co[board.turn]
        if wdl > 0:
            # A winning pawn move zeroes at once.
            pawns = board.pawns & turn_pieces
            for move in generate_legal(board, from_mask=pawns, to_mask=~board.occupied & ((1 << 64) - 1)):
                if board.is_en_passant(move):
                    continue
                board.push(move)
                try:
                    v = -self._wdl_root(board)
                finally:
                    board.pop()
                if v == wdl:
                    return 1 if v == 2 else 101
        stored = self._dtz_table(board, wdl)
        if stored is not None:
            return dtz_before_zeroing(wdl) + (stored if wdl > 0 else -stored)
        # The file holds the other side to move: one ply of search.
        if wdl > 0:
            best = 0xFFFF
            pieces = turn_pieces & ~board.pawns
            for move in generate_legal(board, from_mask=pieces, to_mask=~board.occupied & ((1 << 64) - 1)):
                board.push(move)
                try:
                    v = -self._dtz_root(board)
                    if v == 1 and board.is_checkmate():
                        best = 1
                    elif v > 0 and v + 1 < best:
                        best = v + 1
                finally:
                    board.pop()
            return best
        best = -1
        for move in list(board.generate_legal_moves()):
            board.push(move)
            try:
                if board.halfmove_clock == 0:
                    if wdl == -2:
                        v = -1
                    else:
                        v = self._probe_ab(board, 1, 2)[0]
                        v = 0 if v == 2 else -101
                else:
                    v = -self._dtz_root(board) - 1
            finally:
                board.pop()
            if v < best:
                best = v
        return best

    def _dtz_root(self, board: Board) -> int:
        """DTZ of a position, en passant included."""
        v = self._dtz_no_ep(board)
        if board.ep_square is None:
            return v
        moves = self._ep_moves(board)
        if not moves:
            return v
        v1 = _WDL_TO_DTZ[self._best_ep(board, moves) + 2]
        if v < -100:
            if v1 >= 0:
                v = v1
        elif v < 0:
            if v1 >= 0 or v1 < -100:
                v = v1
        elif v > 100:
            if v1 > 0:
                v = v1
        elif v > 0:
            if v1 == 1:
                v = v1
        elif v1 >= 0 or self._only_ep(board):
            v = v1
        return v

    def _move_dtz(self, board: Board, move: Move) -> int:
        """DTZ after a move from the mover's side, counted from before it."""
        board.push(move)
        try:
            if board.halfmove_clock == 0:
                return dtz_before_zeroing(-self._wdl_root(board))
            d = -self._dtz_root(board)
            d = d + 1 if d > 0 else d - 1 if d < 0 else 0
            if d == 2 and board.is_checkmate():
                d = 1
            return d
        finally:
            board.pop()

    def _best_move(self, board: Board) -> Move | None:
        """The legal move with the best (WDL class, DTZ) pair; the first such in move order."""
        best: Move | None = None
        best_key = (-3, 0)
        for move in list(board.generate_legal_moves()):
            d = self._move_dtz(board, move)
            key = (_wdl_of_dtz(d), -d)
            if best is None or key > best_key:
                best, best_key = move, key
        return best


# ---------------------------------------------------------------------- table names

_ORDER = "KQRBNP"


def normalize_name(white: str, black: str) -> str:
    """The file name of a material balance: pieces strongest first, the side with more
    pieces (or, as many, the stronger pieces) before the ``v``."""
    w = "".join(sorted(white, key=_ORDER.index))
    b = "".join(sorted(black, key=_ORDER.index))
    if (len(w), [_ORDER.index(c) for c in b]) < (len(b), [_ORDER.index(c) for c in w]):
        w, b = b, w
    return f"{w}v{b}"


def table_names(pieces: int) -> list[str]:
    """Every table of `pieces` pieces (kings included), each once, sorted."""
    names: set[str] = set()
    extra = pieces - 2
    for n_white in range(extra + 1):
        for w in combinations_with_replacement(_ORDER[1:], n_white):
            for b in combinations_with_replacement(_ORDER[1:], extra - n_white):
                names.add(normalize_name("K" + "".join(w), "K" + "".join(b)))
    return sorted(names)
