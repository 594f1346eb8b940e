"""``runner tune``: the command line's view of the tune verb (`runner.app.tune`): a line per
batch of iterations, the final values as ``option.NAME=VALUE`` words, the exit status."""

from __future__ import annotations

from pathlib import Path
from typing import NoReturn

import typer

from runner.app.run import MissingExtra, Placement
from runner.app.tune import TuneOutcome, tune
from runner.cli.errors import exit_on_error, fail, missing_extra, open_db
from runner.cli.loop import run_async
from runner.config.check import ConfigError
from runner.config.tune import TuneConfig, load_tune
from runner.store.store import TuneIteration

__all__ = ["tune_file"]


def _line(config: TuneConfig, played: TuneIteration) -> str:
    """One live line: the iteration and each parameter's theta."""
    values = " ".join(f"{p.name}={t:.2f}" for p, t in
                      zip(config.parameters, played.theta, strict=True))
    return f"iteration {played.k}/{config.iterations}: {values}"


def tune_file(config_file: Path, *, db: str | None, quiet: bool, workers: int | None,
              cluster: str | None) -> NoReturn:
    """Run or continue the tuning a TOML file describes; print its values; exit with its status."""
    try:
        config = load_tune(config_file)
    except (ConfigError, OSError) as exc:
        raise exit_on_error(exc) from None
    if workers is not None and cluster is not None:
        raise fail("give --workers (a local cluster) or --cluster (a running scheduler), not both")

    def heard(played: TuneIteration) -> None:
        if not quiet and (played.k % config.batch == 0 or played.k == config.iterations):
            typer.echo(_line(config, played))

    with open_db(db or config.base.database) as store:
        try:
            outcome: TuneOutcome = run_async(tune(
                config, store, placement=Placement(workers=workers, cluster=cluster),
                on_iteration=heard))
        except MissingExtra as exc:
            raise missing_extra(exc, "playing on Dask", "cluster") from None
    if outcome.message is not None:
        typer.echo(f"tuning {config.name!r} stopped after iteration {outcome.done}: "
                   f"{outcome.message}", err=True)
    typer.echo(f"tuned {config.name!r}: {outcome.done}/{outcome.total} iterations")
    typer.echo(" ".join(f"option.{name}={value}" for name, value in outcome.values.items()))
    raise typer.Exit(outcome.exit_status)
