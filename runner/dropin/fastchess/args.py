"""fastchess 1.8's command line, read as fastchess reads it, with its defaults and its refusals.

The reading follows fastchess's own order: options left to right (an option takes the words
after it up to the next word starting with ``-`` that is not a negative number), ``-each``
applied after all the others, then the checks fastchess runs once everything is read
(``sanitize``). A refusal is raised as `PeerUsageError` with fastchess's words, to stdout
with exit status 1 as fastchess prints them; what fastchess prints before refusing (its
warnings about the book) comes first in the same text. The result is plain data
(`FastchessArgs`); runner.dropin.fastchess.build turns it into a tournament.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Sequence
from pathlib import Path

from runner.dropin.contract import PeerUsageError
from runner.dropin.fastchess.options import (
    KEY_VALUE,
    KEY_VALUE_OPTIONAL,
    NONE,
    OPTIONS,
    SINGLE,
    KeyValues,
    Option,
)
from runner.dropin.fastchess.values import (
    INT_MAX,
    EngineArgs,
    FastchessArgs,
    FastchessError,
    HelpAsked,
    Limits,
    VersionAsked,
)

__all__ = ["OPTIONS", "EngineArgs", "FastchessArgs", "FastchessError", "HelpAsked", "Limits",
           "VersionAsked", "read_argv"]


def _levenshtein(a: str, b: str) -> int:
    if len(a) > len(b):
        a, b = b, a
    previous = list(range(len(a) + 1))
    for j in range(1, len(b) + 1):
        current = [j] + [0] * len(a)
        for i in range(1, len(a) + 1):
            current[i] = min(previous[i - 1] + (a[i - 1] != b[j - 1]), current[i - 1] + 1,
                             previous[i] + 1)
        previous = current
    return previous[-1]


def _suggestion(arg: str) -> str | None:
    """The closest option within two edits; on a tie the one fastchess names, the first its
    table (a libstdc++ unordered_map) lists."""
    from runner.dropin.fastchess.stdhash import iteration_order

    best, distance = None, INT_MAX
    for option in iteration_order(OPTIONS):
        far = _levenshtein(arg, option)
        if far < distance:
            best, distance = option, far
    return best if distance <= 2 else None


def _call(flag: str, option: Option, params: list[str], a: FastchessArgs) -> None:
    """Check `params` against the option's style and run it (fastchess's wrapHandler)."""
    if option.style == NONE:
        if params:
            raise FastchessError(f'Option "{flag}" does not accept parameters.')
        option.handle(a)
    elif option.style == SINGLE:
        if len(params) != 1:
            raise FastchessError(f'Option "{flag}" expects exactly one value.')
        option.handle(params[0], a)
    elif option.style in (KEY_VALUE, KEY_VALUE_OPTIONAL):
        if option.style == KEY_VALUE and not params:
            raise FastchessError(f'Option "{flag}" expects key=value parameters.')
        pairs: KeyValues = []
        for param in params:
            where = param.find("=")
            if where <= 0 or where + 1 == len(param):
                raise FastchessError(f'Option "{flag}" expects key=value pairs, got "{param}".')
            pairs.append((param[:where], param[where + 1:]))
        option.handle(pairs, a)
    else:
        option.handle(params, a)


def _reading_error(flag: str, shown: str, exc: Exception) -> FastchessError:
    return FastchessError(f'Error while reading option "{flag}" with value "{shown}"\n'
                          f"Reason: {exc}")


def read_argv(argv: Sequence[str]) -> FastchessArgs:
    """The options of `argv` (without the program name) read as fastchess reads them.

    Raises HelpAsked, VersionAsked, or FastchessError with fastchess's message.
    """
    a = FastchessArgs()
    if not argv:
        raise HelpAsked
    deferred: dict[str, list[str]] = {}
    i = 0
    while i < len(argv):
        arg = argv[i]
        option = OPTIONS.get(arg)
        if option is None:
            text = f"Unrecognized option: {arg} parsing failed."
            near = _suggestion(arg)
            raise FastchessError(f'{text}: Did you mean "{near}"?' if near else text)
        params: list[str] = []
        while i + 1 < len(argv):
            word = argv[i + 1]
            if word.startswith("-") and not (len(word) > 1 and word[1].isdigit()
                                              and word[1].isascii()):
                break
            params.append(word)
            i += 1
        try:
            if option.deferred:
                deferred.setdefault(arg, []).extend(params)
            else:
                _call(arg, option, params, a)
        except (HelpAsked, VersionAsked):
            raise
        except (FastchessError, ValueError) as exc:
            error = _reading_error(arg, argv[i], exc)
            error.printed = list(a.printed)
            raise error from None
        i += 1
    for flag, params in deferred.items():
        try:
            _call(flag, OPTIONS[flag], params, a)
        except (FastchessError, ValueError) as exc:
            error = _reading_error(flag, " ".join(params) if params else "<none>", exc)
            error.printed = list(a.printed)
            raise error from None
    try:
        sanitize(a)
    except FastchessError as exc:
        exc.printed = list(a.printed)
        raise
    return a


# -- what fastchess checks once everything is read (its sanitize.cpp) --------------------------


def sanitize(a: FastchessArgs, cpus: int | None = None) -> None:
    """fastchess's checks and fixes after reading; its printed lines go to ``a.printed``."""
    if a.games > 2:
        a.games, a.rounds = a.rounds, a.games
        if a.games > 2:
            raise FastchessError("Error: Exceeded -game limit! Must be less than 2")
    if a.report_penta and (a.output == "cutechess" or a.games != 2):
        a.report_penta = False
    hardware = cpus or os.cpu_count() or 1
    if a.concurrency <= 0:
        a.concurrency = hardware - abs(a.concurrency)
        a.printed.append(f"Info: Adjusted concurrency to {a.concurrency} based on number of "
                         "available hardware threads.")
    if a.concurrency > hardware and not a.force_concurrency:
        raise FastchessError(
            "Error: Concurrency exceeds number of CPUs. Use -force-concurrency to override.")
    if a.sprt:
        if a.elo0 >= a.elo1:
            raise FastchessError("Error; SPRT: elo0 must be less than elo1!")
        if not 0 < a.alpha < 1:
            raise FastchessError("Error; SPRT: alpha must be a decimal number between 0 and 1!")
        if not 0 < a.beta < 1:
            raise FastchessError("Error; SPRT: beta must be a decimal number between 0 and 1!")
        if a.alpha + a.beta >= 1:
            raise FastchessError("Error; SPRT: sum of alpha and beta must be less than 1!")
        if a.model not in ("normalized", "bayesian", "logistic"):
            raise FastchessError("Error; SPRT: invalid SPRT model!")
        if a.model == "bayesian" and a.report_penta:
            a.printed.append("Warning; Bayesian SPRT model not available with pentanomial "
                             "statistics. Disabling pentanomial reports...")
            a.report_penta = False
    if a.variant == "fischerandom" and not a.book_file:
        raise FastchessError("Error: Please specify a Chess960 opening book")
    if not a.book_file:
        a.printed.append("Warning: No opening book specified! Consider using one, otherwise "
                         "all games will be played from the starting position.")
    if a.book_format not in ("epd", "pgn"):
        a.printed.append("Warning: Unknown opening format, 2. All games will be played from "
                         "the starting position.")
    if a.tb and not a.tb_dirs:
        raise FastchessError(
            "Error: Must provide a ;-separated list of Syzygy tablebase directories.")
    if len(a.engines) < 2:
        raise FastchessError("Error: Need at least two engines to start!")
    for engine in a.engines:
        _check_engine(engine)
    seen: dict[str, int] = {}
    for engine in a.engines:
        seen[engine.name] = seen.get(engine.name, 0) + 1
        if seen[engine.name] > 1:
            engine.name = f"{engine.name}_{seen[engine.name]}"


def _check_engine(engine: EngineArgs) -> None:
    limit = engine.limit
    clock = limit.time + limit.increment
    if clock == 0 and limit.fixed_time == 0 and limit.nodes == 0 and limit.plies == 0:
        raise FastchessError("Error; no TimeControl specified!")
    if (clock != 0) + (limit.fixed_time != 0) > 1:
        raise FastchessError("Error; cannot use tc and st together!")
    path = engine.engine_path()
    if (engine.dir or path.is_absolute()) and not path.is_file():
        raise FastchessError(f"Engine binary does not exist: {path}")
    if not engine.name:
        stem = Path(engine.cmd).stem if engine.cmd not in ("", ".", "..") else ""
        engine.name = stem
    if not engine.name:
        raise FastchessError("Error; please specify a name for each engine!")


def engine_argv(engine: EngineArgs) -> list[str]:
    """The engine's argv as fastchess starts it: its command, then ``args`` split as a shell
    would split them."""
    return [engine.cmd, *shlex.split(engine.args)]


def refuse(error: FastchessError) -> PeerUsageError:
    """The PeerUsageError for `error`: fastchess prints it (after its earlier lines) to stdout
    and exits 1."""
    lines = [*error.printed, str(error)]
    return PeerUsageError("\n".join(lines), 1, stream="stdout")
