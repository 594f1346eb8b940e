"""A recipe's repository, mirrored in the build cache: refs resolved to commits, commits
listed between two of them, and a commit's files written out for a build.

Every call runs `git` with an argv (never a shell), a clean environment and a time limit;
a ref is refused when it could be read as an option. The files of a commit are written with
`git archive` into a tar stream that Python unpacks with tarfile's ``data`` filter, so no
path in a repository can reach outside the scratch directory.
"""

from __future__ import annotations

import hashlib
import io
import re
import shutil
import subprocess
import tarfile
from dataclasses import dataclass
from pathlib import Path

from runner.build.environment import clean_environment

__all__ = ["Commit", "GitError", "Mirror", "UnknownRef"]

_GIT_TIMEOUT = 300.0
_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
# What a ref may hold: git's own rules are looser, but nothing else is needed to name a
# branch, a tag or a commit, and nothing here can be read as an option or a revision range.
_REF = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_./@^~{}+-]{0,199}$")


class GitError(RuntimeError):
    """git failed (its last lines are in the message)."""


class UnknownRef(GitError):
    """A ref that names no commit of the repository."""


@dataclass(frozen=True)
class Commit:
    """One commit: its full hash and its subject line."""

    sha: str
    subject: str


class Mirror:
    """A bare mirror of one repository in the cache, fetched before refs are resolved."""

    def __init__(self, repository: str, cache: Path) -> None:
        self.repository = repository
        key = hashlib.sha256(repository.encode()).hexdigest()[:24]
        self.path = cache / "repositories" / f"{key}.git"

    def update(self) -> None:
        """Clone the repository the first time, fetch every ref afterwards."""
        if (self.path / "HEAD").is_file():
            self._git("fetch", "--prune", "--quiet", "origin")
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        scratch = self.path.with_name(self.path.name + ".partial")
        if scratch.exists():
            _remove(scratch)
        _run(["git", "clone", "--mirror", "--quiet", "--", self.repository, str(scratch)],
             None)
        scratch.rename(self.path)

    def resolve(self, ref: str) -> Commit:
        """The commit `ref` names (a branch, a tag, a full or short hash); raises UnknownRef."""
        if not _REF.match(ref) or ".." in ref:
            raise UnknownRef(f"{ref!r} is not a ref this runner takes (a branch, tag or hash)")
        try:
            sha = self._git("rev-parse", "--verify", "--quiet", "--end-of-options",
                            f"{ref}^{{commit}}").strip()
        except GitError:
            raise UnknownRef(f"no commit {ref!r} in {self.repository}") from None
        if not _SHA.match(sha):
            raise UnknownRef(f"no commit {ref!r} in {self.repository}")
        return Commit(sha, self._git("log", "-1", "--format=%s", sha).strip())

    def between(self, base: str, dev: str, *, limit: int = 200) -> list[Commit]:
        """The commits in `dev` but not in `base`, newest first (at most `limit`)."""
        for sha in (base, dev):
            if not _SHA.match(sha):
                raise UnknownRef(f"{sha!r} is not a resolved commit")
        text = self._git("log", f"--max-count={limit}", "--format=%H %s", f"{base}..{dev}")
        return [Commit(*line.split(" ", 1)) if " " in line else Commit(line, "")
                for line in text.splitlines() if line]

    def export(self, sha: str, target: Path) -> None:
        """Write commit `sha`'s files into the new directory `target`."""
        if not _SHA.match(sha):
            raise UnknownRef(f"{sha!r} is not a resolved commit")
        data = _run(["git", "--git-dir", str(self.path), "archive", "--format=tar", sha], None)
        target.mkdir(parents=True)
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as archive:
            archive.extractall(target, filter="data")

    def _git(self, *args: str) -> str:
        """Run a git command on the mirror; its standard output."""
        out = _run(["git", "--git-dir", str(self.path), *args], None)
        return out.decode("utf-8", "replace")


def _run(argv: list[str], cwd: Path | None) -> bytes:
    """Run git; its output, or GitError with the end of what it said."""
    try:
        done = subprocess.run(argv, cwd=cwd, env=clean_environment(), capture_output=True,
                              timeout=_GIT_TIMEOUT, check=False, stdin=subprocess.DEVNULL)
    except FileNotFoundError:
        raise GitError("git is not installed (it is needed to build engines from refs)") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {argv[1:3]} took more than {_GIT_TIMEOUT:.0f} s") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        raise GitError(f"git {' '.join(argv[1:4])} failed: {' / '.join(said)}")
    return done.stdout


def _remove(path: Path) -> None:
    """Delete a directory tree left by an interrupted clone."""
    shutil.rmtree(path, ignore_errors=True)
