"""Engines built from git refs of allow-listed repositories: recipes, builds, benches.

A build runs the repository's own code on this machine, so only repositories an engines file
lists as recipes are ever built, with a clean environment (no token, no database URL).
"""

from runner.build.bench import Bench, BenchFailed, WrongBench, check_bench, measure_bench
from runner.build.builder import Build, BuildFailed, build, default_cache
from runner.build.git import Commit, GitError, Mirror, UnknownRef
from runner.build.recipe import load_recipes
from runner.config.recipes import BuildOrder, Recipe

__all__ = ["Bench", "BenchFailed", "Build", "BuildFailed", "BuildOrder", "Commit", "GitError",
           "Mirror", "Recipe", "UnknownRef", "WrongBench", "build", "check_bench",
           "default_cache", "load_recipes", "measure_bench"]
