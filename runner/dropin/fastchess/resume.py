"""fastchess's resume file (``-config file=``, written as ``config.json``): read and written.

fastchess saves its whole tournament configuration, its engines and the results so far as one
JSON document (nlohmann's field names, enums as numbers), and ``-config file=F`` starts from
it instead of the command line read so far. `load_config_file` fills `FastchessArgs` from such
a file; `config_document` gives the document for a run, for the output to write with its
current results (``stats``) as fastchess does.
"""

from __future__ import annotations

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
    a.pgn_file = pgn["file"] or None
    a.pgn_notation = _pick(_NOTATIONS, pgn["notation"], "notation")
    a.pgn_append = bool(pgn["append_file"])
    a.pgn_track = {key: bool(pgn[f"track_{key}"]) for key in
                   ("nodes", "seldepth", "nps", "hashfull", "tbhits", "timeleft", "latency", "pv")}
    a.pgn_min, a.crc32_pgn = bool(pgn["min"]), bool(pgn["crc"])
    a.pgn_match_lines = list(pgn.get("additional_lines_rgx", []))
    a.event, a.site = pgn["event_name"], pgn["site"]
    a.epd_file, a.epd_append = epd["file"] or None, bool(epd["append_file"])
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
