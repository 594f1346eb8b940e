"""The Syzygy compressed-data decoder: one sub-table's "pairs" code and the value at an index.

The values of a sub-table are compressed with a canonical prefix code whose symbols expand
recursively into runs of values; the file holds an index of blocks, the block sizes and the
blocks. `read_pairs` reads a sub-table's header and builds its decode tables once, when the
file is first opened; `decompress` then reads the bytes of one block per probe.
"""

from __future__ import annotations

import mmap
import struct


class TablebaseError(Exception):
    """A table file is corrupt or not a Syzygy file (a missing table is never an error)."""


_U16 = struct.Struct("<H").unpack_from
_U32 = struct.Struct("<I").unpack_from
_U64_BE = struct.Struct(">Q").unpack_from
_U32_BE = struct.Struct(">I").unpack_from


class Pairs:
    """The decoder of one compressed sub-table (one side to move, one pawn file)."""

    __slots__ = ("constant", "value", "idxbits", "blocksize", "indextable", "sizetable",
                 "data", "base", "lowsym", "symlen", "left", "right", "leaf", "min_len",
                 "fast_len", "fast_sym", "skip_bits", "skip_run", "run")

    def __init__(self) -> None:
        self.constant = False
        self.value = 0
        self.idxbits = 0
        self.blocksize = 0
        self.indextable = 0
        self.sizetable = 0
        self.data = 0
        self.min_len = 0
        self.base: list[int] = []
        self.lowsym: list[int] = []
        self.symlen: list[int] = []
        self.left: list[int] = []
        self.right: list[int] = []
        self.leaf: list[int] = []
        self.run: list[int] = []
        self.fast_len: list[int] = []
        self.fast_sym: list[int] = []
        self.skip_bits: list[int] = []
        self.skip_run: list[int] = []


def read_pairs(mm: mmap.mmap, ptr: int, tb_size: int, wdl: bool) -> tuple[Pairs, int, tuple[int, int, int]]:
    """Read a sub-table's decoder header at `ptr`: the decoder, where the next header
    starts, and the byte sizes of its index table, size table and data."""
    d = Pairs()
    flags = mm[ptr]
    if flags & 0x80:
        # The whole sub-table holds one value (a DTZ one stores 0 here: every entry is 0).
        d.constant = True
        d.value = mm[ptr + 1] if wdl else 0
        return d, ptr + 2, (0, 0, 0)
    d.blocksize = mm[ptr + 1]
    d.idxbits = mm[ptr + 2]
    real_blocks = _U32(mm, ptr + 4)[0]
    blocks = real_blocks + mm[ptr + 3]
    max_len = mm[ptr + 8]
    min_len = mm[ptr + 9]
    h = max_len - min_len + 1
    nsyms = _U16(mm, ptr + 10 + 2 * h)[0]
    d.min_len = min_len
    # lowsym[l]: the first symbol of code length l; base[l]: the smallest left-aligned
    # 64-bit code of length l (canonical prefix code, longest codes numerically smallest).
    low = [_U16(mm, ptr + 10 + 2 * i)[0] for i in range(h)]
    base = [0] * h
    for i in range(h - 2, -1, -1):
        base[i] = (base[i + 1] + low[i] - low[i + 1]) // 2
    if any(b < 0 for b in base):
        raise TablebaseError("bad code lengths in a pairs header")
    d.base = [0] * min_len + [b << (64 - (min_len + i)) for i, b in enumerate(base)]
    d.lowsym = [0] * min_len + low
    # Each symbol is a leaf (one value) or a pair of two earlier symbols; symlen is the
    # number of values it expands to, minus one.
    sympat = ptr + 12 + 2 * h
    # Three bytes per symbol: two 12-bit halves, the left (or, for a leaf, the value: its low
    # byte in a WDL table) and the right (0xFFF for a leaf).
    pattern = mm[sympat:sympat + 3 * nsyms]
    if len(pattern) != 3 * nsyms:
        raise TablebaseError("symbol table runs past the end of the file")
    b0, b1, b2 = pattern[0::3], pattern[1::3], pattern[2::3]
    left = [x | ((y & 0x0F) << 8) for x, y in zip(b0, b1, strict=True)]
    right = [(z << 4) | (y >> 4) for y, z in zip(b1, b2, strict=True)]
    leaf = list(b0) if wdl else left
    # Pairs are made of earlier symbols, so one pass in order usually does; a file that
    # refers forward is still read right, by the slower walk.
    symlen = [-1] * nsyms
    for s in range(nsyms):
        a, b = left[s], right[s]
        if b == 0xFFF:
            symlen[s] = 0
        elif a < s and b < s:
            symlen[s] = symlen[a] + symlen[b] + 1
        else:
            _symbol_length(s, symlen, left, right)
    d.symlen, d.left, d.right, d.leaf = symlen, left, right, leaf
    d.run = [n + 1 for n in symlen]
    _fast_table(d, max_len)
    nxt = sympat + 3 * nsyms + (nsyms & 1)
    indices = (tb_size + (1 << d.idxbits) - 1) >> d.idxbits
    return d, nxt, (6 * indices, 2 * blocks, (1 << d.blocksize) * real_blocks)


_FAST_BITS = 12
_NONE = 1 << 62
"""Skip run of a prefix holding no whole code: more than any index, so never skipped."""
_UNKNOWN = 1 << 63
"""Skip run of a prefix not yet worked out (on its first use, by `_fill_skip`)."""


def _fast_table(d: Pairs, max_len: int) -> None:
    """Decode tables for the top `_FAST_BITS` bits of the code window.

    For the first code in those bits: its length and symbol when it is that short, else the
    length its search starts from. And, filled in when a probe first meets the prefix, for
    all the whole codes in those bits together: how many bits they take and how many values
    they expand to, so that a probe skips them in one step when the value it wants lies
    further on (most codes are a few bits long).
    """
    width = _FAST_BITS
    shift = 64 - width
    top = 1 << width
    base, lowsym = d.base, d.lowsym
    lengths = [max_len] * top
    symbols = [-1] * top
    # Codes of length n are the windows in [base[n], base[n - 1]): the prefixes whose
    # largest window falls there start their search at n, and know their code when n fits.
    upper = 1 << 64
    for n in range(d.min_len, max_len + 1):
        lower = base[n]
        first, end = lower >> shift, upper >> shift
        if first < end:
            lengths[first:end] = [n] * (end - first)
            if n <= width:
                symbols[first:end] = [lowsym[n] + ((t - first) >> (width - n)) for t in range(first, end)]
        upper = min(upper, lower)
    d.fast_len, d.fast_sym = lengths, symbols
    d.skip_bits = [0] * top
    d.skip_run = [_UNKNOWN] * top


def _fill_skip(d: Pairs, top: int) -> int:
    """Work out the skip entry of one prefix: the whole codes in its bits, one after another
    (the bits after the prefix read as zero: a code that fits is still found right, one that
    does not ends the run). Returns its run."""
    width = _FAST_BITS
    used = total = 0
    while True:
        t = (top << used) & ((1 << width) - 1)
        n = d.fast_len[t]
        sym = d.fast_sym[t]
        if sym < 0 or used + n > width:
            break
        total += d.run[sym]
        used += n
    d.skip_bits[top] = used
    run = d.skip_run[top] = total if used else _NONE
    return run


def _symbol_length(s: int, symlen: list[int], left: list[int], right: list[int]) -> int:
    """Fill symlen[s] (and what it depends on) without deep recursion."""
    stack = [s]
    while stack:
        t = stack[-1]
        if symlen[t] >= 0:
            stack.pop()
            continue
        if right[t] == 0xFFF:
            symlen[t] = 0
            stack.pop()
            continue
        a, b = left[t], right[t]
        if a >= len(symlen) or b >= len(symlen) or len(stack) > len(symlen):
            raise TablebaseError("bad symbol tree in a pairs header")
        if symlen[a] < 0:
            stack.append(a)
        elif symlen[b] < 0:
            stack.append(b)
        else:
            symlen[t] = symlen[a] + symlen[b] + 1
            stack.pop()
    return symlen[s]


def decompress(mm: mmap.mmap, d: Pairs, idx: int) -> int:
    """The value stored at index `idx` of a sub-table."""
    if d.constant:
        return d.value
    idxbits = d.idxbits
    main = idx >> idxbits
    lit = (idx & ((1 << idxbits) - 1)) - (1 << (idxbits - 1))
    entry = d.indextable + 6 * main
    block = _U32(mm, entry)[0]
    lit += _U16(mm, entry + 4)[0]
    sizetable = d.sizetable
    # The index entry names a block and an offset from the middle of the index range; walk
    # to the block that holds the value.
    if lit < 0:
        while lit < 0:
            block -= 1
            lit += _U16(mm, sizetable + 2 * block)[0] + 1
    else:
        size = _U16(mm, sizetable + 2 * block)[0]
        while lit > size:
            lit -= size + 1
            block += 1
            size = _U16(mm, sizetable + 2 * block)[0]
    ptr = d.data + (block << d.blocksize)
    code = _U64_BE(mm, ptr)[0]
    ptr += 8
    bits = 0
    base, lowsym, runs = d.base, d.lowsym, d.run
    fast_len, fast_sym, skip_bits, skip_run = d.fast_len, d.fast_sym, d.skip_bits, d.skip_run
    while True:
        top = code >> 52
        run = skip_run[top]
        if run == _UNKNOWN:
            run = _fill_skip(d, top)
        if lit >= run:
            # The value lies past every code in the top bits: skip them all at once.
            lit -= run
            n = skip_bits[top]
        else:
            n = fast_len[top]
            sym = fast_sym[top]
            if sym < 0:
                while code < base[n]:
                    n += 1
                sym = lowsym[n] + ((code - base[n]) >> (64 - n))
            run = runs[sym]
            if lit < run:
                break
            lit -= run
        code = (code << n) & 0xFFFFFFFFFFFFFFFF
        bits += n
        if bits >= 32:
            bits -= 32
            code |= _U32_BE(mm, ptr)[0] << bits
            ptr += 4
    left, right, symlen = d.left, d.right, d.symlen
    while symlen[sym]:
        a = left[sym]
        run = symlen[a] + 1
        if lit < run:
            sym = a
        else:
            lit -= run
            sym = right[sym]
    return d.leaf[sym]
