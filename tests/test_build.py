"""Engines built from git refs (runner.build, `runner build`): real git repositories made here
from Debian's fairymax sources and from the bundled engine's own tree, built with their real
build commands, benched, cached; refs, failures, time limits and the build's environment."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from runner.build import (
    BenchFailed,
    BuildFailed,
    Mirror,
    UnknownRef,
    WrongBench,
    build,
    check_bench,
    load_recipes,
    measure_bench,
)
from runner.config.check import ConfigError
from tests.conftest import REPO, shared_file

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True, env=env).stdout.strip()


def _commit_all(repo: Path, message: str) -> str:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


def _bundled_repo(root: Path) -> tuple[Path, str, str]:
    """A repository of the bundled engine: base as shipped, dev with the weaker evaluation
    as its default (a real change of strength, and of the bench's node count)."""
    repo = root / "bundled"
    shutil.copytree(REPO / "engine", repo / "engine",
                    ignore=shutil.ignore_patterns("__pycache__"))
    _git(repo, "init", "-q")
    base = _commit_all(repo, "base")
    config = repo / "engine" / "config.py"
    text = config.read_text()
    assert 'choices=("v1", "v2"), default="v2"' in text
    config.write_text(text.replace('choices=("v1", "v2"), default="v2"',
                                   'choices=("v1", "v2"), default="v1"'))
    dev = _commit_all(repo, "dev: the v1 evaluation")
    return repo, base, dev


def _engines_file(root: Path, body: str) -> Path:
    path = root / "engines.toml"
    path.write_text(body)
    return path


BUNDLED = """
[[recipes]]
name = "bundled"
repository = "bundled"
command = ["python", "-m", "engine"]
bench = ["bench", "2"]
protocol = "cecp"
"""


def test_bundled_engine_bench_is_the_builds_signature(tmp_path: Path) -> None:
    """Each commit's bench is the same on every run and differs between the two commits; a
    declared count that is not the build's is refused with both figures."""
    repo, base, dev = _bundled_repo(tmp_path)
    recipe = load_recipes(_engines_file(tmp_path, BUNDLED))["bundled"]
    cache = tmp_path / "cache"
    mirror = Mirror(recipe.repository, cache)
    mirror.update()
    assert mirror.resolve("HEAD~1").sha == base
    assert mirror.resolve(dev[:10]).sha == dev
    assert [c.subject for c in mirror.between(base, dev)] == ["dev: the v1 evaluation"]
    old, new = build(recipe, base, cache), build(recipe, dev, cache)
    first, again, other = measure_bench(old), measure_bench(old), measure_bench(new)
    assert first.nodes == again.nodes > 0
    assert other.nodes != first.nodes
    assert first.nps is not None and first.nps > 0
    check_bench(first, first.nodes, "the test")
    with pytest.raises(WrongBench) as wrong:
        check_bench(other, first.nodes, "the test")
    assert str(first.nodes) in str(wrong.value) and str(other.nodes) in str(wrong.value)
    # The built engine is an engine like any other: its command runs the checkout's code.
    engine = new.engine()
    assert engine.dir == new.tree and engine.command[1:] == ("-m", "engine")


def test_refs_that_name_no_commit_are_refused(tmp_path: Path) -> None:
    repo, _, _ = _bundled_repo(tmp_path)
    mirror = Mirror(str(repo), tmp_path / "cache")
    mirror.update()
    for ref in ("no-such-branch", "--upload-pack=touch", "HEAD..HEAD~1", "a b", "0" * 40):
        with pytest.raises(UnknownRef):
            mirror.resolve(ref)


def test_a_cache_hit_does_not_build_again(tmp_path: Path) -> None:
    """The second build of a commit is the first one's tree; a new commit builds anew."""
    repo = tmp_path / "counted"
    repo.mkdir()
    (repo / "make.py").write_text(
        "import pathlib, time\n"
        "pathlib.Path('engine-built').write_text(str(time.time_ns()))\n")
    _git(repo, "init", "-q")
    first = _commit_all(repo, "one")
    engines = _engines_file(tmp_path, f"""
[[recipes]]
name = "counted"
repository = "counted"
build = ["{sys.executable}", "make.py"]
command = ["python", "-m", "engine"]
""")
    recipe = load_recipes(engines)["counted"]
    cache = tmp_path / "cache"
    made = build(recipe, first, cache)
    stamp = (made.tree / "engine-built").read_text()
    hit = build(recipe, first, cache)
    assert (not made.cached, hit.cached) == (True, True)
    assert hit.tree == made.tree and (hit.tree / "engine-built").read_text() == stamp
    (repo / "README").write_text("a change\n")
    second = _commit_all(repo, "two")
    assert not build(recipe, second, cache).cached


def test_a_build_never_sees_the_runners_secrets(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Only PATH, the locale and the recipe's own variables reach the build's code."""
    monkeypatch.setenv("RUNNER_TOKEN", "tok-secret-1")
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:pw-secret-2@h/db")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret-3")
    repo = tmp_path / "nosy"
    repo.mkdir()
    (repo / "make.py").write_text(
        "import json, os\nopen('env.json', 'w').write(json.dumps(dict(os.environ)))\n")
    _git(repo, "init", "-q")
    sha = _commit_all(repo, "nosy")
    engines = _engines_file(tmp_path, f"""
[[recipes]]
name = "nosy"
repository = "nosy"
build = ["{sys.executable}", "make.py"]
command = ["python"]
env = {{ CFLAGS = "-O2" }}
""")
    made = build(load_recipes(engines)["nosy"], sha, tmp_path / "cache")
    seen = (made.tree / "env.json").read_text()
    for secret in ("tok-secret-1", "pw-secret-2", "secret-3", "RUNNER_TOKEN", "DATABASE_URL"):
        assert secret not in seen
    assert '"CFLAGS": "-O2"' in seen


def test_a_failing_build_gives_its_log_and_leaves_no_cache_entry(tmp_path: Path) -> None:
    repo = tmp_path / "broken"
    repo.mkdir()
    (repo / "make.py").write_text("import sys\nprint('compiling...')\n"
                                  "sys.exit('error: expected ; before }')\n")
    _git(repo, "init", "-q")
    sha = _commit_all(repo, "broken")
    engines = _engines_file(tmp_path, f"""
[[recipes]]
name = "broken"
repository = "broken"
build = ["{sys.executable}", "make.py"]
command = ["./engine"]
""")
    recipe = load_recipes(engines)["broken"]
    with pytest.raises(BuildFailed) as failed:
        build(recipe, sha, tmp_path / "cache")
    assert "status 1" in str(failed.value)
    assert "compiling..." in failed.value.log and "expected ; before }" in failed.value.log
    # Not cached as done: the next attempt builds (and fails) again.
    with pytest.raises(BuildFailed):
        build(recipe, sha, tmp_path / "cache")


def test_a_build_over_its_time_limit_is_stopped_with_its_children(tmp_path: Path) -> None:
    repo = tmp_path / "slow"
    repo.mkdir()
    # The build starts a grandchild that would outlive it, and writes its pid first.
    (repo / "make.py").write_text(
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        "open('child.pid', 'w').write(str(child.pid))\n"
        "print('waiting', flush=True)\n"
        "time.sleep(120)\n")
    _git(repo, "init", "-q")
    sha = _commit_all(repo, "slow")
    engines = _engines_file(tmp_path, f"""
[[recipes]]
name = "slow"
repository = "slow"
build = ["{sys.executable}", "make.py"]
build_timeout = 2
command = ["./engine"]
""")
    with pytest.raises(BuildFailed) as failed:
        build(load_recipes(engines)["slow"], sha, tmp_path / "cache")
    assert "longer than 2 s" in str(failed.value) and "waiting" in failed.value.log
    pid = int(next((tmp_path / "cache" / "builds").glob("*.partial/tree/child.pid"))
              .read_text())
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the build's child {pid} outlived the stopped build")


def test_fairymax_from_debian_sources_builds_and_plays(tmp_path: Path) -> None:
    """Debian's fairymax source, committed to a repository here, built by its own makefile
    (told to read its piece file from the checkout); the built binary answers as a CECP
    engine and plays a move."""
    tarball = shared_file("engine-sources", "fairymax_5.0b.orig.tar.gz")
    if shutil.which("make") is None or shutil.which("cc") is None:
        pytest.skip("make or a C compiler is not installed")
    repo = tmp_path / "fairymax"
    repo.mkdir()
    with tarfile.open(tarball) as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    (source,) = (tmp_path / "unpacked").iterdir()
    shutil.copytree(source, repo, dirs_exist_ok=True)
    _git(repo, "init", "-q")
    sha = _commit_all(repo, "fairymax 5.0b")
    engines = _engines_file(tmp_path, """
[[recipes]]
name = "fairymax"
repository = "fairymax"
build = ["make", "fairymax", "fairydir=data"]
command = ["./fairymax"]
protocol = "cecp"
""")
    recipe = load_recipes(engines)["fairymax"]
    made = build(recipe, sha, tmp_path / "cache")
    binary = made.tree / "fairymax"
    assert binary.is_file() and os.access(binary, os.X_OK)
    answer = subprocess.run([str(binary)], input="xboard\nprotover 2\nsd 2\ngo\n", text=True,
                            capture_output=True, timeout=30, cwd=made.tree)
    assert "feature" in answer.stdout and "move " in answer.stdout
    with pytest.raises(BenchFailed):
        measure_bench(made)  # the recipe gives no bench command


@pytest.mark.parametrize(("body", "key", "words"), [
    ('name = "x"\ncommand = ["e"]', "recipes[0].repository", "missing required key"),
    ('name = "x"\nrepository = "-x"\ncommand = ["e"]', "recipes[0].repository",
     "must not start"),
    ('name = "x"\nrepository = "ftp://h/r"\ncommand = ["e"]', "recipes[0].repository",
     "only https://"),
    ('name = "x"\nrepository = "https://h/r"\ncommand = "make && rm"',
     "recipes[0].command", "array of non-empty strings"),
    ('name = "x"\nrepository = "https://h/r"\ncommand = ["e"]\nbuild = ["make\\n"]',
     "recipes[0].build", "control character"),
    ('name = "x"\nrepository = "https://h/r"\ncommand = ["e"]\nbench_nodes = "Nodes"',
     "recipes[0].bench_nodes", "needs a group"),
    ('name = "x"\nrepository = "https://h/r"\ncommand = ["e"]\nbuild_timeout = 0',
     "recipes[0].build_timeout", "positive"),
    ('name = "x"\nrepository = "https://h/r"\ncommand = ["e"]\nenv = { "a-b" = "1" }',
     "recipes[0].env.a-b", "capitals"),
    ('name = "x"\nrepository = "https://h/r"\ncommand = ["e"]\nbild = ["make"]',
     "recipes[0].bild", "did you mean 'build'"),
])
def test_recipe_problems_name_the_file_key_and_value(tmp_path: Path, body: str, key: str,
                                                     words: str) -> None:
    engines = _engines_file(tmp_path, "[[recipes]]\n" + body + "\n")
    with pytest.raises(ConfigError) as error:
        load_recipes(engines)
    (problem,) = error.value.problems
    assert problem.file == str(engines) and problem.key == key and words in problem.message


def test_recipes_share_the_engines_file_with_engines(tmp_path: Path) -> None:
    """An engines file with both [[engines]] and [[recipes]] still serves its engines."""
    from runner.config.engines import load_engines_file

    repo, _, _ = _bundled_repo(tmp_path)
    engines = _engines_file(tmp_path, BUNDLED + """
[[engines]]
name = "bundled-installed"
command = ["python", "-m", "engine"]
""")
    assert [e.name for e in load_engines_file(engines)] == ["bundled-installed"]
    assert load_recipes(engines)["bundled"].repository == str(repo)


def test_runner_build_command(tmp_path: Path) -> None:
    """`runner build` prints the commit, the engine and the bench; a wrong --nodes exits 1
    with both figures; a ref that does not exist exits 2 naming it."""
    _, base, _ = _bundled_repo(tmp_path)
    engines = _engines_file(tmp_path, BUNDLED)
    cache = tmp_path / "cache"

    def runner(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "runner", "build", str(engines), *args,
                               "--cache", str(cache)], capture_output=True, text=True,
                              timeout=120, env={**os.environ, "COLUMNS": "200"})

    # The count measured here (the build then found in the cache by the command): one
    # command fewer to start (CI time).
    nodes = measure_bench(build(load_recipes(engines)["bundled"], base, cache)).nodes
    done = runner("bundled", base[:12], "--nodes", str(nodes))
    assert done.returncode == 0, done.stderr
    assert f"bundled at {base[:12]} (base)" in done.stdout
    assert int(done.stdout.split("bench: ")[1].split(" nodes")[0]) == nodes
    wrong = runner("bundled", base, "--nodes", str(nodes + 1))
    assert wrong.returncode == 1 and f"declares {nodes + 1} nodes" in wrong.stderr
    missing = runner("bundled", "no-such-ref")
    assert missing.returncode == 2 and "no-such-ref" in missing.stderr
    unknown = runner("nothere", base)
    assert unknown.returncode == 2 and "recipes: bundled" in unknown.stderr


def test_benches_compared_between_machines_name_both_figures() -> None:
    from runner.build import BuildOrder, Recipe
    from runner.build.benches import MachineBuild, machines_disagree

    recipe = Recipe(name="r", repository="/r", command=("./e",), bench=("bench",))
    orders = [BuildOrder(recipe, "a" * 40, "base", 1000, "service host (h)"),
              BuildOrder(recipe, "b" * 40, "dev", None, "")]
    same = MachineBuild("base", "a" * 40, "h/0", 1000, None, False, 0.1, "")
    other = MachineBuild("base", "a" * 40, "h/1", 999, None, True, 0.0, "")
    unknown = MachineBuild("dev", "b" * 40, "h/1", 5, None, True, 0.0, "")
    assert machines_disagree(orders, [same, unknown]) is None
    wrong = machines_disagree(orders, [same, other])
    assert wrong is not None and (wrong.expected, wrong.found) == (1000, 999)
    assert str(wrong) == ("wrong bench: base (aaaaaaaaaaaa) gives 1000 nodes on service host (h) "
                          "and 999 on h/1")
