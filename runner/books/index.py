"""Where the entries of a mapped book file start, every so many entries, found on demand.

Shared by the EPD and PGN books of `runner.books.openings` (moved here to keep that module
within its size).
"""

from __future__ import annotations

import mmap
import re
from array import array
from collections.abc import Iterator

__all__ = ["SparseIndex"]


class SparseIndex:
    """Offsets and line numbers of every ``every``-th entry of a mapped file, found on demand.

    ``groups`` yields the offset of each successive group of ``every`` entries; ``unit``
    matches one entry (with any blank or comment lines before it), to step inside a group.
    Memory: two numbers per group, nothing per entry.
    """

    def __init__(
        self,
        data: mmap.mmap | bytes,
        groups: Iterator[int],
        every: int = 1,
        unit: re.Pattern[bytes] | None = None,
    ) -> None:
        self._data = data
        self._groups = groups
        self._every = every
        self._unit = unit
        self._offsets = array("q")
        self._lines = array("q")
        self._complete = False
        self._count: int | None = None

    def _extend_to(self, group: int) -> bool:
        offsets, lines = self._offsets, self._lines
        while len(offsets) <= group and not self._complete:
            start = next(self._groups, None)
            if start is None:
                self._complete = True
            elif offsets:
                lines.append(lines[-1] + self._data[offsets[-1] : start].count(b"\n"))
                offsets.append(start)
            else:
                lines.append(1 + self._data[:start].count(b"\n"))
                offsets.append(start)
        return group < len(offsets)

    def locate(self, index: int) -> tuple[int, int] | None:
        """(offset, line) where the region of entry ``index`` starts, or None past the end."""
        if index < 0:
            return None
        group, inside = divmod(index, self._every)
        if not self._extend_to(group):
            return None
        offset, line = self._offsets[group], self._lines[group]
        for _ in range(inside):
            assert self._unit is not None
            current = self._unit.match(self._data, offset)
            if current is None or self._unit.match(self._data, current.end()) is None:
                return None
            offset = current.end()
            line += current.group().count(b"\n")
        return offset, line

    def __len__(self) -> int:
        if self._count is None:
            self._extend_to(1 << 62)
            count = 0
            if self._offsets:
                count = (len(self._offsets) - 1) * self._every
                position = self._offsets[-1]
                while self._unit is not None and (
                    found := self._unit.match(self._data, position)
                ):
                    count += 1
                    position = found.end()
                if self._unit is None:
                    count += 1
            self._count = count
        return self._count
