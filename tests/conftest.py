"""Shared test fixtures: where the third-party corpora live, skip helpers, results databases."""

from __future__ import annotations

import asyncio
import datetime
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from postgres_server import PostgresServer, postgres_server  # noqa: F401 - pytest fixture

from runner.protocol.loop import loop_factory, new_asyncio_loop
from runner.store import Database, open_database

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"

EVENT_TIMEOUT = 30.0
"""Seconds a test waits for an event that normally comes in well under one: a loaded machine
does not reach it. A test that checks some wait was skipped sets that wait to twice this, so
a fault still fails it; no test asserts a tighter wall-clock bound (tests/test_no_wallclock_asserts.py)."""


@pytest.fixture(autouse=True, scope="session")
def _test_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The commands under test keep their cache (``runner list``'s compiled statements) in a
    directory of the test run, never in the user's ~/.cache; subprocesses inherit it."""
    import os

    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under xdist, the heavy files first (tests/file_seconds.py says why); a file's tests
    keep their order."""
    import os

    from file_seconds import FILE_SECONDS

    if os.environ.get("PYTEST_XDIST_WORKER"):  # every worker sorts alike: one collection
        items.sort(key=lambda item: -FILE_SECONDS.get(item.nodeid.partition("::")[0], 0.0))


def pytest_configure(config: pytest.Config) -> None:
    """Run every test's event loop on the loop the CLI would use (runner/protocol/loop.py:
    asyncio's, or uvloop with RUNNER_LOOP=uvloop): the tests call asyncio.run, which asks the
    policy for a new loop. tests/test_loop.py runs on both whatever the choice."""
    if loop_factory() is not None:
        import uvloop

        asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
        warm_uvloop()
    else:
        asyncio.set_event_loop_policy(_RunnersAsyncioPolicy())


class _RunnersAsyncioPolicy(asyncio.DefaultEventLoopPolicy):
    """asyncio's loop as the runner makes it (polling through ArrivalSelector, which stamps
    engine lines), for the tests' asyncio.run calls."""

    def new_event_loop(self) -> asyncio.AbstractEventLoop:
        """A new loop from runner/protocol/loop.py."""
        return new_asyncio_loop()


def warm_uvloop() -> None:
    """Start one process on uvloop (the policy must be uvloop's): libuv opens a pipe for its
    child-exit signals the first time, kept for the life of the process, which a test counting
    descriptors around its first game would take for a leak."""

    async def spawn() -> None:
        process = await asyncio.create_subprocess_exec("true")
        await process.wait()

    asyncio.run(spawn())


def pytest_report_header(config: pytest.Config) -> str:
    """Say which event loop the tests run on."""
    loop = asyncio.new_event_loop()
    loop.close()
    return f"event loop: {type(loop).__module__.split('.')[0]}"


def shared_file(*parts: str) -> Path:
    """Path of a file in ../shared/data, skipping the test with a clear reason when absent."""
    path = SHARED_DATA.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"shared corpus file {path} is absent (expected ../shared/data beside the repo)")
    return path


def shared_cases(values: list, where: Path, ids: Callable[[Any], str] = str) -> list:
    """`values` as test cases named by `ids`; none at all (a clone without ../shared/data)
    gives one case skipped with a reason naming `where`, where pytest would say only "got
    empty parameter set"."""
    if not values:
        reason = f"{where} is absent or empty (expected ../shared/data beside the repo)"
        return [pytest.param(None, id="shared-data-absent", marks=pytest.mark.skip(reason=reason))]
    return [pytest.param(value, id=ids(value)) for value in values]


def same_pgn_date(ours: str | None, theirs: str | None) -> bool:
    """Whether two PGN Date tags agree, allowing the next day: two tools playing the same argv
    side by side may start their games on either side of midnight."""
    if ours == theirs:
        return True
    try:
        days = [datetime.datetime.strptime(d or "", "%Y.%m.%d").date() for d in (ours, theirs)]
    except ValueError:
        return False
    return abs((days[0] - days[1]).days) == 1


def require_binary(name: str) -> str:
    """Full path of an installed program, skipping the test with a clear reason when absent."""
    found = shutil.which(name) or shutil.which(name, path="/usr/games:/usr/local/games")
    if found is None:
        pytest.skip(f"{name} is not installed (CI installs it with apt-get; see .ci/run)")
    return found


@pytest.fixture(params=["sqlite", "postgresql"])
def any_db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    """An empty, migrated database on each backend (PostgreSQL: a real temporary server)."""
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'runner.db'}"
    else:
        server: PostgresServer = request.getfixturevalue("postgres_server")
        url = server.new_database()
    database = open_database(url)
    try:
        yield database
    finally:
        database.close()
