"""fastchess's resume file (``-config file=``, written as ``config.json``): read and written.

fastchess saves its whole tournament configuration, its engines and the results so far as one
JSON document (nlohmann's field names, enums as numbers), and ``-config file=F`` starts from
it instead of the command line read so far. `load_config_file` fills `FastchessArgs` from such
a file; `config_document` gives the document for a run, for the output to write with its
current results (``stats``) as fastchess does.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from runner.dropin.fastchess.args import EngineArgs, FastchessArgs, FastchessError, Limits

__all__ = ["config_document", "load_config_file"]

_NOTATIONS = ("san", "lan", "uci")
_ORDERS = ("random", "sequential")
_FORMATS = ("epd", "pgn", "none")
_VARIANTS = ("standard", "fischerandom")
_TOURNAMENTS = ("roundrobin", "gauntlet")
_OUTPUTS = ("fastchess", "cutechess", "none")
_LEVELS = ("all", "trace", "info", "warn", "err", "fatal")


def _pick(names: tuple[str, ...], number: Any, what: str) -> str:
    if not isinstance(number, int) or not 0 <= number < len(names):
        raise FastchessError(f"Invalid {what} in config file: {number!r}")
    return names[number]


def load_config_file(path: str, a: FastchessArgs) -> None:
    """Replace `a`'s settings and engines by those of fastchess's resume file `path`."""
    try:
        with open(path, encoding="utf-8") as handle:
            doc = json.load(handle)
    except FileNotFoundError:
        raise FastchessError(f"File not found: {path}") from None
    except (OSError, ValueError) as exc:
        raise FastchessError(f"{path}: {exc}") from None
    try:
        _read(doc, a)
    except (KeyError, TypeError, ValueError) as exc:
        raise FastchessError(f"{path}: not a fastchess config file ({exc})") from None


def _read(doc: dict[str, Any], a: FastchessArgs) -> None:
    opening, pgn, epd, sprt = doc["opening"], doc["pgn"], doc["epd"], doc["sprt"]
    draw, resign, maxmoves, tb = doc["draw"], doc["resign"], doc["maxmoves"], doc["tb_adjudication"]
    log = doc.get("log", {})
    a.book_file = opening["file"]
    a.book_format = _pick(_FORMATS, opening["format"], "opening format")
    a.book_order = _pick(_ORDERS, opening["order"], "opening order")
    a.book_plies, a.book_start = int(opening["plies"]), int(opening["start"])
    a.pgn_file = a.pgn_given = pgn["file"] or None
    a.pgn_notation = _pick(_NOTATIONS, pgn["notation"], "notation")
    a.pgn_append = bool(pgn["append_file"])
    a.pgn_track = {key: bool(pgn[f"track_{key}"]) for key in
                   ("nodes", "seldepth", "nps", "hashfull", "tbhits", "timeleft", "latency", "pv")}
    a.pgn_min, a.crc32_pgn = bool(pgn["min"]), bool(pgn["crc"])
    a.pgn_match_lines = list(pgn.get("additional_lines_rgx", []))
    a.event, a.site = pgn["event_name"], pgn["site"]
    a.epd_file = a.epd_given = epd["file"] or None
    a.epd_append = bool(epd["append_file"])
    a.sprt = bool(sprt["enabled"])
    a.elo0, a.elo1 = float(sprt["elo0"]), float(sprt["elo1"])
    a.alpha, a.beta, a.model = float(sprt["alpha"]), float(sprt["beta"]), str(sprt["model"])
    a.draw, a.draw_movenumber = bool(draw["enabled"]), int(draw["move_number"])
    a.draw_movecount, a.draw_score = int(draw["move_count"]), int(draw["score"])
    a.resign, a.resign_movecount = bool(resign["enabled"]), int(resign["move_count"])
    a.resign_score, a.resign_twosided = int(resign["score"]), bool(resign["twosided"])
    a.maxmoves = int(maxmoves["move_count"]) if maxmoves["enabled"] else None
    a.tb, a.tb_dirs = bool(tb["enabled"]), str(tb["syzygy_dirs"])
    a.tb_pieces, a.tb_ignore50 = int(tb["max_pieces"]), bool(tb["ignore_50_move_rule"])
    # fastchess leaves the result type out of its file: a resumed run adjudicates both.
    a.tb_adjudicate = "BOTH"
    a.config_name = doc["config_name"]
    a.output = _pick(_OUTPUTS, doc["output"], "output")
    a.seed = int(doc["seed"])
    a.variant = _pick(_VARIANTS, doc["variant"], "variant")
    a.tournament = _pick(_TOURNAMENTS, doc["type"], "tournament type")
    a.seeds = int(doc["gauntlet_seeds"])
    a.ratinginterval, a.scoreinterval = int(doc["ratinginterval"]), int(doc["scoreinterval"])
    a.wait, a.autosaveinterval = int(doc["wait"]), int(doc["autosaveinterval"])
    a.games, a.rounds = int(doc["games"]), int(doc["rounds"])
    a.concurrency, a.force_concurrency = int(doc["concurrency"]), bool(doc["force_concurrency"])
    a.recover, a.noswap, a.reverse = bool(doc["recover"]), bool(doc["noswap"]), bool(doc["reverse"])
    a.report_penta, a.affinity = bool(doc["report_penta"]), bool(doc["affinity"])
    a.check_mate_pvs, a.show_latency = bool(doc["check_mate_pvs"]), bool(doc["show_latency"])
    if log:
        a.log_file = log["file"]
        level = _pick(_LEVELS, log["level"], "log level")
        a.log_level = "trace" if level == "all" else level
        a.log_append, a.log_compress = bool(log["append_file"]), bool(log["compress"])
        a.log_realtime, a.log_engine = bool(log["realtime"]), bool(log["engine_coms"])
    a.engines = [_engine(entry) for entry in doc["engines"]]
    a.config_stats = {str(k): {kk: int(vv) for kk, vv in v.items()}
                      for k, v in doc.get("stats", {}).items()}
    a.config_foreign = not doc.get(RUNNER_MARK, False)


def _engine(entry: dict[str, Any]) -> EngineArgs:
    limit, tc = entry["limit"], entry["limit"]["tc"]
    return EngineArgs(
        cmd=entry["cmd"], name=entry["name"], dir=entry["dir"], args=entry["args"],
        restart=bool(entry["restart"]),
        options=[(str(name), str(value)) for name, value in entry["options"]],
        limit=Limits(moves=int(tc["moves"]), time=int(tc["time"]), increment=int(tc["increment"]),
                     fixed_time=int(tc["fixed_time"]), timemargin=int(tc["timemargin"]),
                     nodes=int(limit["nodes"]), plies=int(limit["plies"])),
    )


def config_document(a: FastchessArgs) -> dict[str, Any]:
    """fastchess's resume document for `a`, keys in fastchess's order, without ``stats``."""
    tracks = {key: a.pgn_track.get(key, False) for key in
              ("nodes", "seldepth", "nps", "hashfull", "tbhits", "timeleft", "latency", "pv")}
    variant = _VARIANTS.index(a.variant)
    return {
        "resign": {"move_count": a.resign_movecount, "score": a.resign_score,
                   "twosided": a.resign_twosided, "enabled": a.resign},
        "draw": {"move_number": a.draw_movenumber, "move_count": a.draw_movecount,
                 "score": a.draw_score, "enabled": a.draw},
        "maxmoves": {"move_count": a.maxmoves if a.maxmoves is not None else 1,
                     "enabled": a.maxmoves is not None},
        "tb_adjudication": {"syzygy_dirs": a.tb_dirs, "max_pieces": a.tb_pieces,
                            "ignore_50_move_rule": a.tb_ignore50, "enabled": a.tb},
        "opening": {"file": a.book_file, "format": _FORMATS.index(a.book_format),
                    "order": _ORDERS.index(a.book_order), "plies": a.book_plies,
                    "start": a.book_start},
        "pgn": {"additional_lines_rgx": list(a.pgn_match_lines), "event_name": a.event,
                "site": a.site, "file": a.pgn_file or "",
                "notation": _NOTATIONS.index(a.pgn_notation), "append_file": a.pgn_append,
                **{f"track_{key}": value for key, value in tracks.items()},
                "min": a.pgn_min, "crc": a.crc32_pgn},
        "epd": {"file": a.epd_file or "", "append_file": a.epd_append},
        "sprt": {"alpha": a.alpha, "beta": a.beta, "elo0": a.elo0, "elo1": a.elo1,
                 "model": a.model, "enabled": a.sprt},
        "config_name": a.config_name,
        "output": _OUTPUTS.index(a.output),
        "seed": a.seed if a.seed is not None else 0,
        "variant": variant,
        "type": _TOURNAMENTS.index(a.tournament),
        "gauntlet_seeds": a.seeds,
        "ratinginterval": a.ratinginterval, "scoreinterval": a.scoreinterval,
        "wait": a.wait, "autosaveinterval": a.autosaveinterval,
        "games": a.games, "rounds": a.rounds, "concurrency": a.concurrency,
        "force_concurrency": a.force_concurrency, "recover": a.recover,
        "noswap": a.noswap, "reverse": a.reverse, "report_penta": a.report_penta,
        "affinity": a.affinity, "check_mate_pvs": a.check_mate_pvs,
        "show_latency": a.show_latency,
        "log": {"file": a.log_file, "level": _LEVELS.index(a.log_level),
                "append_file": a.log_append, "compress": a.log_compress,
                "realtime": a.log_realtime, "engine_coms": a.log_engine},
        "engines": [{
            "name": e.name, "dir": e.dir, "cmd": e.cmd, "args": e.args, "restart": e.restart,
            "options": [list(o) for o in e.options],
            "limit": {"tc": {"increment": e.limit.increment, "fixed_time": e.limit.fixed_time,
                             "time": e.limit.time, "moves": e.limit.moves,
                             "timemargin": e.limit.timemargin},
                      "nodes": e.limit.nodes, "plies": e.limit.plies},
            "variant": variant,
        } for e in a.engines],
    }


RUNNER_MARK = "runner_fastchess"
"""A key fastchess does not read (it ignores unknown keys): the file was written by
runner-fastchess, so the games its stats count are in the runner's database."""


def _points(white_first: bool, result: str) -> float | None:
    """The first engine's points for one game (None: no result)."""
    if result == "1/2-1/2":
        return 0.5
    if result in ("1-0", "0-1"):
        return 1.0 if (result == "1-0") == white_first else 0.0
    return None


_PENTA = {2.0: "penta_WW", 1.5: "penta_WD", 0.5: "penta_LD", 0.0: "penta_LL"}


def results_stats(games: list[tuple[str, str, int, str]], names: list[str],
                  penta: bool) -> dict[str, dict[str, int]]:
    """fastchess's ``stats`` from finished games (White, Black, pair number, result): per
    encounter ``"A vs B"`` (A before B in engine order), A's wins, losses and draws, and with
    `penta` the encounter's completed pairs by their score (a win and a loss: ``penta_WL``,
    two draws: ``penta_DD``)."""
    order = {name: i for i, name in enumerate(names)}
    stats: dict[str, dict[str, int]] = {}
    pairs: dict[tuple[str, int], list[float]] = {}
    for white, black, pair, result in games:
        first, second = sorted((white, black), key=lambda n: order.get(n, len(order)))
        points = _points(white == first, result)
        if points is None:
            continue
        key = f"{first} vs {second}"
        entry = stats.setdefault(key, dict.fromkeys(
            ("wins", "losses", "draws", "penta_WW", "penta_WD", "penta_WL", "penta_DD",
             "penta_LD", "penta_LL"), 0))
        entry["wins" if points == 1.0 else "losses" if points == 0.0 else "draws"] += 1
        pairs.setdefault((key, pair), []).append(points)
    if penta:
        for (key, _pair), scores in pairs.items():
            if len(scores) != 2:
                continue
            total = sum(scores)
            name = _PENTA.get(total) or ("penta_DD" if 0.5 in scores else "penta_WL")
            stats[key][name] += 1
    return stats


class ConfigSaving:
    """A `PeerOutput` around fastchess's output that also writes fastchess's resume file, as
    fastchess does: every `autosave` finished games and when the run ends."""

    def __init__(self, inner: Any, document: dict[str, Any], path: str, autosave: int,
                 names: list[str], penta: bool) -> None:
        self.inner = inner
        self.document = {**document, RUNNER_MARK: True}
        self.path = path
        self.autosave = autosave
        self.names = names
        self.penta = penta
        self.games: list[tuple[str, str, int, str]] = []
        self._since_save = 0

    @property
    def stop_run(self) -> bool:
        """The output's wish to end the run (the driver's `STOP_RUN`), handed on: without it
        a stop the output asks for (a file it cannot write, -strict) went unheard."""
        return bool(getattr(self.inner, "stop_run", False))

    def _keep(self, event: Any) -> None:
        self.games.append((event.job.white, event.job.black, event.job.pair, str(event.result)))

    def save(self) -> None:
        """Write the resume file now (engines, settings, the results so far)."""
        stats = results_stats(self.games, self.names, self.penta)
        document = {**self.document, "stats": stats}
        with open(self.path, "w", encoding="utf-8") as handle:
            handle.write(json.dumps(document, indent=4) + "\n")

    def resumed(self, games: Any) -> None:
        """Count the stored games in, then hand them on."""
        for event in games:
            self._keep(event)
        self.inner.resumed(games)

    def game_started(self, event: Any) -> None:
        """Hand on."""
        self.inner.game_started(event)

    def game_finished(self, event: Any) -> None:
        """Hand on; count the game and save every `autosave` games."""
        self.inner.game_finished(event)
        if getattr(event, "replay", False):
            return
        self._keep(event)
        self._since_save += 1
        if self.autosave > 0 and self._since_save >= self.autosave:
            self._since_save = 0
            self.save()

    def notice(self, event: Any) -> None:
        """Hand on."""
        self.inner.notice(event)

    def run_ended(self, outcome: Any, *, interrupted: bool) -> None:
        """Save the file (fastchess writes it on every end), then the output's last lines."""
        with contextlib.suppress(OSError):  # fastchess says nothing when it cannot write it
            self.save()
        self.inner.run_ended(outcome, interrupted=interrupted)

    def exit_code(self, outcome: Any) -> int:
        """The output's exit status."""
        return int(self.inner.exit_code(outcome))
