"""Git repositories the branch-test tests build from: the bundled engine's own tree with a
base commit whose level 2 only takes the largest capture it sees and a dev commit whose
level 2 searches two plies (the engine as shipped): a real and large gain of strength, so
that an SPRT ends within a few game pairs."""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

from tests.conftest import REPO

__all__ = ["BUNDLED_RECIPE", "PLACED_BUILD", "bundled_branch_repo", "fairymax_branch_repo", "git",
           "picky_build", "script_repo"]

_GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
            "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}

BUNDLED_RECIPE = """
[[recipes]]
name = "bundled"
repository = "engine-repo"
command = ["python", "-m", "engine", "--level", "2"]
bench = ["bench", "2"]
protocol = "cecp"
"""
"""The recipe of `bundled_branch_repo`'s repository, for an engines file beside it."""


def git(repo: Path, *args: str) -> None:
    """Run git in `repo` with a fixed author (raises on failure)."""
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={**os.environ, **_GIT_ENV})


def bundled_branch_repo(root: Path) -> Path:
    """``root/engine-repo``: branch ``main`` (base) and ``deeper`` (dev, one commit on)."""
    repo = root / "engine-repo"
    shutil.copytree(REPO / "engine", repo / "engine",
                    ignore=shutil.ignore_patterns("__pycache__"))
    config = repo / "engine" / "config.py"
    shipped = config.read_text()
    assert '"2": StrengthLimits(depth=2)' in shipped
    config.write_text(shipped.replace('"2": StrengthLimits(depth=2)',
                                      '"2": StrengthLimits(greedy=True)'))
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "level 2 takes the largest capture")
    git(repo, "checkout", "-q", "-b", "deeper")
    config.write_text(shipped)
    git(repo, "commit", "-q", "-am", "level 2 searches two plies")
    return repo


PLACED_BUILD = '''
import pathlib

# The build's output depends on the directory it is built in: the same commit gives another
# bench on another machine (here: another build cache).
nodes = 1000 * len(str(pathlib.Path.cwd()))
pathlib.Path("nodes.txt").write_text(str(nodes))
print("built for", pathlib.Path.cwd())
'''
"""A build script whose engine's bench depends on where it is built (another machine's cache
gives another node count)."""

_BENCH_ENGINE = '''
import pathlib
import sys

if sys.argv[1:] == ["bench"]:
    print("Nodes searched: " + pathlib.Path("nodes.txt").read_text())
'''


def picky_build(marker: str) -> str:
    """A build script that fails, with a compiler's last lines, in a checkout whose path
    holds `marker` (a worker's cache) and builds elsewhere (the host's)."""
    return f'''
import pathlib
import sys

if {marker!r} in str(pathlib.Path.cwd()):  # the worker's cache, not the host's
    print("cc -c search.c")
    sys.exit("search.c:7: error: this machine lacks the header it needs")
pathlib.Path("nodes.txt").write_text("1")
'''


def script_repo(root: Path, name: str, build: str, message: str) -> Path:
    """``root/NAME``: one commit of `build` as ``make.py`` and an ``engine.py`` whose bench
    prints the node count the build wrote."""
    repo = root / name
    repo.mkdir()
    (repo / "make.py").write_text(build)
    (repo / "engine.py").write_text(_BENCH_ENGINE)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return repo


def fairymax_branch_repo(tarball: Path, root: Path) -> Path:
    """``root/fairymax``: Debian's fairymax source `tarball` as branch ``main`` and a ``dev``
    branch one commit on (a note, not a change of play)."""
    repo = root / "fairymax"
    with tarfile.open(tarball) as archive:
        archive.extractall(root / "unpacked", filter="data")
    (source,) = (root / "unpacked").iterdir()
    shutil.copytree(source, repo)
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "fairymax 5.0b")
    (repo / "NOTE").write_text("dev side\n")
    git(repo, "checkout", "-q", "-b", "dev")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a dev commit")
    return repo
