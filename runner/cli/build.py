"""``runner build``: an engine built from a git ref of an allow-listed repository, benched."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from runner.build import (
    BenchFailed,
    BuildFailed,
    GitError,
    Mirror,
    UnknownRef,
    WrongBench,
    build,
    check_bench,
    default_cache,
    load_recipes,
    measure_bench,
)
from runner.cli.errors import exit_on_error, fail, unwrapped
from runner.config.check import ConfigError
from runner.text import shown

_out = unwrapped(Console(highlight=False))



def build_command(
    engines_file: Path = typer.Argument(..., metavar="ENGINES_FILE",
                                        help="The engines file whose [[recipes]] lists it."),
    recipe_name: str = typer.Argument(..., metavar="RECIPE", help="The recipe's name."),
    ref: str = typer.Argument(..., metavar="REF", help="A branch, tag or commit of its "
                              "repository."),
    bench: bool = typer.Option(True, "--bench/--no-bench",
                               help="Run the built engine's bench (when its recipe has one)."),
    nodes: int | None = typer.Option(None, "--nodes", min=1, metavar="N",
                                     help="The bench's declared node count: exit 1 when the "
                                          "build gives another."),
    cache: Path | None = typer.Option(None, "--cache", metavar="DIR",
                                      help="The build cache (default: ~/.cache/cecp-runner)."),
) -> None:
    """Build an engine from a git ref of an allow-listed repository (a recipe of the engines
    file) and check its bench."""
    # From the cache when it was built before; exit 1 when the build or the bench fails or
    # the bench is not --nodes. A build runs the repository's own code with none of this
    # shell's variables but PATH and the locale (docs/builds.md).
    try:
        recipes = load_recipes(engines_file)
    except ConfigError as exc:
        raise exit_on_error(exc) from None
    if recipe_name not in recipes:
        known = ", ".join(recipes) or "none"
        raise fail(f"{engines_file}: no recipe {recipe_name!r} (recipes: {known})")
    recipe = recipes[recipe_name]
    where = cache or default_cache()
    mirror = Mirror(recipe.repository, where)
    try:
        mirror.update()
        commit = mirror.resolve(ref)
    except UnknownRef as exc:
        raise fail(str(exc)) from None
    except GitError as exc:
        raise fail(str(exc), 1) from None
    _out.print(f"{shown(recipe.name)} at {commit.sha[:12]} ({shown(commit.subject)})")
    try:
        built = build(recipe, commit.sha, where, mirror=mirror)
    except BuildFailed as exc:
        tail = "\n".join(exc.log.splitlines()[-20:])
        _out.print(shown(tail, multiline=True))
        raise fail(f"build failed: {exc}", 1) from None
    except GitError as exc:
        raise fail(str(exc), 1) from None
    how = ("from the cache" if built.cached else "nothing to build" if not recipe.build
           else f"built in {built.seconds:.1f} s")
    _out.print(f"build: {how} ({built.tree})")
    try:
        engine = built.engine()
    except ConfigError as exc:
        raise exit_on_error(exc) from None
    _out.print("engine: " + " ".join(shown(part) for part in engine.command))
    if not bench or not recipe.bench:
        if nodes is not None:
            raise fail("--nodes needs the bench, and this recipe has none" if not recipe.bench
                       else "--nodes needs the bench (not --no-bench)")
        return
    try:
        measured = measure_bench(built)
        check_bench(measured, nodes, "--nodes")
    except BenchFailed as exc:
        _out.print(shown(exc.output[-2000:], multiline=True))
        raise fail(str(exc), 1) from None
    except WrongBench as exc:
        raise fail(str(exc), 1) from None
    speed = f", {measured.nps} nodes/s" if measured.nps is not None else ""
    _out.print(f"bench: {measured.nodes} nodes{speed}")


def register(app: typer.Typer) -> None:
    """Add ``build`` to `app`."""
    app.command("build")(build_command)
