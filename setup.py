"""Build hook: compile the typed hot modules with mypyc where a C compiler is present.

Everything else about the package is in pyproject.toml. The environment variable
``RUNNER_COMPILE`` chooses: ``0`` builds pure Python, ``1`` compiles or fails, unset (or
``auto``) compiles when mypyc and a working C compiler (with Python's headers) are present and
falls back to pure Python otherwise, or when the compilation fails. The modules compiled are
listed in runner/compiled.py, which also lets ``RUNNER_PURE=1`` run the source at run time.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import runpy
import shutil
import sys
import sysconfig
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
COMPILED: tuple[str, ...] = runpy.run_path(str(ROOT / "runner" / "compiled.py"))["COMPILED"]
ENV = "RUNNER_COMPILE"
_PLACEHOLDER = "runner._mypyc_placeholder"
CACHE = ROOT / "build" / "compiled-cache"
"""Extensions built before, by the digest of what they are built from: installing again (an
extra, an editable install after a wheel, or the reverse) copies them instead of compiling
the same C again (246 s on a loaded machine for nothing)."""


def _note(message: str) -> None:
    print(f"cecp-runner build: {message}", file=sys.stderr)


def _mode() -> str:
    """``pure``, ``compiled`` or ``auto``, from RUNNER_COMPILE."""
    value = os.environ.get(ENV, "").strip().lower()
    if value in ("", "auto"):
        return "auto"
    if value in ("0", "no", "false", "off"):
        return "pure"
    if value in ("1", "yes", "true", "on"):
        return "compiled"
    raise SystemExit(f"{ENV}={value!r}: use 0 (pure Python), 1 (compiled, or fail) or leave it unset")


def _remove_built_modules() -> None:
    """Delete extension modules an earlier in-place (editable) build left in the source tree.

    Python imports an extension before the ``.py`` of the same name, so a pure build, or a
    compiled one of a different set of modules, must not find old ones there.
    """
    suffixes = (".so", ".pyd")
    for path in [*(ROOT / "runner").rglob("*"), *ROOT.glob("*__mypyc*")]:
        if path.suffix in suffixes and path.is_file():
            path.unlink()


def _compiler_works() -> bool:
    """True when a C compiler builds a file including Python.h (the headers may be absent)."""
    from setuptools._distutils.ccompiler import new_compiler
    from setuptools._distutils.sysconfig import customize_compiler

    compiler = new_compiler()
    customize_compiler(compiler)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "probe.c"
        source.write_text("#include <Python.h>\nint probe(void) { return 0; }\n")
        try:
            compiler.compile([str(source)], output_dir=tmp,
                             include_dirs=[sysconfig.get_paths()["include"]])
        except Exception:  # any failure means: no usable compiler here
            return False
    return True


def _mypyc_extensions(mode: str) -> list[Extension]:
    """The extensions mypyc builds from the modules of `COMPILED` (runs mypy, writes C)."""
    from mypyc.build import mypycify

    paths = [str(Path(*name.split("."))) + ".py" for name in COMPILED]
    # The build environment holds only the build requirements: modules imported by the
    # compiled ones but absent there (uvloop...) are typed as Any, as for a mypy run without them.
    try:
        return list(mypycify(["--ignore-missing-imports", *paths], opt_level="3", multi_file=True))
    except SystemExit:  # mypy's type errors: printed above, and fatal only when asked for
        if mode == "compiled":
            raise
        _note("mypyc refused the modules: pure Python")
        return []


class OptionalBuildExt(build_ext):
    """build_ext that runs mypyc first and, in automatic mode, falls back to pure Python.

    mypyc runs here rather than when setup.py is read, which pip does three times per
    install (requirements, metadata, build): `ext_modules` holds a placeholder until then.
    """

    def finalize_options(self) -> None:
        """Replace the placeholder by mypyc's extensions before build_ext prepares them."""
        if [ext.name for ext in self.distribution.ext_modules or []] == [_PLACEHOLDER]:
            self.distribution.ext_modules = _mypyc_extensions(_mode())
        super().finalize_options()

    cache_dir: Path = CACHE
    """Where built extensions are kept for the next build (`_digest` names them)."""

    def build_extension(self, ext: Extension) -> None:
        """The extension copied from `cache_dir` when it was built before from the same
        sources, else compiled (its C files in parallel: mypyc writes one per module, and
        distutils would compile them one after the other) and kept there."""
        target = Path(self.get_ext_fullpath(ext.name))
        cached = self.cache_dir / f"{ext.name}-{_digest(ext)}{target.suffix}"
        if cached.is_file():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(cached, target)
            _note(f"{ext.name}: built before from the same sources, reused")
            return
        self._compile(ext)
        if target.is_file():
            self.cache_dir.mkdir(parents=True, exist_ok=True)
            partial = cached.with_name(cached.name + f".{os.getpid()}.part")
            shutil.copyfile(target, partial)
            partial.replace(cached)  # whole or absent, should two builds run at once

    def _compile(self, ext: Extension) -> None:
        """Build `ext`, its C files compiled in parallel."""
        serial = self.compiler.compile

        def compile_each(sources: list[str], *args: object, **kwargs: object) -> list[str]:
            with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
                objects = pool.map(lambda source: serial([source], *args, **kwargs), sources)
                return [name for names in objects for name in names]

        self.compiler.compile = compile_each
        try:
            super().build_extension(ext)
        finally:
            self.compiler.compile = serial

    def run(self) -> None:
        """Build the extensions; on failure in automatic mode remove what was built and go on."""
        if self.inplace:
            _remove_built_modules()
        try:
            super().run()
        except Exception as exc:  # compiler and linker errors come in several classes
            if _mode() == "compiled":
                raise
            _note(f"compiling failed ({exc}); installing the pure-Python modules")
            for output in self.get_outputs():
                Path(output).unlink(missing_ok=True)
            self.extensions = []


def _digest(ext: Extension) -> str:
    """What an extension is built from: its name, its sources and the headers and libraries it
    names, the compiler settings, this Python and the mypy (mypyc) that wrote the C."""
    digest = hashlib.sha256()
    mypy_version = ""
    if importlib.util.find_spec("mypy") is not None:
        from mypy.version import __version__ as mypy_version
    settings = [ext.name, sys.version, sysconfig.get_config_var("EXT_SUFFIX") or "",
                sysconfig.get_config_var("CC") or "", sysconfig.get_config_var("CFLAGS") or "",
                os.environ.get("CC", ""), os.environ.get("CFLAGS", ""), mypy_version,
                repr(sorted(ext.define_macros or [])), repr(ext.extra_compile_args),
                repr(ext.extra_link_args), repr(ext.libraries)]
    digest.update("\0".join(settings).encode())
    for name in [*ext.sources, *ext.depends]:
        digest.update(name.encode() + b"\0" + Path(name).read_bytes() + b"\0")
    for directory in ext.include_dirs or []:
        for header in sorted(Path(directory).glob("*.h")):
            digest.update(header.name.encode() + b"\0" + header.read_bytes() + b"\0")
    return digest.hexdigest()[:32]


def _extensions() -> list[Extension]:
    """A placeholder when the build will compile (see `OptionalBuildExt`), else nothing."""
    mode = _mode()
    if mode == "pure":
        _remove_built_modules()
        _note(f"{ENV}=0: pure Python")
        return []
    if importlib.util.find_spec("mypyc") is None:
        if mode == "compiled":
            raise SystemExit(f"{ENV}=1 but mypyc is not installed (pip install mypy)")
        _note("mypyc is not installed: pure Python")
        return []
    if mode == "auto" and not _compiler_works():
        _note("no working C compiler (or no Python headers): pure Python")
        return []
    # Also makes the wheel platform-specific, as a compiled one is.
    return [Extension(_PLACEHOLDER, sources=[])]


if __name__ == "__main__":  # as setuptools runs it (a test imports the build command alone)
    setup(ext_modules=_extensions(), cmdclass={"build_ext": OptionalBuildExt})
