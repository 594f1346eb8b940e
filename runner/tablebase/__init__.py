"""Syzygy endgame tablebases: our own reader of `.rtbw` (WDL) and `.rtbz` (DTZ) files.

`Tablebase` finds the tables in some directories and probes a `runner.rules.Board`:
`probe_wdl` (-2..2 from the side to move), `probe_dtz` (signed plies to a zeroing move) and
`best_move` (by DTZ), each None when a table is missing. Files are opened lazily and
memory-mapped read-only. Only the rules core and the standard library are used.
"""

from runner.tablebase._pairs import TablebaseError
from runner.tablebase.probe import Tablebase, dtz_before_zeroing, normalize_name, table_names

__all__ = ["Tablebase", "TablebaseError", "dtz_before_zeroing", "normalize_name", "table_names"]
