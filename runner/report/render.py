"""Rendering a `runner.report.records.Report`: rich text tables, JSON, and one self-contained HTML page.

The HTML page carries its own CSS and inline SVG plots drawn here (Elo with its 95% band over
games played, LLR against the SPRT bounds, game lengths): no script, no external asset, so the
file can be mailed or archived as it is. JSON reuses the key names of `runner stats --json`
and never holds inf or NaN (null instead).
"""

from __future__ import annotations

import html
import io
import math
from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from runner.report.figures import finite, iso_seconds
from runner.report.records import Crosstable, Report, TuningSeries
from runner.stats import format_elo, standings_basis
from runner.text import shown, undirected

__all__ = ["MIN_TEXT_WIDTH", "render", "render_diagnostics", "render_html", "render_json",
           "render_text", "report_json", "tuning_plot"]

_PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b",
            "#e377c2", "#7f7f7f", "#bcbd22")


def _escape(text: str) -> str:
    """Text for HTML or SVG: without direction controls, then escaped."""
    return html.escape(undirected(text))


def render(report: Report, fmt: str, *, width: int | None = None) -> str:
    """The report as ``text``, ``json`` or ``html`` (text `width`: see `render_text`)."""
    renderers: dict[str, Callable[[Report], str]] = {
        "text": lambda r: render_text(r, width=width), "json": render_json, "html": render_html}
    try:
        return renderers[fmt](report)
    except KeyError:
        raise ValueError(f"unknown report format {fmt!r}: text, json or html") from None


# -- numbers -----------------------------------------------------------------------------------


def _fmt(value: float | None, spec: str = ".1f", none: str = "-") -> str:
    """A number formatted, or a dash when there is none."""
    value = finite(value)
    return none if value is None else format(value, spec)


def _pct(value: float | None) -> str:
    """A ratio as a percentage; "-" where none applies, "n/a" where the sample gives none."""
    if value is None:
        return "-"
    return f"{100 * value:.1f}%" if math.isfinite(value) else "n/a"


def _elo(value: float | None, error: float | None) -> str:
    """``+12.3 +/- 4.5``; "-" where no figure applies, "n/a" where the sample gives none
    (the rule of `runner.stats.match`, the same in every view)."""
    if value is None:
        return "-"
    if not math.isfinite(value):
        return format_elo(value, math.nan)
    return f"{value:+.1f}" if error is None else format_elo(value, error)


# -- JSON --------------------------------------------------------------------------------------


def report_json(report: Report) -> dict[str, Any]:
    """The report as JSON-ready data (no inf or NaN anywhere): `ReportJson`'s shape."""
    # The JSON tree is pydantic's: imported here, so a text or HTML report starts without it.
    from runner.report.tree import ReportJson
    from runner.report.wire import wire_data

    return wire_data(ReportJson.of(report))


def render_json(report: Report) -> str:
    """The report as a JSON document."""
    from runner.report.tree import ReportJson
    from runner.report.wire import wire_text

    return wire_text(ReportJson.of(report), indent=2) + "\n"


# -- text --------------------------------------------------------------------------------------


def _tables(report: Report) -> list[Table]:
    """The report's rich tables, in reading order."""
    cross = [] if report.crosstable is None else [_crosstable_table(report.crosstable)]
    scores = [] if report.stopped else [_standings_table(report), *_pairing_tables(report)]
    search = [_search_table(report)] if report.search else []
    if report.search_by_worker:
        search.append(_search_table(report, by_worker=True))
    workers = [_workers_table(report)] if len(report.workers) > 1 else []
    tables = [*scores, *cross, _terminations_table(report), _faults_table(report), *workers,
              *search]
    for table in tables:  # a name or figure too long for a narrow column folds, never is cut
        for column in table.columns:
            column.overflow = "fold"
    return tables


def _standings_table(report: Report) -> Table:
    """Standings with Elo and LOS."""
    standings = Table(title="Standings", title_justify="left")
    for name, justify in (("#", "right"), ("Engine", "left"), ("Games", "right"),
                          ("Points", "right"), ("Score", "right"), ("W", "right"),
                          ("D", "right"), ("L", "right"), ("Elo", "right"), ("LOS", "right")):
        standings.add_column(name, justify=justify)  # type: ignore[arg-type]
    for s in report.standings:
        standings.add_row(str(s.rank), s.engine + (" (ref)" if s.reference else ""),
                          str(s.games), f"{s.points:g}", _pct(s.score), str(s.wins),
                          str(s.draws), str(s.losses),
                          "n/a" if s.elo is None and s.games else _elo(s.elo, s.elo_error95),
                          _pct(s.los))
    return standings


def _pairing_tables(report: Report) -> tuple[Table, Table]:
    """Each pairing's figures, and its game pairs (pentanomial)."""
    pairs = Table(title="Pairings (first engine's view; Elo, nElo and LOS from game pairs, as "
                  "fishtest does)", title_justify="left")
    for name in ("Pairing", "Games", "W", "D", "L", "Draws", "Elo", "nElo", "LOS",
                 "Elo (W/D/L)"):
        pairs.add_column(name, justify="left" if name == "Pairing" else "right")
    penta = Table(title="Game pairs (pentanomial, first engine's point of view)",
                  title_justify="left")
    for name in ("Pairing", "Pairs", "LL", "LD", "DD+WL", "WD", "WW", "Pair draws"):
        penta.add_column(name, justify="left" if name == "Pairing" else "right")
    for p in report.pairings:
        head, wdl, label = p.stats, p.wdl_stats, f"{p.first} vs {p.second}"
        pairs.add_row(
            label, str(p.trinomial.games), str(p.trinomial.wins), str(p.trinomial.draws),
            str(p.trinomial.losses), _pct(None if wdl is None else wdl.draw_ratio),
            "-" if head is None else _elo(head.elo, head.elo_error95),
            "-" if head is None else _elo(head.nelo, head.nelo_error95),
            _pct(None if head is None else head.los),
            "-" if wdl is None else _elo(wdl.elo, wdl.elo_error95))
        penta.add_row(label, str(p.pentanomial.pairs),
                      *(str(n) for n in p.pentanomial.low_to_high),
                      _pct(None if head is None else head.pair_draw_ratio))
    return pairs, penta


def _crosstable_table(table: Crosstable) -> Table:
    """A round-robin crosstable."""
    cross = Table(title="Crosstable (row engine's points / games)", title_justify="left")
    cross.add_column("Engine")
    for name in table.engines:
        cross.add_column(name, justify="right")
    for name, row in zip(table.engines, table.cells, strict=True):
        cross.add_row(name, *("x" if c is None and name == other else "-" if c is None
                              else f"{c.points:g}/{c.games}"
                              for c, other in zip(row, table.engines, strict=True)))
    return cross


def _terminations_table(report: Report) -> Table:
    """How the games ended, by result."""
    ends = Table(title="Terminations", title_justify="left")
    for name in ("Termination", "Games", "1-0", "0-1", "Draw", "*"):
        ends.add_column(name, justify="left" if name == "Termination" else "right")
    for t in report.terminations:
        ends.add_row(t.label, str(t.games), str(t.white_wins), str(t.black_wins),
                     str(t.draws), str(t.unfinished))
    return ends


def _faults_table(report: Report) -> Table:
    """Each engine's faults."""
    faults = Table(title="Faults per engine", title_justify="left")
    for name in ("Engine", "Time forfeits", "Illegal moves", "False claims", "Crashes",
                 "Stalls"):
        faults.add_column(name, justify="left" if name == "Engine" else "right")
    for f in report.faults:
        faults.add_row(f.engine, str(f.time_forfeits), str(f.illegal_moves),
                       str(f.false_claims), str(f.crashes), str(f.stalls))
    if report.worker_faults:
        faults.caption = Text(_worker_caption(report), justify="left")
    return faults


def _search_table(report: Report, *, by_worker: bool = False) -> Table:
    """Each engine's depth, time per move and speed over its own moves (per worker too)."""
    title = "Search per engine (own moves, book left out)"
    rows = report.search_by_worker if by_worker else report.search
    search = Table(title=f"{title}, per worker" if by_worker else title, title_justify="left")
    pondering = any(s.pondered for s in rows)  # the column only when an engine pondered
    heads = ("Engine", "Moves", "Mean depth", "Mean seldepth", "Mean time/move", "Time/clock",
             "Least left", "Near flag", "Nodes/s", *(("Ponder hits",) if pondering else ()))
    for name in ("Worker", *heads) if by_worker else heads:
        search.add_column(name, justify="left" if name in ("Engine", "Worker") else "right")
    for s in rows:
        time = "-" if s.mean_time_ms is None else f"{s.mean_time_ms / 1000:.3f} s"
        least = "-" if s.least_left_ms is None else f"{s.least_left_ms / 1000:.3f} s"
        cells: tuple[str, ...] = (s.engine, str(s.moves), _fmt(s.mean_depth),
                                  _fmt(s.mean_seldepth), time,
                 _pct(s.mean_time_share), least, str(s.near_flag), _fmt(s.nps, ",.0f"))
        if pondering:  # the share of its ponder searches the opponent's move confirmed
            cells += ("-" if s.ponder_hit_rate is None
                      else f"{s.ponder_hit_rate:.0%} of {s.pondered}",)
        search.add_row(*((s.worker or "", *cells) if by_worker else cells))
    return search


def _workers_table(report: Report) -> Table:
    """Each machine's games, whole pairs, clock factor and residual, and the one flagged."""
    table = Table(title="Workers (fishtest's residual test)", title_justify="left")
    for name in ("Worker", "Games", "Pairs LL-LD-DD-WD-WW", "Crashes", "Time losses",
                 "Factor", "Residual", "Flag"):
        table.add_column(name, justify="left" if name in ("Worker", "Flag") else "right")
    for w in report.workers:
        table.add_row(w.worker, str(w.games), "-".join(map(str, w.pentanomial)), str(w.crashes),
                      str(w.time_losses), "-" if w.factor is None else f"{w.factor:g}",
                      "-" if w.residual is None else f"{w.residual:.2f} {w.colour}",
                      f"BAD WORKER: {w.why}" if w.flagged else "")
    return table


def _worker_caption(report: Report) -> str:
    """Per-worker lines under the faults table; a worker that breaks fishtest's rule is flagged."""
    lines = ["per worker (games, crashes, time losses; flagged: > 3 crashes, or > 10% of "
             "over 20 games on time):"]
    for w in report.worker_faults:
        flag = "  BAD WORKER" if w.flagged else ""
        lines.append(f"{w.worker} {w.engine}: {w.games}, {w.crashes}, {w.time_losses}{flag}")
    return "\n".join(lines)


def _summary_lines(report: Report) -> list[str]:
    """Heading lines: what was played, the draw ratio, the SPRT state."""
    lines = [
        f"Tournament {report.tournament_id} '{report.name}': {report.format.value}, "
        f"{report.status}, {report.games_played} of {report.games_planned} "
        f"game{'' if report.games_planned == 1 else 's'} played",
        f"Reference engine: {report.reference}; draw ratio {_pct(report.draw_ratio)}; "
        f"mean length {_fmt(report.mean_plies)} plies",
    ]
    if report.pairings and not report.stopped:
        # The standings' Elo and the pairings' may be made two ways (issue 39): say which.
        lines.append("Standings' " + standings_basis(
            [report.reference], [(p.first, p.second, p.trinomial, p.pentanomial)
                                 for p in report.pairings]))
    if report.sprt is not None:
        state, spec = report.sprt, report.sprt.spec
        text = (f"SPRT {state.first} vs {state.second}: {spec.model.value} "
                f"[{spec.elo0:g}, {spec.elo1:g}], alpha {spec.alpha:g}, beta {spec.beta:g}")
        if state.result is not None:
            res = state.result
            text += (f"; LLR {res.llr:.2f} ({res.lower_bound:.2f}, {res.upper_bound:.2f}), "
                     f"{res.decision.value}")
        if state.stored_decision:
            text += f"; stored decision {state.stored_decision}"
        lines.append(text)
    if report.stopped:
        lines.append(f"No standings or Elo: the tournament stopped because {report.stopped}")
    return lines


MIN_TEXT_WIDTH = 60
"""The narrowest text report: below it, figures would be cut rather than wrapped."""


def render_text(report: Report, *, width: int | None = None) -> str:
    """The report as plain text tables (no colors), `width` columns wide (a terminal's width);
    None: as wide as the widest table needs, so that nothing is cut (files and pipes). Cells
    that do not fit wrap at their spaces (``+12.3`` over ``+/- 4.5``) instead of being cut."""
    buffer = io.StringIO()
    tables = _tables(report)
    # Engine names and tournament names are the users' text: no cell is read as markup.
    console = Console(file=buffer, width=10_000, color_system=None, force_terminal=False,
                      highlight=False, markup=False, emoji=False)
    if width is None:
        width = max(console.measure(table).maximum for table in tables)
    console.width = max(width, MIN_TEXT_WIDTH)
    for line in _summary_lines(report):
        console.print(line, markup=False)
    for table in tables:
        console.print()
        console.print(table)
    for note in report.notes:
        console.print(f"note: {note}", markup=False)
    # Names and reasons come from users, engines and databases written by older runners
    # that let control characters through: none reaches a terminal raw.
    return shown(buffer.getvalue(), multiline=True)


def render_diagnostics(report: Report) -> str:
    """Only the per-engine diagnostics (faults, then search and clock, per worker too) as
    plain text, as wide as the tables need: what the drop-ins print after a run on request."""
    tables = [_faults_table(report)]
    if report.search:
        tables.append(_search_table(report))
    if report.search_by_worker:
        tables.append(_search_table(report, by_worker=True))
    buffer = io.StringIO()
    console = Console(file=buffer, width=10_000, color_system=None, force_terminal=False,
                      highlight=False, markup=False, emoji=False)
    console.width = max(MIN_TEXT_WIDTH, *(console.measure(t).maximum for t in tables))
    for table in tables:
        console.print()
        console.print(table)
    return shown(buffer.getvalue(), multiline=True)


# -- SVG plots ---------------------------------------------------------------------------------

_W, _H = 760, 320
_LEFT, _RIGHT, _TOP, _BOTTOM = 64, 34, 48, 46


def _ticks(low: float, high: float, count: int = 6, integer: bool = False) -> list[float]:
    """Round tick values covering [low, high] (whole numbers only when `integer`)."""
    if not high > low:
        high = low + 1.0
    raw = (high - low) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    if integer:
        step = max(1, round(step)) if step >= 1 else 1
    first = math.floor(low / step) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 10))
        value += step
    if ticks[-1] < high:
        ticks.append(ticks[-1] + step)
    return ticks


class _Frame:
    """Plot coordinates: data ranges mapped onto the SVG's inner box."""

    def __init__(self, xs: tuple[float, float], ys: tuple[float, float], *,
                 integer_y: bool = False) -> None:
        self.xticks = _ticks(*xs, integer=True)
        self.yticks = _ticks(*ys, integer=integer_y)
        self.x0, self.x1 = self.xticks[0], self.xticks[-1]
        self.y0, self.y1 = self.yticks[0], self.yticks[-1]

    def x(self, value: float) -> float:
        """SVG x of a data x."""
        return _LEFT + (value - self.x0) / (self.x1 - self.x0) * (_W - _LEFT - _RIGHT)

    def y(self, value: float) -> float:
        """SVG y of a data y."""
        return _H - _BOTTOM - (value - self.y0) / (self.y1 - self.y0) * (_H - _TOP - _BOTTOM)

    def axes(self, title: str, x_label: str, y_label: str) -> list[str]:
        """Grid, ticks, labels and title."""
        out = [f'<text class="title" x="{_LEFT}" y="20">{_escape(title)}</text>']
        for value in self.yticks:
            y = self.y(value)
            out.append(f'<line class="grid" stroke="#eee" x1="{_LEFT}" x2="{_W - _RIGHT}" '
                       f'y1="{y:.1f}" y2="{y:.1f}"/><text class="tick" x="{_LEFT - 6}" y="{y + 4:.1f}" '
                       f'text-anchor="end">{value:g}</text>')
        for value in self.xticks:
            x = self.x(value)
            out.append(f'<line class="grid" stroke="#eee" x1="{x:.1f}" x2="{x:.1f}" y1="{_TOP}" '
                       f'y2="{_H - _BOTTOM}"/><text class="tick" x="{x:.1f}" '
                       f'y="{_H - _BOTTOM + 16}" text-anchor="middle">{value:g}</text>')
        out.append(f'<rect class="frame" fill="none" stroke="#999" x="{_LEFT}" y="{_TOP}" '
                   f'width="{_W - _LEFT - _RIGHT}" height="{_H - _TOP - _BOTTOM}"/>')
        out.append(f'<text class="label" x="{(_LEFT + _W - _RIGHT) / 2:.0f}" y="{_H - 8}" '
                   f'text-anchor="middle">{_escape(x_label)}</text>')
        out.append(f'<text class="label" transform="translate(16 {(_TOP + _H - _BOTTOM) / 2:.0f}) '
                   f'rotate(-90)" text-anchor="middle">{_escape(y_label)}</text>')
        return out


def _svg(kind: str, body: Sequence[str]) -> str:
    """An SVG element of the standard plot size."""
    return (f'<svg class="plot" data-plot="{kind}" xmlns="http://www.w3.org/2000/svg" '
            f'width="{_W}" height="{_H}" viewBox="0 0 {_W} {_H}" role="img">'
            + "".join(body) + "</svg>")


def _path(points: Sequence[tuple[float, float]]) -> str:
    """SVG path data through points."""
    return "M" + " L".join(f"{x:.1f},{y:.1f}" for x, y in points)


def _legend(labels: Sequence[tuple[str, str]]) -> list[str]:
    """Color keys in a row between the title and the plot (cut short if they do not fit)."""
    out = []
    x = _LEFT
    for label, color in labels:
        width = 16 + 7 * len(label) + 14  # box, gap, text at ~7 px a character, spacing
        if x + width > _W - _RIGHT:
            out.append(f'<text class="legend" x="{x}" y="37">...</text>')
            break
        out.append(f'<rect x="{x}" y="27" width="12" height="12" fill="{color}"/>'
                   f'<text class="legend" x="{x + 16}" y="37">{_escape(label)}</text>')
        x += width
    return out


def _elo_plot(report: Report) -> str | None:
    """Elo estimates with their 95% bands over games played.

    The vertical range fits the estimates after the first tenth of the games (the wide early
    bands would flatten everything else); what lies outside is clipped at the frame.
    """
    series = [s for s in report.elo_series if s.points]
    if not series:
        return None
    last = max(p.games for s in series for p in s.points)
    settled = [p for s in series for p in s.points if p.games >= last / 10] or [
        p for s in series for p in s.points]
    low = min(min(p.elo - p.elo_error95 for p in settled), 0.0)
    high = max(max(p.elo + p.elo_error95 for p in settled), 0.0)
    frame = _Frame((0, last), (low, high))
    body = frame.axes(f"Elo over games played: {report.elo_series_kind}", "games played",
                      "Elo (95% band)")
    body.append(f'<clipPath id="elo-area"><rect x="{_LEFT}" y="{_TOP}" '
                f'width="{_W - _LEFT - _RIGHT}" height="{_H - _TOP - _BOTTOM}"/></clipPath>'
                '<g clip-path="url(#elo-area)">')
    zero = frame.y(0.0)
    body.append(f'<line class="zero" stroke="#444" stroke-dasharray="2 3" x1="{_LEFT}" '
                f'x2="{_W - _RIGHT}" y1="{zero:.1f}" y2="{zero:.1f}"/>')
    keys = []
    for k, s in enumerate(series):
        color = _PALETTE[k % len(_PALETTE)]
        upper = [(frame.x(p.games), frame.y(p.elo + p.elo_error95)) for p in s.points]
        lower = [(frame.x(p.games), frame.y(p.elo - p.elo_error95)) for p in reversed(s.points)]
        body.append(f'<path class="band" d="{_path(upper + lower)} Z" fill="{color}" '
                    f'fill-opacity="0.18" stroke="none"/>')
        line = [(frame.x(p.games), frame.y(p.elo)) for p in s.points]
        body.append(f'<path class="line" d="{_path(line)}" stroke="{color}" fill="none" '
                    'stroke-width="2"/>')
        keys.append((s.label, color))
    body.append("</g>")
    body.extend(_legend(keys))
    return _svg("elo", body)


def _llr_plot(report: Report) -> str | None:
    """The SPRT's LLR over games played, between its two bounds."""
    state = report.sprt
    if state is None or not report.llr_series:
        return None
    lower, upper = (state.result.lower_bound, state.result.upper_bound) if state.result else (
        math.log(state.spec.beta / (1 - state.spec.alpha)),
        math.log((1 - state.spec.beta) / state.spec.alpha))
    values = [p.llr for p in report.llr_series]
    low, high = min(min(values), lower), max(max(values), upper)
    margin = 0.08 * (high - low)  # keeps the bounds and their labels off the frame
    frame = _Frame((0, max(p.games for p in report.llr_series)), (low - margin, high + margin))
    spec = state.spec
    body = frame.axes(f"SPRT LLR, {spec.model.value} [{spec.elo0:g}, {spec.elo1:g}]",
                      "games played", "log-likelihood ratio")
    for bound, name, shift in ((upper, "H1", -4), (lower, "H0", 13)):
        y = frame.y(bound)
        body.append(f'<line class="bound" stroke="#b91c1c" stroke-dasharray="6 4" x1="{_LEFT}" '
                    f'x2="{_W - _RIGHT}" y1="{y:.1f}" y2="{y:.1f}"/><text class="tick" x="{_W - _RIGHT - 4}" '
                    f'y="{y + shift:.1f}" text-anchor="end">{name} {bound:.2f}</text>')
    line = [(frame.x(p.games), frame.y(p.llr)) for p in report.llr_series]
    body.append(f'<path class="line" d="{_path(line)}" stroke="{_PALETTE[0]}" fill="none" '
                'stroke-width="2"/>')
    return _svg("llr", body)


def tuning_plot(tuning: TuningSeries | None) -> str | None:
    """Each tuned parameter's theta over the iterations of its SPSA run, from its start, as
    an SVG element (None before the first iteration); the report's and the service's graph."""
    if tuning is None or not tuning.points:
        return None
    points = [(0, tuning.start), *tuning.points]
    values = [v for _k, theta in points for v in theta]
    low, high = min(values), max(values)
    margin = 0.05 * (high - low) or 1.0
    frame = _Frame((0, points[-1][0]), (low - margin, high + margin))
    body = frame.axes(f"SPSA {tuning.run}: theta over iterations", "iteration", "theta")
    keys = []
    for index, name in enumerate(tuning.parameters):
        color = _PALETTE[index % len(_PALETTE)]
        line = [(frame.x(k), frame.y(theta[index])) for k, theta in points]
        body.append(f'<path class="line" d="{_path(line)}" stroke="{color}" fill="none" '
                    'stroke-width="2"/>')
        keys.append((name, color))
    body.extend(_legend(keys))
    return _svg("tuning", body)


def _length_plot(report: Report) -> str | None:
    """A histogram of game lengths in plies."""
    if not report.lengths:
        return None
    bins = report.lengths
    frame = _Frame((bins[0].low, bins[-1].high + 1), (0, max(b.games for b in bins)),
                   integer_y=True)
    body = frame.axes(f"Game lengths (mean {_fmt(report.mean_plies)} plies)",
                      "plies (book moves included)", "games")
    for b in bins:
        x0, x1 = frame.x(b.low), frame.x(b.high + 1)
        y = frame.y(b.games)
        body.append(f'<rect class="bar" fill="#4c78a8" x="{x0 + 0.5:.1f}" y="{y:.1f}" '
                    f'width="{max(x1 - x0 - 1, 1):.1f}" height="{frame.y(0) - y:.1f}">'
                    f'<title>{b.low}-{b.high}: {b.games}</title></rect>')
    return _svg("lengths", body)


# -- HTML --------------------------------------------------------------------------------------

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px auto;
max-width:980px;color:#222;padding:0 12px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}
p.meta{color:#555;margin:2px 0}
table{border-collapse:collapse;margin:6px 0}
th,td{border-bottom:1px solid #ddd;padding:3px 10px;text-align:right;white-space:nowrap}
th{background:#f3f4f6}td.name,th.name{text-align:left}
tr.ref td{font-weight:600}
svg.plot{display:block;margin:8px 0;background:#fff;border:1px solid #e5e7eb}
svg .grid{stroke:#eee}svg .frame{fill:none;stroke:#999}
svg .zero{stroke:#444;stroke-dasharray:2 3}svg .bound{stroke:#b91c1c;stroke-dasharray:6 4}
svg .line{fill:none;stroke-width:2}svg .bar{fill:#4c78a8}
svg text{font:12px system-ui,sans-serif;fill:#333}svg .title{font-weight:600;font-size:13px}
.notes li{color:#555}
"""


def _html_table(table: Table, row_classes: Sequence[str] | None = None) -> str:
    """A rich table as HTML (left-justified columns get the ``name`` class); cells escaped."""
    left = ['' if column.justify == "right" else ' class="name"' for column in table.columns]
    headers, rows = _rows(table)
    head = "".join(f"<th{left[i]}>{_escape(h)}</th>" for i, h in enumerate(headers))
    body = []
    for k, row in enumerate(rows):
        cls = f' class="{row_classes[k]}"' if row_classes and row_classes[k] else ""
        cells = "".join(f"<td{left[i]}>{_escape(c)}</td>" for i, c in enumerate(row))
        body.append(f"<tr{cls}>{cells}</tr>")
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _rows(table: Table) -> tuple[list[str], list[list[str]]]:
    """Headers and cell texts of a rich table (the text and HTML views share their cells)."""
    headers = [str(column.header) for column in table.columns]
    cells = [[str(c) for c in column.cells] for column in table.columns]
    return headers, [list(row) for row in zip(*cells, strict=True)] if cells else []


def render_html(report: Report) -> str:
    """One self-contained HTML page: summary, tables and inline SVG plots."""
    parts = [f"<h1><bdi>{_escape(report.name)}</bdi></h1>"]
    parts.extend(f'<p class="meta">{_escape(line)}</p>' for line in _summary_lines(report))
    if report.first_started and report.last_ended:
        parts.append(f'<p class="meta">Played {_escape(iso_seconds(report.first_started) or "")}'
                     f' to {_escape(iso_seconds(report.last_ended) or "")}</p>')
    plots = [(title, svg) for title, svg in (
        ("Elo over games played", _elo_plot(report)),
        ("SPRT", _llr_plot(report)),
        ("SPSA parameters", tuning_plot(report.tuning)),
        ("Game lengths", _length_plot(report)),
    ) if svg is not None]
    tables = _tables(report)
    outcomes = [t for t in tables
                if str(t.title).startswith(("Terminations", "Faults", "Workers"))]
    for table in [t for t in tables if t not in outcomes]:
        classes = None
        if table.title == "Standings":
            classes = ["ref" if s.reference else "" for s in report.standings]
        parts.append(f"<h2>{_escape(str(table.title))}</h2>{_html_table(table, classes)}")
    for title, svg in plots:
        parts.append(f"<h2>{_escape(title)}</h2>{svg}")
    for table in outcomes:
        parts.append(f"<h2>{_escape(str(table.title))}</h2>{_html_table(table)}")
    if report.notes:
        parts.append('<h2>Notes</h2><ul class="notes">'
                     + "".join(f"<li>{_escape(n)}</li>" for n in report.notes) + "</ul>")
    title = _escape(f"{report.name}: tournament report")
    page = (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{title}</title><style>{_CSS}</style></head><body>"
            + "\n".join(parts) + "</body></html>\n")
    # html.escape leaves controls and bidi overrides, which would reorder what the page
    # shows around a name: they appear as escapes instead.
    return shown(page, multiline=True)
