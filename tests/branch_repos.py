"""Git repositories the branch-test tests build from: the bundled engine's own tree with a
base commit whose level 2 only takes the largest capture it sees and a dev commit whose
level 2 searches two plies (the engine as shipped): a real and large gain of strength, so
that an SPRT ends within a few game pairs."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tests.conftest import REPO

__all__ = ["BUNDLED_RECIPE", "bundled_branch_repo", "git"]

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
