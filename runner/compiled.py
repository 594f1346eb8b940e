"""Which code runs: the mypyc-compiled hot modules, or the same modules as Python source.

`setup.py` compiles the modules named in `COMPILED` when a C compiler is present (environment
variable ``RUNNER_COMPILE``: 0 pure, 1 compiled or fail, unset automatic). At run time Python
imports an extension module in preference to the ``.py`` beside it, so this module decides,
when the package is imported, whether the source must be imported instead:

- ``RUNNER_PURE=1`` asks for the pure-Python modules although compiled ones are installed
  (to compare the two, or to debug with the source);
- in a source checkout (an editable install builds its extensions in place) a ``.py`` edited
  after its extension was built would otherwise be shadowed by the old compiled code; then the
  whole package runs as source, with one line on stderr saying to reinstall. Compiled modules
  of one build call each other directly, so one module cannot be swapped alone.

Only the standard library is imported here: `setup.py` reads `COMPILED` from this file.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

__all__ = ["COMPILED", "PURE_ENV", "describe", "select"]

PURE_ENV = "RUNNER_PURE"
"""The environment variable that, set to 1, makes the package import its Python source."""

COMPILED = (
    "runner.clock",
    "runner.game.adjudication",
    "runner.game.arbiter",
    "runner.game.core",
    "runner.game.play",
    "runner.game.relay",
    "runner.protocol.cecp",
    "runner.protocol.cecp_commands",
    "runner.protocol.cecp_dialogue",
    "runner.protocol.cecp_features",
    "runner.protocol.cecp_parse",
    "runner.protocol.cecp_reading",
    "runner.protocol.cecp_startup",
    "runner.protocol.engine",
    "runner.protocol.freeze",
    "runner.protocol.lifetime",
    "runner.protocol.options",
    "runner.protocol.pipe",
    "runner.protocol.piped",
    "runner.protocol.process",
    "runner.protocol.rawio",
    "runner.protocol.reading",
    "runner.protocol.stdio",
    "runner.protocol.streamio",
    "runner.protocol.transport",
    "runner.protocol.uci",
    "runner.protocol.uci_parse",
    "runner.protocol.uci_reading",
    "runner.protocol.uci_search",
    "runner.protocol.waiting",
    "runner.rules._polyglot",
    "runner.rules.board",
    "runner.rules.endings",
    "runner.rules.fen",
    "runner.rules.makemove",
    "runner.rules.move",
    "runner.rules.movegen",
    "runner.rules.outcome",
    "runner.rules.perft",
    "runner.rules.position",
    "runner.rules.san",
    "runner.rules.squares",
    "runner.rules.status",
    "runner.rules.zobrist",
    "runner.stats.tally",
)
"""The modules mypyc compiles: the rules core, the engine-line parsers and clients, the game
loop, the clock and the tally (package ``__init__`` files stay Python: they only re-export).

What compiling them needs, and what stays Python:

- pydantic reads the fields of the dataclasses it converts (the configuration's, a job's, a
  game record's), and mypyc's classes are closed to it: the ones in compiled modules
  (`TimePeriod`, `TimeControl`, `AdjudicationRules`, `EngineConfig`) are declared plain Python
  classes (``mypyc_attr(native_class=False)``) with quoted field annotations, since mypyc turns
  ``int | None`` into ``type`` in what pydantic reads; the engine exceptions are plain classes
  too (mypyc's native classes cannot derive from RuntimeError or ValueError).
- `runner.game.record`, `runner.game.job`, `runner.game.slot` and `runner.game.live` stay Python:
  their dataclasses are what pydantic converts for the cluster (records, jobs, slot outcomes
  with a ``Literal`` tag, live moves), and they run once per game, not per ply.
- `runner.protocol.factory` (an async generator, which mypyc does not compile; once per game),
  `runner.protocol.loop` (chooses the event loop once) and `runner.game.termination` (an enum
  only) stay Python: nothing there runs per ply.
- compiled, a variable has one type: an ``except`` clause binding another exception type
  than an earlier clause of the same function takes a name of its own."""

_PACKAGE = os.path.dirname(os.path.abspath(__file__))
_PROBE = "runner.rules.board"
"""A compiled module whose extension file tells whether this installation is compiled."""

_reason = ""
"""Why the source runs although compiled modules are installed ("" when it does not)."""


def _source_path(name: str) -> str:
    return os.path.join(os.path.dirname(_PACKAGE), *name.split(".")) + ".py"


def _extension_path(name: str) -> str | None:
    """The compiled module's file, if one is installed beside its source."""
    base = os.path.join(os.path.dirname(_PACKAGE), *name.split("."))
    for suffix in importlib.machinery.EXTENSION_SUFFIXES:
        if os.path.exists(base + suffix):
            return base + suffix
    return None


class _SourceFinder:
    """Finds the ``.py`` file of a compiled module, ahead of Python's extension-first search."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        """The source module's spec for a name in `COMPILED`; None leaves others to Python."""
        if fullname not in _NAMES:
            return None
        return importlib.util.spec_from_file_location(fullname, _source_path(fullname))


_NAMES = frozenset(COMPILED)


def _stale() -> bool:
    """True when a source checkout holds a compiled module older than its ``.py``."""
    # Only a checkout (where the developer edits): an installed wheel's files all carry the
    # time they were unpacked, in no particular order.
    if not os.path.exists(os.path.join(os.path.dirname(_PACKAGE), "pyproject.toml")):
        return False
    if _extension_path(_PROBE) is None:
        return False
    for name in COMPILED:
        extension = _extension_path(name)
        if extension is None or os.stat(_source_path(name)).st_mtime > os.stat(extension).st_mtime:
            return True
    return False


def select() -> None:
    """Run the Python source instead of the compiled modules when asked or when they are stale.

    Called once, when the ``runner`` package is imported, before any compiled module is.
    """
    global _reason
    if os.environ.get(PURE_ENV, "").strip() not in ("", "0"):
        _reason = f"{PURE_ENV}={os.environ[PURE_ENV]}"
    elif _stale():
        _reason = "sources edited since the build"
        print("runner: compiled modules are older than their sources (edited since `pip install"
              " -e .`); running the Python source. Reinstall to compile again, or set"
              " RUNNER_COMPILE=0 when installing to stay pure.", file=sys.stderr)
    else:
        return
    sys.meta_path.insert(0, _SourceFinder())


def describe() -> str:
    """One line for ``runner --version``: whether the compiled modules are in use, and why not."""
    if _extension_path(_PROBE) is None:
        return "compiled: no (pure Python build)"
    if _reason:
        return f"compiled: no ({_reason}; compiled modules installed)"
    return f"compiled: yes (mypyc, {len(COMPILED)} modules)"
