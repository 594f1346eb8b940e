"""The order in which libstdc++'s ``std::unordered_map<std::string, T>`` lists its keys.

fastchess suggests the closest option for a misspelt one by walking its table of options (an
unordered_map) and keeping the first at the smallest edit distance: on a tie, the option it
names is the one its map lists first. That order follows from libstdc++'s string hash
(``_Hash_bytes``, a MurmurHash2 variant with seed 0xc70f6907), its prime bucket counts and the
way it links a new node into its singly linked list, all reproduced here for GCC 12 (the
compiler the fastchess in ../shared/peers was built with).
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["hash_bytes", "iteration_order"]

_MASK = (1 << 64) - 1
_MUL = (0xC6A4A793 << 32) + 0x5BD1E995
_SEED = 0xC70F6907
_FAST_BUCKETS = (2, 2, 2, 3, 5, 5, 7, 7, 11, 11, 11, 11, 13, 13)
# The start of libstdc++'s prime list: plenty for a table of command-line options.
_PRIMES = (13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 103,
           109, 113, 127, 137, 139, 149, 157, 167, 179, 193, 199, 211, 227, 241, 257)


def _shift_mix(value: int) -> int:
    return value ^ (value >> 47)


def hash_bytes(data: bytes, seed: int = _SEED) -> int:
    """libstdc++'s ``std::_Hash_bytes`` on 64-bit targets (``std::hash<std::string>``)."""
    length = len(data)
    aligned = length & ~7
    value = (seed ^ (length * _MUL)) & _MASK
    for start in range(0, aligned, 8):
        word = int.from_bytes(data[start:start + 8], "little")
        value ^= (_shift_mix((word * _MUL) & _MASK) * _MUL) & _MASK
        value = (value * _MUL) & _MASK
    if length & 7:
        value ^= int.from_bytes(data[aligned:], "little")
        value = (value * _MUL) & _MASK
    return _shift_mix((_shift_mix(value) * _MUL) & _MASK)


class _Table:
    """The node list of an unordered_map with unique keys, as its inserts and rehashes leave it."""

    def __init__(self) -> None:
        self.buckets = 1
        self.next_resize = 0
        self.nodes: list[str] = []
        self.before: dict[int, str | None] = {}
        """Per non-empty bucket, the node before its first (None: the list's head)."""

    def _next_buckets(self, wanted: int) -> int:
        if wanted < len(_FAST_BUCKETS):
            count = _FAST_BUCKETS[wanted] if wanted else 1
        else:
            count = next(p for p in _PRIMES if p >= wanted)
        self.next_resize = count
        return count

    def _link(self, key: str, bucket: int) -> None:
        """Link `key` at the start of its bucket, or at the list's head for an empty one."""
        if bucket in self.before:
            before = self.before[bucket]
            self.nodes.insert(0 if before is None else self.nodes.index(before) + 1, key)
            return
        for other, node in self.before.items():
            if node is None:  # the bucket that was at the head now follows the new node
                self.before[other] = key
        self.nodes.insert(0, key)
        self.before[bucket] = None

    def insert(self, key: str) -> None:
        """Insert a new key, growing the table first when libstdc++'s policy says so."""
        count = len(self.nodes)
        if count + 1 > self.next_resize:
            least = max(count + 1, 0 if self.next_resize else 11)
            if least >= self.buckets:
                size = self._next_buckets(max(least + 1, self.buckets * 2))
                old, self.nodes, self.before, self.buckets = self.nodes, [], {}, size
                for node in old:
                    self._link(node, hash_bytes(node.encode()) % size)
            else:
                self.next_resize = self.buckets
        self._link(key, hash_bytes(key.encode()) % self.buckets)


def iteration_order(keys: Iterable[str]) -> list[str]:
    """The order an unordered_map lists `keys` in after inserting them in the order given."""
    table = _Table()
    for key in keys:
        table.insert(key)
    return table.nodes
