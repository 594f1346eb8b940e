"""fastchess's scoreboard of a run and the results blocks it prints from it.

The counts follow fastchess 1.8.2: games per (White, Black) pairing, or, with pentanomial
reporting, a pair's two games counted once both are in; the blocks are its ``Results of``
header with Elo, LOS and the ``LLR:`` line, the rank table of more than two engines, and
the cutechess-format lines of ``-output format=cutechess``. The output
(`runner.dropin.fastchess.output`) decides when to print them.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from runner.dropin.fastchess.numbers import (
    EloFigures,
    FcSprt,
    FcStats,
    elo_figures,
    elo_score,
    fixed,
    time_label,
)
from runner.dropin.fastchess.settings import EngineSummary, FastchessSettings
from runner.rules import Result

__all__ = ["FcStandings"]

_RULE = "--------------------------------------------------"


class FcStandings:
    """The run's results as fastchess counts them, and the blocks it prints of them."""

    def __init__(self, settings: FastchessSettings,
                 known: Callable[[str], dict[str, str]]) -> None:
        self._settings = settings
        self._known = known
        """An engine's default options, by its name (asked of the engine when first needed)."""
        self._engines = {engine.name: engine for engine in settings.engines}
        self._order = [engine.name for engine in settings.engines]
        penta = settings.report_penta and settings.games == 2 \
            and settings.output_format == "fastchess"
        if settings.sprt is not None and settings.sprt.model == "bayesian":
            penta = False
        self.penta = penta
        """Whether results are counted (and shown) by pairs of games."""
        self.sprt = None if settings.sprt is None else FcSprt(
            settings.sprt.elo0, settings.sprt.elo1, settings.sprt.alpha, settings.sprt.beta,
            settings.sprt.model)
        self._results: dict[tuple[str, str], FcStats] = {}
        self.pairs: dict[int, FcStats] = {}
        """The pairs with one game in, waiting for the other (pentanomial counting)."""
        self.restarted: set[str] = set()
        """Engines just replaced after a crash (with -recover): the header knows none of
        their options."""

    def first_second(self, white: str, black: str) -> tuple[str, str]:
        """The pairing's engines in command-line order (fastchess's player1, player2)."""
        order = self._order
        if white in order and black in order and order.index(black) < order.index(white):
            return black, white
        if white in order and black in order:
            return white, black
        return tuple(sorted((white, black)))  # type: ignore[return-value]

    def score(self, index: int, white: str, black: str, result: Result) -> None:
        """fastchess's scoreboard: games per (White, Black), pairs counted once complete."""
        game = FcStats(wins=int(result == Result.WHITE_WINS),
                       losses=int(result == Result.BLACK_WINS),
                       draws=int(result == Result.DRAW))
        if not self.penta:
            self._results.setdefault((white, black), FcStats()).__iadd__(game)
            return
        pair = index // max(1, self._settings.games)
        pending = self.pairs.pop(pair, None)
        if pending is None:
            self.pairs[pair] = game.inverted()
            return
        pending += game
        pending.penta_ww += pending.wins == 2
        pending.penta_wd += pending.wins == 1 and pending.draws == 1
        pending.penta_wl += pending.wins == 1 and pending.losses == 1
        pending.penta_dd += pending.draws == 2
        pending.penta_ld += pending.losses == 1 and pending.draws == 1
        pending.penta_ll += pending.losses == 2
        self._results.setdefault((white, black), FcStats()).__iadd__(pending)

    def stats(self, first: str, second: str) -> FcStats:
        """The two engines' results, from `first`'s side."""
        one = self._results.get((first, second), FcStats())
        two = self._results.get((second, first), FcStats())
        return one + two.inverted()

    def all_stats(self, name: str) -> FcStats:
        """An engine's results against every opponent."""
        total = FcStats()
        for (white, black), value in self._results.items():
            if white == name:
                total += value
            elif black == name:
                total += value.inverted()
        return total

    def interval_lines(self, first: str, second: str) -> list[str]:
        """The results block fastchess prints every ``-ratinginterval`` and at the end."""
        stats = self.stats(first, second)
        if self._settings.output_format == "cutechess":
            lines = [self._cute_elo(stats) if len(self._order) <= 2 else self._cute_table()]
            if self.sprt is not None:
                lines.append(self._cute_sprt(stats))
            return lines
        body = self._elo_block(stats, first, second)
        if self.sprt is not None:
            llr = self.sprt.llr(stats, self.penta)
            body += (f"LLR: {fixed(llr)} ({fixed(self.sprt.fraction(llr) * 100.0, 1)}%) "
                     f"{self.sprt.bounds_text()} {self.sprt.elo_text()}\n")
        return [f"{_RULE}\n{body}{_RULE}"]

    def _elo_block(self, stats: FcStats, first: str, second: str) -> str:
        if len(self._order) > 2:
            return self._rank_table()
        elo = elo_figures(stats, self.penta)
        a = self._engines.get(first, EngineSummary(first))
        b = self._engines.get(second, EngineSummary(second))
        tc_a, tc_b = time_label(a), time_label(b)
        threads_a, threads_b = self._option(a, "Threads", "t"), self._option(b, "Threads", "t")
        hash_a, hash_b = self._option(a, "Hash", "MB"), self._option(b, "Hash", "MB")
        book = self._settings.book_file.replace("\\", "/").rsplit("/", 1)[-1]
        lines = [
            f"Results of {first} vs {second} ({_both(tc_a, tc_b)}, {_both(threads_a, threads_b)}, "
            f"{_both(hash_a, hash_b)}{f', {book}' if book else ''}):",
            f"Elo: {elo.elo_text()}, nElo: {elo.nelo_text()}",
            f"LOS: {elo.los_text()}, DrawRatio: "
            f"{fixed(stats.draw_ratio_penta() if self.penta else stats.draw_ratio())} %"
            + (f", PairsRatio: {fixed(stats.pairs_ratio())}" if self.penta else ""),
            f"Games: {stats.games}, Wins: {stats.wins}, Losses: {stats.losses}, Draws: "
            f"{stats.draws}, Points: {stats.points:.1f} ({fixed(stats.points_ratio())} %)",
        ]
        if self.penta:
            lines.append(f"Ptnml(0-2): {stats.penta_text()}, WL/DD Ratio: "
                         f"{fixed(stats.wl_dd_ratio())}")
        return "\n".join(lines) + "\n"

    def _option(self, engine: EngineSummary, option: str, unit: str) -> str:
        """The engine's value of `option` as the header shows it, ``NULL`` when it has none."""
        if engine.name in self.restarted:
            return "NULL"
        given = engine.threads if option == "Threads" else engine.hash
        if given is not None:
            return f"{given}{unit}"
        for key, value in engine.options:
            if key == option:
                return f"{value}{unit}"
        default = self._known(engine.name).get(option)
        return "NULL" if default is None else f"{default}{unit}"

    def _ranked(self, penta: bool) -> tuple[list[tuple[str, FcStats]], dict[str, EloFigures], int]:
        """The engines in rank order with their statistics, their Elo figures, and the width
        of the name column (both rank tables)."""
        rows = [(name, self.all_stats(name)) for name in self._order]
        figures = {name: elo_figures(stats, penta) for name, stats in rows}
        # fastchess sorts by Elo (NaN last) with std::sort, an insertion sort at this size:
        # equal Elo keeps the command-line order.
        ordered: list[tuple[str, FcStats]] = []
        for row in rows:
            at = len(ordered)
            while at > 0 and _before(figures[row[0]].diff, figures[ordered[at - 1][0]].diff):
                at -= 1
            ordered.insert(at, row)
        return ordered, figures, max([25, *(len(name) for name in self._order)])

    def _rank_table(self) -> str:
        ordered, figures, width = self._ranked(self.penta)
        out = (f"{'Rank':<4} {'Name':<{width}} {'Elo':>10} {'+/-':>10} {'nElo':>10} {'+/-':>10} "
               f"{'Games':>10} {'Score':>10} {'Draw':>10} {'Ptnml(0-2)':>20}\n")
        for rank, (name, stats) in enumerate(ordered, start=1):
            elo = figures[name]
            draw = stats.draw_ratio_penta() if self.penta else stats.draw_ratio()
            out += (f"{rank:>4} {name:<{width}} {fixed(elo.diff):>10} {fixed(elo.error):>10} "
                    f"{fixed(elo.nelo_diff):>10} {fixed(elo.nelo_error):>10} {stats.games:>10} "
                    f"{fixed(stats.points_ratio(), 1):>9}% {fixed(draw, 1):>9}% "
                    f"{stats.penta_text() if self.penta else '':>20}\n")
        return out

    def score_line(self, first: str, second: str) -> str:
        """cutechess's ``Score of A vs B: W - L - D  [ratio] N`` line."""
        stats = self.stats(first, second)
        ratio = elo_score(stats)
        return (f"Score of {first} vs {second}: {stats.wins} - {stats.losses} - {stats.draws}  "
                f"[{fixed(ratio, 3)}] {stats.games}")

    def _cute_elo(self, stats: FcStats) -> str:
        elo = elo_figures(stats, False)
        return (f"Elo difference: {fixed(elo.diff)} +/- {fixed(elo.error)}, LOS: "
                f"{fixed(elo.los)} %, DrawRatio: {fixed(stats.draw_ratio())} %")

    def _cute_table(self) -> str:
        ordered, figures, width = self._ranked(False)
        out = (f"{'Rank':<4} {'Name':<{width}} {'Elo':>10} {'+/-':>10} {'nElo':>10} {'+/-':>10} "
               f"{'Games':>10} {'Score':>10} {'Draw':>10}")
        for rank, (name, stats) in enumerate(ordered, start=1):
            elo = figures[name]
            out += (f"\n{rank:>4} {name:<{width}} {fixed(elo.diff):>10} {fixed(elo.error):>10} "
                    f"{fixed(elo.nelo_diff):>10} {fixed(elo.nelo_error):>10} {stats.games:>10} "
                    f"{fixed(stats.points_ratio(), 1):>9}% {fixed(stats.draw_ratio(), 1):>9}%")
        return out

    def _cute_sprt(self, stats: FcStats) -> str:
        assert self.sprt is not None
        llr = self.sprt.llr(stats, False)
        lower, upper = self.sprt.lower, self.sprt.upper
        # this format's percentage and H0 test differ from the fastchess format's
        percent = llr / lower * 100 if llr < 0 else llr / upper * 100
        tail = " - H1 was accepted" if llr >= upper else " - H0 was accepted" \
            if llr < lower else ""
        return (f"SPRT: llr {fixed(llr)} ({fixed(percent, 1)}%), "
                f"lbound {fixed(self.sprt.lower)}, ubound {fixed(self.sprt.upper)}{tail}")


def _both(a: str, b: str) -> str:
    return a if a == b else f"{a} - {b}"


def _before(a: float, b: float) -> bool:
    """fastchess's order of the rank table: higher Elo first, NaN after any number."""
    return (not math.isnan(a) and math.isnan(b)) or a > b
