"""`runner test run`: a branch against main from refs of one recipe (the bundled engine's
own tree in a git repository made here), benches checked, STC then LTC chained on the SPRT."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from runner.build.testfile import load_branch_test
from runner.config.check import ConfigError
from tests.branch_repos import BUNDLED_RECIPE, bundled_branch_repo

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled engine's base and dev commits (tests/branch_repos.py) and its recipe."""
    root = tmp_path_factory.mktemp("branch")
    bundled_branch_repo(root)
    (root / "engines.toml").write_text(BUNDLED_RECIPE)
    return root


def _test_file(root: Path, name: str, branch: str, extra: str = "") -> Path:
    path = root / f"{name}.toml"
    path.write_text(f"""
name = "{name}"
engines_file = "engines.toml"
rounds = 40
concurrency = 2
{extra}
[branch]
recipe = "bundled"
{branch}

[sprt]
elo0 = 0
elo1 = 150
alpha = 0.05
beta = 0.05
""")
    return path


def _run(root: Path, test: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "runner", "test", "run", str(test), "--db",
         f"sqlite:///{root / 'tests.db'}", "--cache", str(root / "cache"), "-q", *args],
        capture_output=True, text=True, timeout=600, env={**os.environ, "COLUMNS": "200"})


def _bench(root: Path) -> int:
    done = subprocess.run([sys.executable, "-m", "engine", "--level", "2", "bench", "2"],
                          cwd=root / "engine-repo", capture_output=True, text=True, timeout=60)
    found = re.search(r"Nodes searched\s*:\s*(\d+)", done.stdout)
    assert found, done.stdout + done.stderr
    return int(found.group(1))


@pytest.mark.slow  # CI time: tests/test_service_branches.py plays the same chain fast
def test_stc_passes_and_the_ltc_runs_then_the_same_file_continues(workspace: Path) -> None:
    nodes = _bench(workspace)
    test = _test_file(workspace, "chain", f"""base = "main"
dev = "deeper"
base_bench = {nodes}
dev_bench = {nodes}
stages = ["1+0.01", "1.5+0.015"]""")
    done = _run(workspace, test)
    assert done.returncode == 0, done.stderr
    said = done.stderr + done.stdout
    assert f"base: bench {nodes} nodes" in said and f"dev: bench {nodes} nodes" in said
    assert "level 2 searches two plies" in said  # the commits between base and dev
    assert "1+0.01 passed: 1.5+0.015 starts." in said
    assert said.count("SPRT: llr") == 2 and said.count(" - H1") == 2, said
    # The same file again: both stages found finished, nothing played, the chain followed.
    again = _run(workspace, test)
    assert again.returncode == 0, again.stderr
    assert again.stderr.count("already finished") == 2
    assert "from the cache" in again.stderr


@pytest.mark.slow
def test_a_failed_stc_does_not_start_the_ltc(workspace: Path) -> None:
    test = _test_file(workspace, "worse", """base = "deeper"
dev = "main"
stages = ["1+0.01", "2+0.02"]""")
    done = _run(workspace, test)
    assert done.returncode == 0, done.stderr
    assert "1+0.01 failed (H0): 2+0.02 not started." in done.stderr
    assert done.stdout.count("SPRT: llr") == 1


def test_a_wrong_declared_bench_stops_the_test_before_any_game(workspace: Path) -> None:
    nodes = _bench(workspace)
    test = _test_file(workspace, "wrong", f"""base = "main"
dev = "deeper"
dev_bench = {nodes + 7}""")
    done = _run(workspace, test)
    assert done.returncode == 1
    assert "wrong bench: dev (deeper, " in done.stderr
    assert f"declares {nodes + 7} nodes, the build gives {nodes}" in done.stderr
    assert "against" not in done.stderr  # no stage started


def test_a_ref_that_does_not_exist_is_refused(workspace: Path) -> None:
    test = _test_file(workspace, "missing", 'base = "main"\ndev = "no-such-branch"')
    done = _run(workspace, test)
    assert done.returncode == 2
    assert "no commit 'no-such-branch'" in done.stderr


@pytest.mark.parametrize(("text", "key", "words"), [
    ('[[engines]]\nname = "x"\ncommand = ["x"]\n[branch]\nrecipe = "bundled"\nbase = "a"\n'
     'dev = "b"\n', "engines", "sets this itself"),
    ('name = "t"\n', "branch", "missing required table"),
    ('[branch]\nrecipe = "nope"\nbase = "a"\ndev = "b"\n', "branch.recipe",
     "recipes: bundled"),
    ('[branch]\nrecipe = "bundled"\nbase = "a"\ndev = "b"\nstages = ["stc", "ltc"]\n',
     "branch.stages", "needs [sprt]"),
    ('[branch]\nrecipe = "bundled"\nbase = "a"\ndev = "b"\nstages = ["stc", "10+x"]\n',
     "branch.stages[1]", ""),
    ('[branch]\nrecipe = "bundled"\nbase = "a"\ndev = ""\n', "branch.dev", "must name"),
])
def test_test_file_problems_name_the_key(workspace: Path, text: str, key: str,
                                         words: str) -> None:
    path = workspace / "bad.toml"
    path.write_text('name = "t"\nengines_file = "engines.toml"\n' + text
                    if not text.startswith("name") else text + 'engines_file = "engines.toml"\n')
    with pytest.raises(ConfigError) as error:
        load_branch_test(path)
    found = [p for p in error.value.problems if p.key == key]
    assert found and words in found[0].message, error.value
