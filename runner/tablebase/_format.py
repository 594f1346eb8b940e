"""The Syzygy file format: one table file, its header, its sub-tables and where their data lies.

A Syzygy table stores one value per position of a material balance (for example KRvKP), the
positions numbered by an index that folds away the board's symmetries (`runner.tablebase._index`),
one sub-table per side to move and, with pawns, per leading-pawn file. Each sub-table's values
are compressed ("pairs" compression, decoded by `runner.tablebase._pairs`); the file holds, for
each sub-table, its piece order, its decoder header, an index of blocks, the block sizes and
the blocks themselves.

This module parses one file (`WdlFile`, `DtzFile`); `runner.tablebase.probe` does the
chess around it (captures, en passant, the search over moves a DTZ table does not store).
Everything a probe needs is computed when a file is first opened, so a probe allocates
little and reads only the bytes of one block.
"""
from __future__ import annotations

import mmap
import os
import struct
import threading

from runner.tablebase._index import factors_pawn, factors_piece, norm_pieces
from runner.tablebase._pairs import Pairs, TablebaseError, read_pairs

WDL_MAGIC = b"\x71\xe8\x23\x5d"
DTZ_MAGIC = b"\xd7\x66\x0c\xa5"

PIECE_LETTERS = "PNBRQK"
"""Letter of each piece type, indexed by type - 1 (the rules core's PAWN = 1 ... KING = 6)."""

WDL_TO_MAP = (1, 3, 0, 2, 0)
"""DTZ value map slot of each WDL (indexed by wdl + 2)."""
PA_FLAGS = (8, 0, 0, 0, 4)
"""DTZ flag bit saying a loss (-2) or win (2) is stored in plies, not halved."""


# ---------------------------------------------------------------------- one file


_U16 = struct.Struct("<H").unpack_from


class SideTable:
    """How to index one sub-table: piece order, group sizes and factors."""

    __slots__ = ("pieces", "groups", "norm", "factor", "size")

    def __init__(self, pieces: list[int], norm: list[int], factor: list[int], size: int) -> None:
        self.pieces = pieces
        self.norm = norm
        self.factor = factor
        self.size = size
        # (piece type, color bit) of each run of equal pieces, in table order: how to fill the
        # square list from a board's bitboards.
        groups: list[tuple[int, int]] = []
        i = 0
        while i < len(pieces):
            groups.append((pieces[i] & 7, pieces[i] >> 3))
            j = i
            while j < len(pieces) and pieces[j] == pieces[i]:
                j += 1
            i = j
        self.groups = groups


def _encoding(white: str, black: str) -> int:
    """Pawnless encoding: 0 when three or more pieces are unique (one goes in the triangle
    and two more fix the rest), 2 when only the kings are."""
    unique = sum(1 for part in (white, black) for c in PIECE_LETTERS if part.count(c) == 1)
    return 0 if unique >= 3 else 2

def material_key(white: str, black: str) -> int:
    """An integer naming a material balance: 4 bits per piece count, white's below black's."""
    key = 0
    for c in white:
        key += 1 << (4 * PIECE_LETTERS.index(c))
    for c in black:
        key += 1 << (24 + 4 * PIECE_LETTERS.index(c))
    return key


def mirror_key(key: int) -> int:
    """The material key with the colours swapped."""
    return (key >> 24) | ((key & 0xFFFFFF) << 24)


def _pieces_key(pieces: list[int]) -> int:
    """The material key of a stored piece list (colour bit 8 = black)."""
    key = 0
    for p in pieces:
        key += 1 << ((24 if p & 8 else 0) + 4 * ((p & 7) - 1))
    return key


class TableFile:
    """One `.rtbw` or `.rtbz` file: opened and parsed on first use, memory-mapped read-only."""

    magic = b""
    is_wdl = True

    def __init__(self, path: str, name: str) -> None:
        self.path = path
        self.name = name
        white, black = name.split("v")
        self.num = len(name) - 1
        self.has_pawns = "P" in name
        self.key = material_key(white, black)
        self.mirrored_key = mirror_key(self.key)
        self.symmetric = self.key == self.mirrored_key
        # Leading pawns: the side with fewer (but some) pawns, the second part on a tie.
        lead, other = black.count("P"), white.count("P")
        if other > 0 and (lead == 0 or other < lead):
            lead, other = other, lead
        self.pawns = (lead, other)
        self.enc = 0 if self.has_pawns else _encoding(white, black)
        self.mm: mmap.mmap | None = None
        self._lock = threading.Lock()
        self.ready = False

    def _open(self) -> mmap.mmap:
        """Map the file and check its size and magic number."""
        fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        try:
            size = os.fstat(fd).st_size
            if size < 64 or size % 64 != 16:
                raise TablebaseError(f"{self.path}: size {size} is not that of a Syzygy table (64n + 16)")
            mm = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
        finally:
            os.close(fd)
        if hasattr(mm, "madvise") and hasattr(mmap, "MADV_RANDOM"):
            mm.madvise(mmap.MADV_RANDOM)  # probes touch single blocks: no read-ahead
        if mm[:4] != self.magic:
            mm.close()
            raise TablebaseError(f"{self.path}: bad magic number (not a Syzygy {self.kind} table)")
        return mm

    @property
    def kind(self) -> str:
        """"WDL" or "DTZ"."""
        return "WDL" if self.is_wdl else "DTZ"

    def ensure(self) -> None:
        """Open and parse the file once (thread-safe)."""
        if self.ready:
            return
        with self._lock:
            if self.ready:
                return
            mm = self._open()
            try:
                self._parse(mm)
            except (IndexError, ValueError, struct.error, KeyError, ZeroDivisionError) as exc:
                mm.close()
                raise TablebaseError(f"{self.path}: corrupt {self.kind} table ({exc})") from exc
            except TablebaseError as exc:
                mm.close()
                raise TablebaseError(f"{self.path}: {exc}") from exc
            self.mm = mm
            self.ready = True

    def _parse(self, mm: mmap.mmap) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """Unmap the file; the next probe maps it again."""
        with self._lock:
            if self.mm is not None:
                self.mm.close()
                self.mm = None
            self.ready = False

    def _side_piece(self, mm: mmap.mmap, ptr: int, high: bool) -> SideTable:
        """The pawnless ordering of one side stored at `ptr` (low or high nibbles)."""
        shift = 4 if high else 0
        order = (mm[ptr] >> shift) & 0x0F
        pieces = [(mm[ptr + 1 + i] >> shift) & 0x0F for i in range(self.num)]
        norm = norm_pieces(pieces, 3 if self.enc == 0 else 2)
        factor, size = factors_piece(norm, order, self.enc, self.num)
        return SideTable(pieces, norm, factor, size)

    def _side_pawn(self, mm: mmap.mmap, ptr: int, high: bool, file: int) -> SideTable:
        """The ordering of one side and leading-pawn file of a table with pawns."""
        shift = 4 if high else 0
        lead, other = self.pawns
        skip = 1 + (other > 0)
        order = (mm[ptr] >> shift) & 0x0F
        order2 = (mm[ptr + 1] >> shift) & 0x0F if other else 0x0F
        pieces = [(mm[ptr + skip + i] >> shift) & 0x0F for i in range(self.num)]
        norm = [0] * self.num
        norm[0] = lead
        if other:
            norm[lead] = other
        i = lead + other
        while i < self.num:
            j = i
            while j < self.num and pieces[j] == pieces[i]:
                norm[i] += 1
                j += 1
            i += norm[i]
        factor, size = factors_pawn(norm, order, order2, file, self.num)
        return SideTable(pieces, norm, factor, size)


class WdlFile(TableFile):
    """A WDL table: both sides to move (unless symmetric), values 0..4 = wdl + 2."""

    magic = WDL_MAGIC
    is_wdl = True

    def _parse(self, mm: mmap.mmap) -> None:
        split = mm[4] & 0x01
        sides = 2 if split else 1
        ptr = 5
        # sides_by_file[f][bside] and pairs_by_file[f][bside]; pawnless tables have one "file".
        self.side: list[list[SideTable]] = []
        self.pairs: list[list[Pairs]] = []
        if not self.has_pawns:
            self.side.append([self._side_piece(mm, ptr, False), self._side_piece(mm, ptr, True)])
            ptr += self.num + 1
            files = 1
            # The stored piece order says which colour is the table's "white".
            self.key = _pieces_key(self.side[0][0].pieces)
            self.mirrored_key = mirror_key(self.key)
        else:
            skip = 1 + (self.pawns[1] > 0)
            for f in range(4):
                self.side.append([self._side_pawn(mm, ptr, False, f), self._side_pawn(mm, ptr, True, f)])
                ptr += self.num + skip
            files = 4
        ptr += ptr & 1
        sizes: list[list[tuple[int, int, int]]] = []
        for f in range(files):
            row_pairs, row_sizes = [], []
            for s in range(sides):
                d, ptr, size = read_pairs(mm, ptr, self.side[f][s].size, True)
                row_pairs.append(d)
                row_sizes.append(size)
            self.pairs.append(row_pairs)
            sizes.append(row_sizes)
        for f in range(files):
            for s in range(sides):
                self.pairs[f][s].indextable = ptr
                ptr += sizes[f][s][0]
        for f in range(files):
            for s in range(sides):
                self.pairs[f][s].sizetable = ptr
                ptr += sizes[f][s][1]
        for f in range(files):
            for s in range(sides):
                ptr = (ptr + 0x3F) & ~0x3F
                self.pairs[f][s].data = ptr
                ptr += sizes[f][s][2]
        if ptr > len(mm):
            raise TablebaseError(f"data runs past the end of the file ({ptr} > {len(mm)})")
        if sides == 1:
            for row in self.pairs:
                row.append(row[0])


class DtzFile(TableFile):
    """A DTZ table: one side to move per file (flag bit 0), values possibly remapped."""

    magic = DTZ_MAGIC
    is_wdl = False

    def _parse(self, mm: mmap.mmap) -> None:
        ptr = 5
        self.side: list[SideTable] = []
        self.pairs: list[Pairs] = []
        self.flags: list[int] = []
        self.map_idx: list[list[int]] = []
        if not self.has_pawns:
            self.side.append(self._side_piece(mm, ptr, False))
            ptr += self.num + 1
            files = 1
            self.key = _pieces_key(self.side[0].pieces)
            self.mirrored_key = mirror_key(self.key)
        else:
            skip = 1 + (self.pawns[1] > 0)
            for f in range(4):
                self.side.append(self._side_pawn(mm, ptr, False, f))
                ptr += self.num + skip
            files = 4
        ptr += ptr & 1
        sizes = []
        for f in range(files):
            self.flags.append(mm[ptr])
            d, ptr, size = read_pairs(mm, ptr, self.side[f].size, False)
            self.pairs.append(d)
            sizes.append(size)
        # Value maps: for each file, four runs (one per WDL class) translating decoded
        # symbols into DTZ values, bytes or 16-bit words.
        self.map = ptr
        for f in range(files):
            idx = [0, 0, 0, 0]
            flags = self.flags[f]
            if flags & 2:
                if not flags & 16:
                    for i in range(4):
                        idx[i] = ptr + 1 - self.map
                        ptr += 1 + mm[ptr]
                else:
                    if self.has_pawns:
                        ptr += ptr & 1
                    for i in range(4):
                        idx[i] = (ptr + 2 - self.map) // 2
                        ptr += 2 + 2 * _U16(mm, ptr)[0]
            self.map_idx.append(idx)
        ptr += ptr & 1
        for f in range(files):
            self.pairs[f].indextable = ptr
            ptr += sizes[f][0]
        for f in range(files):
            self.pairs[f].sizetable = ptr
            ptr += sizes[f][1]
        for f in range(files):
            ptr = (ptr + 0x3F) & ~0x3F
            self.pairs[f].data = ptr
            ptr += sizes[f][2]
        if ptr > len(mm):
            raise TablebaseError(f"data runs past the end of the file ({ptr} > {len(mm)})")


