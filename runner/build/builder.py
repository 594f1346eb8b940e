"""Building a recipe at a commit, once: a scratch checkout, the build's argv with a time
limit and a bounded log, and a cache keyed by what decides the output.

The key is the recipe's repository, build argv, engine argv and environment, the commit, and
the compiler the machine has (`cc --version`): the same key on the same machine gives the same
binary, so a second test of the same commit starts at once. Concurrent builders of one key
(two tests, two runner processes) take a file lock: the second finds the first one's build.
"""

from __future__ import annotations

import collections
import fcntl
import functools
import hashlib
import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from runner.build.environment import clean_environment, stop_group
from runner.build.git import Mirror
from runner.config.engines import parse_engine
from runner.config.model import EngineSpec
from runner.config.recipes import Recipe

__all__ = ["LOG_LIMIT", "Build", "BuildFailed", "build", "compiler_identity", "default_cache"]

LOG_LIMIT = 64 * 1024
"""The bytes of a build's output kept (its end: where a compiler's error is)."""


class BuildFailed(RuntimeError):
    """A build that did not give an engine; `log` is the end of what it printed."""

    def __init__(self, message: str, log: str) -> None:
        super().__init__(message)
        self.log = log


@dataclass(frozen=True)
class Build:
    """A recipe built at a commit: where its files are and what the build said."""

    recipe: Recipe
    commit: str
    tree: Path
    """The checkout the engine was built and runs in."""
    key: str
    cached: bool
    """Found in the cache rather than built now."""
    log: str
    seconds: float
    """How long the build itself took (when it was made)."""
    compiler: str

    def engine_table(self, name: str | None = None) -> dict[str, Any]:
        """The built engine as an engine table (a tournament file's ``[[engines]]`` entry)."""
        table = {**self.recipe.engine, "name": name or f"{self.recipe.name}-{self.commit[:8]}",
                 "command": list(self.recipe.command), "dir": str(self.tree)}
        if self.recipe.env:
            table["env"] = dict(self.recipe.env)
        return table

    def engine(self, name: str | None = None) -> EngineSpec:
        """The built engine as an engine of the engines file (raises ConfigError)."""
        return parse_engine(self.engine_table(name), source=self.recipe.source,
                            base_dir=self.tree)


def default_cache() -> Path:
    """Where builds are kept unless told: the user's cache directory."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cecp-runner"


@functools.cache
def compiler_identity() -> str:
    """The first line of `cc --version` (`none` when the machine has no C compiler)."""
    try:
        done = subprocess.run(["cc", "--version"], capture_output=True, timeout=30,
                              env=clean_environment(), stdin=subprocess.DEVNULL, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "none"
    lines = done.stdout.decode("utf-8", "replace").splitlines()
    return lines[0].strip() if done.returncode == 0 and lines else "none"


def build(recipe: Recipe, commit: str, cache: Path, *, mirror: Mirror | None = None) -> Build:
    """`recipe` built at `commit` (a resolved hash), from the cache when it was built before;
    raises BuildFailed (with the log's end) or GitError."""
    compiler = compiler_identity()
    identity = {"recipe": recipe.identity(), "commit": commit, "compiler": compiler}
    key = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:32]
    home = cache / "builds"
    home.mkdir(parents=True, exist_ok=True)
    done = home / key
    with _locked(home / f"{key}.lock"):
        made = _read_done(done)
        if made is not None:
            return Build(recipe, commit, done / "tree", key, True, str(made.get("log", "")),
                         float(str(made.get("seconds", 0.0))), compiler)
        source = mirror or Mirror(recipe.repository, cache)
        source.update()
        scratch = home / f"{key}.partial"
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir()
        (scratch / "home").mkdir()
        source.export(commit, scratch / "tree")
        started = time.monotonic()
        log = _run_build(recipe, scratch)
        seconds = time.monotonic() - started
        _check_program(recipe, scratch / "tree", log)
        record = {"commit": commit, "compiler": compiler, "seconds": seconds, "log": log,
                  "recipe": recipe.identity()}
        (scratch / "build.json").write_text(json.dumps(record, indent=1))
        scratch.rename(done)
    return Build(recipe, commit, done / "tree", key, False, log, seconds, compiler)


def _read_done(path: Path) -> dict[str, object] | None:
    """A finished build's record, or None (never built, or left half-made)."""
    try:
        record = json.loads((path / "build.json").read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on `path` (blocking): one builder per key at a time."""
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _run_build(recipe: Recipe, scratch: Path) -> str:
    """Run the build argv in the checkout; the end of its output, or BuildFailed."""
    if not recipe.build:
        return ""
    tree = scratch / "tree"
    env = clean_environment(recipe.env, home=str(scratch / "home"))
    try:
        process = subprocess.Popen(recipe.build, cwd=tree, env=env, stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   start_new_session=True)
    except OSError as error:
        raise BuildFailed(f"the build command {recipe.build[0]!r} could not start: "
                          f"{error.strerror or error}", "") from None
    tail = _Tail(LOG_LIMIT)
    assert process.stdout is not None
    reader = threading.Thread(target=tail.read, args=(process.stdout,), daemon=True)
    reader.start()
    try:
        status = process.wait(timeout=recipe.build_timeout)
    except subprocess.TimeoutExpired:
        stop_group(process)
        reader.join(timeout=10)
        raise BuildFailed(f"the build took longer than {recipe.build_timeout:g} s and was "
                          "stopped", tail.text()) from None
    finally:
        # A build that left a child behind (a make -j worker, a daemon) does not outlive it.
        stop_group(process)
    reader.join(timeout=10)
    if status != 0:
        raise BuildFailed(f"the build exited with status {status}", tail.text())
    return tail.text()


def _check_program(recipe: Recipe, tree: Path, log: str) -> None:
    """Refuse a build after which the engine's program is not in the checkout."""
    program = recipe.command[0]
    if "/" not in program and not (tree / program).exists():
        return  # a program from PATH (python, a system interpreter): nothing built to check
    path = tree / program
    if not path.is_file() or not os.access(path, os.X_OK):
        raise BuildFailed(f"the build gave no executable {program!r} in the checkout", log)



class _Tail:
    """The last `limit` bytes of a stream, read to its end on a thread."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._chunks: collections.deque[bytes] = collections.deque()
        self._size = 0
        self.total = 0

    def read(self, stream: IO[bytes]) -> None:
        """Read `stream` to its end, keeping only its last bytes."""
        for chunk in iter(lambda: stream.read1(65536), b""):  # type: ignore[attr-defined]
            self._chunks.append(chunk)
            self._size += len(chunk)
            self.total += len(chunk)
            while self._size - len(self._chunks[0]) >= self._limit:
                self._size -= len(self._chunks.popleft())

    def text(self) -> str:
        """What was kept, decoded, marked when the start was dropped."""
        data = b"".join(self._chunks)[-self._limit:]
        text = data.decode("utf-8", "replace")
        if self.total > len(data):
            return f"[{self.total - len(data)} bytes before this were left out]\n{text}"
        return text
