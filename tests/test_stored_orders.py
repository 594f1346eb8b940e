"""Tournaments stored before the order seam (issue 37): a drop-in's schedule was kept in the
configuration under its program's name (``fastchess_order``, ``cutechess``); today it is one
``order`` named by its style. The databases in ``tests/data/before_order_seam`` were written by
the runner at commit 6c65f05 (``runner-fastchess`` and ``runner-cutechess`` with the bundled
engine, interrupted by SIGINT after their second game; ``README.md`` there says how), and:

- every stored row reads back as today's configuration, with its style, the same fingerprint
  and the same schedule as the games stored;
- the same command line, run by today's runner on a copy, continues the stored run: it plays
  only the missing games.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from runner.config.model import OrderStyle, TournamentConfig, stored_setting
from runner.config.stored import upgrade_stored
from runner.stats import EloModel
from runner.tournament.pairing import pairing_for

pytestmark = pytest.mark.timeout(600)

DATA = REPO / "tests" / "data" / "before_order_seam"
RENAMED = REPO / "tests" / "data" / "before_model_rename" / "cutechess_sprt.db"
SPRT_WORDS = ["-sprt", "elo0=-50", "elo1=50", "alpha=0.05", "beta=0.05"]
BOOK = REPO / "tests" / "data" / "small.epd"
STYLES = {"fastchess": OrderStyle.INDEX, "cutechess": OrderStyle.STEPPED}


def _engine_words(peer: str, seed: int) -> list[str]:
    """One ``-engine`` as the stored run's command line wrote it."""
    if peer == "fastchess":
        return ["-engine", "cmd=python3", f"args=-m engine --uci --level 3 --seed {seed}",
                f"name={'ab'[seed - 1]}"]
    return ["-engine", "cmd=python3", "arg=-m", "arg=engine", "arg=--uci", "arg=--level",
            "arg=3", "arg=--seed", f"arg={seed}", f"name={'ab'[seed - 1]}", "proto=uci"]


def _argv(peer: str, extra: tuple[str, ...] = ()) -> list[str]:
    """The command line that wrote the stored run (its book and PGN relative to the cwd)."""
    pgn = ["file=x.pgn"] if peer == "fastchess" else ["x.pgn"]
    return [*_engine_words(peer, 1), *_engine_words(peer, 2), "-each", "tc=inf", "depth=1",
            "-games", "2", "-rounds", "3", "-openings", "file=book.epd", "format=epd",
            "order=random", "-srand", "7", *extra, "-pgnout", *pgn]


def _rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        return list(conn.execute(sql))


@pytest.mark.parametrize("peer", ["fastchess", "cutechess"])
def test_a_row_stored_before_the_seam_reads_as_its_style(peer: str) -> None:
    [(text, fingerprint)] = _rows(DATA / f"{peer}.db", "select config, fingerprint from tournaments")
    stored = json.loads(text)
    assert {"fastchess_order", "cutechess"} <= stored.keys()  # the old shape, both keys
    config = TournamentConfig.from_json(stored)
    assert config.order is not None and config.order.style is STYLES[peer]
    assert config.fingerprint() == fingerprint
    assert TournamentConfig.from_stored(stored) == config
    written = config.to_json()
    assert not {"fastchess_order", "cutechess"} & written.keys()
    assert TournamentConfig.from_json(written) == config
    assert upgrade_stored(written) is written  # today's shape is left as it is
    games = _rows(DATA / f"{peer}.db",
                  "select g.job_index, g.round, g.pair_index, g.game_in_pair, w.name, b.name "
                  "from games g join engines w on w.id = g.white_id "
                  "join engines b on b.id = g.black_id order by g.job_index")
    assert games, "the stored run has games"
    schedule = pairing_for(config)
    assert schedule.total() == 6
    for index, round_number, pair, in_pair, white, black in games:
        job = schedule.job(index)
        assert (job.round, job.pair, job.game_in_pair, job.white, job.black) == (
            round_number, pair, in_pair, white, black)


def test_an_unreadable_old_order_is_named() -> None:
    """A peer-named key holding neither a table nor null is refused with its key."""
    [(text,)] = _rows(DATA / "fastchess.db", "select config from tournaments")
    stored = {**json.loads(text), "fastchess_order": 3}
    from runner.config.check import ConfigError

    with pytest.raises(ConfigError, match="fastchess_order"):
        TournamentConfig.from_json(stored)


def test_the_sprt_model_stored_under_the_peer_s_word_reads_as_its_own_name() -> None:
    """Before the statistics named the model for what it is, runner-cutechess stored it as
    ``cutechess``: the row reads as `EloModel.SCALED_BAYESELO`, keeps its fingerprint, and is
    written back under the new word."""
    [(text, fingerprint)] = _rows(RENAMED, "select config, fingerprint from tournaments")
    stored = json.loads(text)
    assert stored["sprt"]["model"] == "cutechess"
    config = TournamentConfig.from_json(stored)
    assert config.sprt is not None and config.sprt.model is EloModel.SCALED_BAYESELO
    assert config.fingerprint() == fingerprint
    assert TournamentConfig.from_stored(stored) == config
    assert stored_setting(stored, "sprt") == config.sprt
    written = config.to_json()
    assert written["sprt"]["model"] == "scaled-bayeselo"
    assert TournamentConfig.from_json(written) == config


@pytest.mark.parametrize(("peer", "stored", "extra"), [
    ("fastchess", DATA / "fastchess.db", ()),
    ("cutechess", DATA / "cutechess.db", ()),
    # The fast test above reads this row; playing it on is the CI's slow run.
    pytest.param("cutechess", RENAMED, tuple(SPRT_WORDS), marks=pytest.mark.slow),
], ids=["fastchess", "cutechess", "cutechess-sprt"])
def test_the_same_command_line_continues_a_run_stored_before_the_seam(
        tmp_path: Path, peer: str, stored: Path, extra: tuple[str, ...]) -> None:
    db = tmp_path / "r.db"
    shutil.copyfile(stored, db)
    shutil.copyfile(BOOK, tmp_path / "book.epd")
    done_before = {row[0] for row in _rows(db, "select job_index from games "
                                               "where status = 'done'")}
    # The run wrote its engines as ``python3 -m engine``: this interpreter under that name.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    (bin_dir / "python3").chmod(0o755)
    env = {**os.environ, "PYTHONPATH": str(REPO), "RUNNER_DB": str(db),
           "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"}
    entry = (f"import sys; from runner.dropin.main import {peer}; "
             f"sys.argv[0] = 'runner-{peer}'; {peer}()")
    again = subprocess.run([sys.executable, "-c", entry, *_argv(peer, extra)], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=400)
    assert again.returncode == 0, again.stdout + again.stderr
    started = {int(line.split()[2]) for line in again.stdout.splitlines()
               if line.startswith("Started game")}
    assert started == {n for n in range(1, 7) if n - 1 not in done_before}
    assert _rows(db, "select count(*) from tournaments") == [(1,)]
    assert [row[0] for row in _rows(db, "select job_index from games where status = 'done' "
                                        "order by job_index")] == list(range(6))


@pytest.mark.parametrize("peer", ["fastchess", "cutechess"])
def test_runner_resume_plays_a_drop_in_run_stored_before_the_seam(tmp_path: Path,
                                                                  peer: str) -> None:
    """``runner resume`` knows no drop-in: it reads the stored row, finds the style's
    implementation by its value, and plays the missing games in the peer's order."""
    db = tmp_path / "r.db"
    shutil.copyfile(DATA / f"{peer}.db", db)
    shutil.copyfile(BOOK, tmp_path / "book.epd")
    # The row names the machine it was written on: its book and interpreter are this one's.
    with sqlite3.connect(db) as conn:
        [(text,)] = conn.execute("select config from tournaments")
        stored = json.loads(text)
        stored["openings"]["file"] = str(tmp_path / "book.epd")
        for engine in stored["engines"]:
            engine["command"][0] = sys.executable
        conn.execute("update tournaments set config = ?", (json.dumps(stored),))
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "runner", "resume", "1", "--db",
                           f"sqlite:///{db}", "-q"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=400)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "6 of 6 games stored" in done.stdout + done.stderr, done.stdout + done.stderr
    config = TournamentConfig.from_json(stored)
    schedule = pairing_for(config)
    games = _rows(db, "select g.job_index, w.name, b.name, g.pair_index from games g "
                      "join engines w on w.id = g.white_id join engines b on b.id = g.black_id "
                      "where g.status = 'done' order by g.job_index")
    assert [(i, schedule.job(i).white, schedule.job(i).black, schedule.job(i).pair)
            for i in range(6)] == games
