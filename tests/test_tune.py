"""``runner tune``: the tuning file, the stored iterations and their resume, and real runs of
the bundled engine's Skew option (best at 60 by construction, engine.player.SKEW_OPTIMUM).

The resume bookkeeping is checked in-process with a scripted result source (a pure function
of the values played, so both runs see the same results); the real runs play the bundled
engine through the run verb."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.player import SKEW_OPTIMUM
from runner.app.report import report
from runner.app.run import Placement
from runner.app.signals import Interrupted
from runner.app.tune import Played, tune
from runner.config.check import ConfigError
from runner.config.model import TournamentConfig
from runner.config.tune import PLUS, TuneConfig, load_tune
from runner.protocol.engine import Engine, EngineConfig
from runner.protocol.factory import make_engine
from runner.report.render import render_html
from runner.store.store import Store
from runner.tuning.spsa import flips, gains, probe

REPO = Path(__file__).resolve().parent.parent


def _file(tmp_path: Path, *, iterations: int, start: int = 140, depth: int = 1,
          r_end: float = 0.02, extra: str = "", name: str = "tune test",
          protocol: str = "cecp", concurrency: int = 2, maxmoves: int = 80) -> Path:
    """A tuning file of the bundled engine's Skew at `depth`."""
    path = tmp_path / f"{name.replace(' ', '-')}.toml"
    path.write_text(f"""
name = "{name}"
engines_file = "{REPO / 'configs' / 'engines.toml'}"
engine = {{ use = "bundled", command = ["{sys.executable}", "-m", "engine", "--depth", "{depth}"\
{', "--uci"' if protocol == "uci" else ""}], protocol = "{protocol}" }}
iterations = {iterations}
seed = 5
batch = 1
tc = "30+0.1"
concurrency = {concurrency}
maxmoves = {maxmoves}
{extra}
[openings]
file = "{REPO / 'configs' / 'openings' / 'demo.epd'}"
order = "random"
seed = 3

[parameters.Skew]
start = {start}
min = 0
max = 200
c_end = 8
r_end = {r_end}
""")
    return path


def test_tuning_file_refusals_name_the_key(tmp_path: Path) -> None:
    """Missing parameters, a start outside the bounds and tournament-only keys are refused,
    each with its key; a good file becomes a match of two named sides with the values set."""
    good = load_tune(_file(tmp_path, iterations=3))
    pair = good.pair(2, (150,), (130,))
    assert [e.name for e in pair.engines] == [PLUS, "minus"]
    assert dict(pair.engines[0].options)["Skew"] == 150
    assert dict(pair.engines[1].options)["Skew"] == 130
    assert pair.games == 2 and pair.rounds == 1 and pair.name == "tune test #2"
    assert pair.openings is not None and pair.openings.start == 2
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nengine = "nowhere"\niterations = 0\nrounds = 3\n'
                   "[parameters.P]\nstart = 5\nmin = 0\nmax = 4\nc_end = 1\nr_end = 0.1\n")
    with pytest.raises(ConfigError) as caught:
        load_tune(bad)
    text = str(caught.value)
    for key in ("iterations", "rounds", "parameters.P.start"):
        assert key in text


def _scripted(log: list[int], stop_at: int | None = None):
    """A result source: the side nearer the optimum wins both games (a draw when equal);
    `Interrupted` at iteration `stop_at` (as a Ctrl-C in the pair)."""

    async def player(config: TournamentConfig, _store: Store, _placement: Placement
                     ) -> Played | Interrupted:
        k = int(config.name.rsplit("#", 1)[1])
        if k == stop_at:
            return Interrupted(130)
        log.append(k)
        plus, minus = (dict(e.options)["Skew"] for e in config.engines)
        assert isinstance(plus, int) and isinstance(minus, int)
        gap = abs(int(minus) - SKEW_OPTIMUM) - abs(int(plus) - SKEW_OPTIMUM)
        return Played(2 if gap > 0 else -2 if gap < 0 else 0, k)

    return player


def test_resume_continues_with_the_same_draws(any_db, tmp_path: Path) -> None:
    """Stopped at iteration 7, the same file again ends at the very theta (and stored values)
    of an uninterrupted run; another plan under the same name is refused."""
    store = Store.of(any_db)
    whole = load_tune(_file(tmp_path, iterations=20, r_end=0.05, name="whole"))
    cut = load_tune(_file(tmp_path, iterations=20, r_end=0.05, name="cut"))
    played: list[int] = []
    straight = asyncio.run(tune(whole, store, player=_scripted([])))
    first = asyncio.run(tune(cut, store, player=_scripted(played, stop_at=7)))
    assert (first.done, first.exit_status) == (6, 130)
    second = asyncio.run(tune(cut, store, player=_scripted(played)))
    assert played == list(range(1, 21))
    assert second.theta == straight.theta and second.done == 20
    assert second.theta["Skew"] < 140
    a, b = (store.tunes.iterations(store.tunes.find(n).id) for n in ("whole", "cut"))
    assert [(i.flips, i.plus, i.minus, i.theta) for i in a] == \
        [(i.flips, i.plus, i.minus, i.theta) for i in b]
    other = load_tune(_file(tmp_path, iterations=30, name="cut"))
    refused = asyncio.run(tune(other, store, player=_scripted([])))
    assert refused.exit_status == 2 and "iterations is 30" in (refused.message or "")


def test_pairs_in_flight_share_a_theta_and_resume_exactly(any_db, tmp_path: Path) -> None:
    """At concurrency 6 three pairs play at once, all around the theta of their round's
    start with its first iteration's gains, each stepping theta in the order of k; stopped in
    the middle of a round (iteration 8 of 7..9), the same file ends as an uninterrupted run."""
    store = Store.of(any_db)
    whole = load_tune(_file(tmp_path, iterations=14, r_end=0.05, name="w", concurrency=6))
    cut = load_tune(_file(tmp_path, iterations=14, r_end=0.05, name="c", concurrency=6))
    assert whole.pairs_at_once == 3 and whole.base.concurrency == 2
    assert whole.plan()["pairs_at_once"] == 3
    flight = {"now": 0, "most": 0}
    centres: dict[int, tuple[int, int]] = {}
    base = _scripted([])

    async def player(config: TournamentConfig, store_: Store, placement: Placement):
        flight["now"] += 1
        flight["most"] = max(flight["most"], flight["now"])
        await asyncio.sleep(0.01 * (3 - int(config.name.rsplit("#", 1)[1]) % 3))
        flight["now"] -= 1
        plus, minus = (dict(e.options)["Skew"] for e in config.engines)
        centres[int(config.name.rsplit("#", 1)[1])] = (int(plus), int(minus))
        return await base(config, store_, placement)

    straight = asyncio.run(tune(whole, store, player=player))
    assert flight["most"] == 3 and straight.done == 14
    stored = store.tunes.iterations(store.tunes.find("w").id)
    _check_rounds(whole, stored)
    played: list[int] = []
    first = asyncio.run(tune(cut, store, player=_scripted(played, stop_at=8)))
    assert first.exit_status == 130 and first.done == 7
    second = asyncio.run(tune(cut, store, player=_scripted(played)))
    assert second.theta == straight.theta and second.done == 14
    again = store.tunes.iterations(store.tunes.find("c").id)
    assert [(i.flips, i.plus, i.minus, i.theta) for i in again] == \
        [(i.flips, i.plus, i.minus, i.theta) for i in stored]


def _check_rounds(config: TuneConfig, stored: list) -> None:
    """Every pair of a round probes around the round's starting theta with the gains of its
    first iteration; theta steps in the order of k."""
    (parameter,) = config.parameters
    plan = gains(parameter, config.iterations)
    theta = parameter.start
    for first in range(1, config.iterations + 1, 3):
        base = theta
        for k in range(first, min(first + 3, config.iterations + 1)):
            done = stored[k - 1]
            (sign,) = flips(config.seed, k, 1)
            expected = probe(parameter, plan, base, first, sign)
            assert done.flips == (sign,)
            assert abs(done.plus[0] - expected.plus) < 1 and abs(done.minus[0] - expected.minus) < 1
            theta = parameter.clamp(theta + expected.r_k * expected.c_k * done.result * sign)
            assert done.theta[0] == pytest.approx(theta)


@pytest.mark.parametrize("protocol", ["cecp", pytest.param("uci", marks=pytest.mark.slow)])
def test_engines_stay_up_between_pairs(tmp_path: Path, protocol: str) -> None:
    """Real pairs of the bundled engine: each side's process is started once for the run
    (the same pids at every iteration) and is sent each pair's value (CECP ``option``, UCI
    ``setoption``) rather than started again (UCI in the slow run: CI time)."""
    made: list[Engine] = []

    def started(config: EngineConfig) -> Engine:
        made.append(make_engine(config))
        return made[-1]

    pids: list[list[int | None]] = []
    config = load_tune(_file(tmp_path, iterations=2, protocol=protocol, maxmoves=12))
    store = Store.open(f"sqlite:///{tmp_path / 'reuse.db'}")
    try:
        outcome = asyncio.run(tune(config, store, engine_factory=started,
                                   on_iteration=lambda _i: pids.append([e.pid for e in made])))
        assert outcome.exit_status == 0 and outcome.done == 2
        stored = store.tunes.iterations(outcome.tune_id)
    finally:
        store.close()
    assert len(made) == 4 and len(pids) == 2 and None not in pids[0]
    assert pids[0] == pids[1] and len(set(pids[0])) == 4
    said = "option Skew=" if protocol == "cecp" else "setoption name Skew value "
    for engine in made:
        side = 0 if engine.name == PLUS else 1
        wanted = [(i.plus, i.minus)[side][0] for i in stored]
        sent = [int(e.text.removeprefix(said)) for e in engine.transcript
                if e.direction == ">" and e.text.startswith(said)]
        assert sent == [v for n, v in enumerate(wanted) if n == 0 or wanted[n - 1] != v], \
            (engine.name, sent, wanted)


def _runner(*args: str) -> list[str]:
    return [sys.executable, "-m", "runner", *args]


def test_real_tuning_run_stores_its_pairs(tmp_path: Path) -> None:
    """Two real iterations: a line each, the values as option words, each pair's two games
    stored with the side values the iteration recorded; a pair's HTML report draws theta."""
    db = f"sqlite:///{tmp_path / 'tune.db'}"
    # Games cut at 16 moves: what is checked is what is stored, not how the games end.
    done = subprocess.run(_runner("tune", str(_file(tmp_path, iterations=2, maxmoves=16)),
                                  "--db", db),
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("iteration 1/2: Skew=") and lines[1].startswith("iteration 2/2")
    assert lines[-1].startswith("option.Skew=")
    store = Store.open(db)
    try:
        run = store.tunes.find("tune test")
        assert run is not None
        stored = store.tunes.iterations(run.id)
        assert [i.k for i in stored] == [1, 2]
        for iteration in stored:
            assert iteration.tournament_id is not None
            games = list(store.games())
            games = [g for g in games if g.tournament_id == iteration.tournament_id]
            assert len(games) == 2 and {g.white for g in games} == {PLUS, "minus"}
            assert abs(iteration.result) <= 2
            assert abs(iteration.plus[0] - iteration.minus[0]) >= 8
        assert lines[-1] == f"option.Skew={round(stored[-1].theta[0])}"
        page = render_html(report(store, stored[-1].tournament_id))
        assert 'data-plot="tuning"' in page and "SPSA tune test: theta over iterations" in page
        series = report(store, stored[-1].tournament_id)
        assert series.tuning is not None
        assert [k for k, _theta in series.tuning.points] == [1, 2]
    finally:
        store.close()


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_kill_9_then_the_same_command_ends_as_an_uninterrupted_run(tmp_path: Path) -> None:
    """The bundled engine at depth 2 plays the same moves for the same values: killed with
    SIGKILL after its second iteration, the same command ends at the uninterrupted theta
    (depth 1 draws every pair by repetition, which would leave theta where it started)."""
    whole_db = f"sqlite:///{tmp_path / 'whole.db'}"
    cut_db = f"sqlite:///{tmp_path / 'cut.db'}"
    path = _file(tmp_path, iterations=4, depth=2)
    straight = subprocess.run(_runner("tune", str(path), "--db", whole_db), capture_output=True,
                              text=True, timeout=600, check=True)
    process = subprocess.Popen(_runner("tune", str(path), "--db", cut_db),
                               stdout=subprocess.PIPE, text=True, start_new_session=True)
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("iteration 2/"):
            os.killpg(process.pid, signal.SIGKILL)
            break
    process.wait(timeout=60)
    assert process.returncode == -signal.SIGKILL
    time.sleep(0.5)
    again = subprocess.run(_runner("tune", str(path), "--db", cut_db), capture_output=True,
                           text=True, timeout=600, check=True)
    assert "Skew=140.00" not in straight.stdout.splitlines()[3], straight.stdout
    assert again.stdout.splitlines()[0].startswith("iteration 3/4")
    assert again.stdout.splitlines()[-1] == straight.stdout.splitlines()[-1]
    assert again.stdout.splitlines()[-3] == straight.stdout.splitlines()[-3]


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_real_tuning_moves_toward_the_known_optimum(tmp_path: Path) -> None:
    """From 140, far from the optimum 60, real game pairs at depth 2 move theta down by a
    clear margin with a fixed seed (generous: at least 40 of the 80 units; 64 when measured)."""
    path = _file(tmp_path, iterations=40, r_end=0.2, depth=2)
    done = subprocess.run(_runner("tune", str(path), "--db", f"sqlite:///{tmp_path / 't.db'}",
                                  "-q"), capture_output=True, text=True, timeout=1800,
                          check=True)
    value = int(done.stdout.splitlines()[-1].split("=")[1])
    assert value <= 100, done.stdout


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_workers_n_starts_one_cluster_for_the_whole_run(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """``--workers 1``: one local Dask cluster plays every pair (not one per pair), and the
    iterations are those of the run in this process (depth 1: the same games)."""
    pytest.importorskip("distributed", reason="the cluster extra (distributed) is not installed")
    import runner.cluster.scheduler as dask_room

    started: list[int] = []
    real = dask_room.start_local_cluster

    async def counted(workers: int, concurrency: int) -> object:
        started.append(workers)
        return await real(workers, concurrency)

    monkeypatch.setattr(dask_room, "start_local_cluster", counted)
    config = load_tune(_file(tmp_path, iterations=3, maxmoves=12))
    with Store.open(f"sqlite:///{tmp_path / 'dask.db'}") as store:
        outcome = asyncio.run(tune(config, store, placement=Placement(workers=1)))
        on_dask = [(i.plus, i.minus, i.result, i.theta)
                   for i in store.tunes.iterations(outcome.tune_id)]
    assert outcome.done == 3 and started == [1], (outcome, started)  # no cluster per pair
    with Store.open(f"sqlite:///{tmp_path / 'here.db'}") as store:
        outcome = asyncio.run(tune(config, store))
        here = [(i.plus, i.minus, i.result, i.theta)
                for i in store.tunes.iterations(outcome.tune_id)]
    assert on_dask == here


def test_upgrading_a_database_keeps_its_stored_iterations(tmp_path: Path) -> None:
    """The migration that adds the service's columns to ``tunes`` (b62e0d4f9a13) keeps every
    stored iteration on SQLite (a table copied and dropped there would cascade to them)."""
    import sqlite3

    from alembic import command

    from runner.store.db import alembic_config

    path = tmp_path / "old.db"
    config = alembic_config(f"sqlite:///{path}")
    command.upgrade(config, "a41c7e2b5d90")
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("insert into tunes (id, name, plan, created_at) values "
                   "(1, 'old', '{}', '2026-11-28 00:00:00')")
        db.execute("insert into tune_iterations (tune_id, k, flips, plus, minus, result, "
                   "theta, created_at) values (1, 1, '[1]', '[148]', '[132]', 1, '[140.5]', "
                   "'2026-11-28 00:00:00')")
    command.upgrade(config, "head")
    with Store.open(f"sqlite:///{path}", migrate=False) as store:
        kept = store.tunes.iterations(1)
        assert [(i.k, i.plus, i.theta) for i in kept] == [(1, (148,), (140.5,))]
        assert store.tunes.submitted() == []  # a runner tune run: not the service's
