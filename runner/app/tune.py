"""The tune verb: SPSA over game pairs, each pair a match played through the run verb.

Iteration ``k`` (from 1) draws its flips and rounding from the run's seed and ``k``
(`runner.tuning.spsa`), plays one game pair (the book's ``k``-th opening, colours swapped)
between the engine at ``theta + c_k*flip`` and at ``theta - c_k*flip`` as the tournament
``NAME #k`` (`run_tournament`: placement, leases, signals and resume are the run verb's),
then applies fishtest's step and stores the iteration in one transaction. A run stopped
anywhere (Ctrl-C, kill -9) continues from its last stored iteration with the same draws; a
pair it had begun is resumed as any tournament is, one it had finished is read back.

Iterations are played one after another: each is a pair played with its two games at once
(concurrency up to 2), so every step is applied to the theta its iteration was issued with.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from runner.app.modes import StartMode
from runner.app.run import Done, Placement, Refused, run_tournament
from runner.app.signals import Interrupted
from runner.config.model import TournamentConfig
from runner.config.tune import PLUS, TuneConfig
from runner.store.store import GameFilter, PlanChanged, Store, TuneIteration
from runner.tuning.spsa import flips, gains, probe, rounding_draws, spin_value, step

__all__ = ["PairPlayer", "Played", "TuneOutcome", "play_pair", "tune"]


@dataclass(frozen=True)
class Played:
    """A played pair: the plus side's wins minus its losses, and the pair's tournament."""

    result: int
    tournament_id: int


PairPlayer = Callable[[TournamentConfig, Store, Placement], Awaitable[Played | Refused | Interrupted]]
"""Plays one iteration's pair (the run verb's `play_pair`; a test's scripted source)."""


@dataclass(frozen=True)
class TuneOutcome:
    """How a tuning run ended: theta (by parameter name), iterations stored, why it stopped."""

    theta: dict[str, float]
    values: dict[str, int]
    """Theta rounded to the nearest integers, as ``option.NAME=VALUE`` words give them."""
    done: int
    total: int
    tune_id: int
    message: str | None = None
    exit_status: int = 0


async def play_pair(config: TournamentConfig, store: Store, placement: Placement,
                    ) -> Played | Refused | Interrupted:
    """Play `config`'s game pair through the run verb (continuing it when it was begun) and
    read its result back from the store."""
    outcome = await run_tournament(config, store, StartMode.CONTINUE, placement=placement)
    if isinstance(outcome, (Refused, Interrupted)):
        return outcome
    tournament_id = (outcome.finished.tournament_id if isinstance(outcome, Done)
                     else outcome.tournament_id)
    if not isinstance(outcome, Done) and outcome.signal is not None:
        return Interrupted(outcome.exit_status)
    if outcome.exit_status != 0:
        return Refused(getattr(outcome, "error", None) or
                       f"the pair {config.name!r} ended unfinished", outcome.exit_status)
    games = await asyncio.to_thread(
        lambda: list(store.games(GameFilter(tournament_id=tournament_id))))
    result = 0
    for game in games:
        if game.result is None or game.result.value == "1/2-1/2":
            continue
        white_won = game.result.value == "1-0"
        result += 1 if white_won == (game.white == PLUS) else -1
    return Played(result, tournament_id)


_HERE = Placement()
"""Where games go unless told: as `runner run` decides."""


async def tune(config: TuneConfig, store: Store, *, placement: Placement = _HERE,
               on_iteration: Callable[[TuneIteration], None] = lambda _i: None,
               player: PairPlayer = play_pair) -> TuneOutcome:
    """Run (or continue) `config`'s tuning in `store`; `on_iteration` hears each stored one."""
    try:
        run = await asyncio.to_thread(store.tunes.open, config.name, config.plan())
    except PlanChanged as exc:
        return _outcome(config, [p.start for p in config.parameters], 0, -1, str(exc), 2)
    stored = await asyncio.to_thread(store.tunes.iterations, run.id)
    theta = list(stored[-1].theta) if stored else [p.start for p in config.parameters]
    plans = [gains(p, config.iterations) for p in config.parameters]
    count = len(config.parameters)
    for k in range(len(stored) + 1, config.iterations + 1):
        signs = flips(config.seed, k, count)
        draws = rounding_draws(config.seed, k, count)
        probes = [probe(p, plan, t, k, s) for p, plan, t, s in
                  zip(config.parameters, plans, theta, signs, strict=True)]
        plus = tuple(spin_value(q.plus, d[0]) for q, d in zip(probes, draws, strict=True))
        minus = tuple(spin_value(q.minus, d[1]) for q, d in zip(probes, draws, strict=True))
        played = await player(config.pair(k, plus, minus), store, placement)
        if isinstance(played, (Refused, Interrupted)):
            message = played.message if isinstance(played, Refused) else "interrupted"
            return _outcome(config, theta, k - 1, run.id, message, played.exit_status)
        theta = [step(p, t, q, played.result) for p, t, q in
                 zip(config.parameters, theta, probes, strict=True)]
        record = TuneIteration(k, signs, plus, minus, played.result, tuple(theta),
                               played.tournament_id)
        await asyncio.to_thread(store.tunes.record, run.id, record)
        on_iteration(record)
    return _outcome(config, theta, config.iterations, run.id)


def _outcome(config: TuneConfig, theta: list[float], done: int, tune_id: int,
             message: str | None = None, exit_status: int = 0) -> TuneOutcome:
    """The outcome with theta named by parameter."""
    names = [p.name for p in config.parameters]
    return TuneOutcome(dict(zip(names, theta, strict=True)),
                       {n: round(t) for n, t in zip(names, theta, strict=True)}, done,
                       config.iterations, tune_id, message, exit_status)
