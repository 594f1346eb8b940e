"""The one reader of the cutechess vocabulary: a command line cut into options, and the
``key=value`` words of ``-engine``, ``-each``, ``-draw``, ``-openings``... typed and checked.

Two front doors read these words: ``runner match/gauntlet/roundrobin/play/engine check``
(runner.cli.vocabulary) and ``runner-cutechess`` (runner.dropin.cutechess.args). What they do
differently is not coded here but handed in as a `Dialect`: which options and keys there are,
how an option is spelled (``--engine`` or exactly ``-engine``), how a number or a truth is read
(Python's or Qt's), whether a bare word (``ponder``) is a key, what a repeated key does, and
the words of each refusal. What an option then means for a tournament stays with each door.

Pure: nothing is opened or started here, and nothing heavy imported (both doors' ``--help``
load this module).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal

from runner.config.vocabulary import Key, Value

__all__ = [
    "Dialect", "EngineKey", "EngineRead", "Given", "KeyAction", "Numbers", "OptionSpec",
    "Wording", "cut", "python_numbers", "read_engine", "read_keys", "typed",
]


# -- the dialect: what a front door says differently ----------------------------------------


@dataclass(frozen=True)
class Numbers:
    """How a door reads a number or a truth from a word (None: the word is not one)."""

    integer: Callable[[str], int | None]
    unsigned: Callable[[str], int | None]
    real: Callable[[str], float | None]
    truth: Callable[[str], bool | None]
    negative: Callable[[str], bool]
    """Whether a word starting with '-' is a (negative) number, so a value, not an option."""


def _python_int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _python_uint(text: str) -> int | None:
    value = _python_int(text)
    return value if value is not None and value >= 0 else None


def _python_float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _python_truth(text: str) -> bool | None:
    lowered = text.lower()
    if lowered in ("1", "true", "yes", "on"):
        return True
    if lowered in ("0", "false", "no", "off"):
        return False
    return None


def _digit_after_dash(word: str) -> bool:
    return word[1].isdigit()


python_numbers = Numbers(_python_int, _python_uint, _python_float, _python_truth,
                         _digit_after_dash)
"""The runner's own reading: Python's int and float, yes/no/on/off truths, and ``-5`` a value
because a digit follows the dash."""


@dataclass(frozen=True)
class OptionSpec:
    """One option of a door: its name (without dashes), how many words it takes, and what
    the cutting checks of them."""

    name: str
    low: int = 0
    high: int = -1
    """Most words (-1: any number)."""
    repeatable: bool = False
    number: Literal["int", "uint"] | None = None
    """int or uint: the words, joined, must read as one (None: not checked while cutting)."""
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Wording:
    """A door's refusals as format strings. Fields: {word} (as written), {name} (dashes
    stripped), {option} (the option's name with the door's dash), {low}, {at_least},
    {wanted}, {got}, {text}, {token}, {key}, {value}."""

    stray: str
    """A first word that is no option."""
    unknown: str
    twice: str
    too_few: str
    too_many: str
    bad_number: str
    not_a_word: str | None
    """An engine or settings word without '=' (None: a bare word is a key with an empty
    value, and a word without a key is skipped)."""
    no_option_name: str | None
    """``option.=VALUE`` (None: accepted, an option with an empty name)."""
    unknown_engine_key: str
    bad_setting: str
    """A settings word (``-draw`` ...) that is not one of the option's keys."""
    missing_settings: str = ""
    """Required keys not given (`Dialect.defaults`): {option}, {keys}."""


class KeyAction(Enum):
    """What an engine key does to the engine being read."""

    SET = "set"
    """The value replaces any earlier one."""
    APPEND = "append"
    """The value is added to the key's list (``arg``, ``initstr``)."""
    CONF = "conf"
    """The engine is replaced by a configured one (`Dialect.configured`), the keys marked
    `EngineKey.kept` staying."""


@dataclass(frozen=True)
class EngineKey:
    """One key of ``-engine``/``-each`` in a door: what it does, how its value is read."""

    name: str
    action: KeyAction = KeyAction.SET
    read: Callable[[str], object | None] | None = None
    """The typed value of a word's text (None: refused with `invalid`); no reader: the text."""
    invalid: str = ""
    """The refusal of a value `read` does not take ({value})."""
    kept: bool = False
    """Left as it is by a ``conf=`` word (the limits and book, in cutechess-cli)."""


@dataclass(frozen=True)
class Dialect:
    """How one front door reads the vocabulary: its options and keys, its spelling, its
    numbers, its refusals."""

    options: tuple[OptionSpec, ...]
    dash: str
    """How an option is named in refusals ("--" or "-")."""
    any_dashes: bool
    """``--engine``, ``-engine`` (any number of dashes) or only ``-engine`` (exactly one)."""
    equals_is_value: bool
    """Whether a word holding '=' is always a value, never an option."""
    numbers: Numbers
    wording: Wording
    refuse: Callable[[str], Exception]
    """What the door raises, given a refusal's text."""
    engine_keys: tuple[EngineKey, ...]
    settings_column: Literal["runner", "peer"]
    """Which keys of a settings table the door reads: "runner" (`Key.runner`) or "peer"
    (cutechess-cli's, `Key.peer` not None)."""
    defaults: bool = False
    """Settings: required keys must be given, the others get the peer's default, and a
    repeated or empty-valued key is refused (cutechess-cli's toMap); else the last wins."""
    configured: Callable[[str], EngineRead | None] | None = None
    """``conf=NAME``: the engine configured under NAME (None from it: no such engine)."""

    def spec(self, word: str) -> OptionSpec | None:
        """The option a word names, or None."""
        name = word.lstrip("-") if self.any_dashes else word[1:]
        for option in self.options:
            if name == option.name or name in option.aliases:
                return option
        return None

    def is_option_word(self, word: str) -> bool:
        """Whether a word starts an option rather than being the last one's value."""
        if len(word) < 2 or not word.startswith("-"):
            return False
        if self.equals_is_value and "=" in word:
            return False
        return not self.numbers.negative(word)

    def fail(self, template: str, **fields: Any) -> Exception:
        """The door's refusal, its wording filled in."""
        return self.refuse(template.format(**fields))


# -- stage 1: words into options ------------------------------------------------------------


@dataclass(frozen=True)
class Given:
    """One option as given: its spec and its words."""

    option: OptionSpec
    words: tuple[str, ...]

    @property
    def flag(self) -> bool:
        """Given without words."""
        return not self.words

    def joined(self) -> str:
        """The words as one value (joined with spaces, as cutechess-cli does)."""
        return " ".join(self.words)


def _wanted(low: int, high: int) -> str:
    if high == 0:
        return "no value"
    if low == high == 1:
        return "exactly one value"
    if low == 0 and high == 1:
        return "at most one value"
    return f"{low} to {high} values" if high != -1 else f"at least {low} values"


def cut(argv: Sequence[str], dialect: Dialect) -> list[Given]:
    """The words as options in the order given, each checked when it is cut: known, not
    repeated unless repeatable, its number of words, its number's form."""
    given: list[Given] = []
    seen: set[str] = set()
    wording = dialect.wording
    i = 0
    while i < len(argv):
        word = argv[i]
        if not dialect.is_option_word(word):
            raise dialect.fail(wording.stray, word=word)
        i += 1
        words: list[str] = []
        while i < len(argv) and not dialect.is_option_word(argv[i]):
            words.append(argv[i])
            i += 1
        option = dialect.spec(word)
        if option is None:
            raise dialect.fail(wording.unknown, word=word, name=word.lstrip("-"))
        label = f"{dialect.dash}{option.name}"
        if option.name in seen and not option.repeatable:
            raise dialect.fail(wording.twice, option=label)
        seen.add(option.name)
        fields = {"option": label, "low": option.low, "words": words,
                  "at_least": "" if option.high == option.low else "at least ",
                  "wanted": _wanted(option.low, option.high), "got": words or "none"}
        if len(words) < option.low:
            raise dialect.fail(wording.too_few, **fields)
        if option.high != -1 and len(words) > option.high:
            raise dialect.fail(wording.too_many, **fields)
        if words and option.number is not None:
            text = " ".join(words)
            read = (dialect.numbers.integer if option.number == "int"
                    else dialect.numbers.unsigned)
            if read(text) is None:
                raise dialect.fail(wording.bad_number, option=label, text=text)
        given.append(Given(option, tuple(words)))
    return given


# -- stage 2: key=value words ---------------------------------------------------------------


def typed(key: Key, text: str, numbers: Numbers = python_numbers) -> Value:
    """A word's value as its key's type read the door's way; left as text when it does not
    read, so that the configuration check (or the door) reports it with its key."""
    found: Value | None
    if key.kind is bool:
        found = numbers.truth(text)
    elif key.kind is int:
        found = numbers.integer(text)
    elif key.kind is float:
        found = numbers.real(text)
    else:
        return text
    return text if found is None else found


def _split(token: str, dialect: Dialect, what: str) -> tuple[str, str] | None:
    """A ``key=value`` word as (key, value); None: skipped (a bare '=value' in a dialect
    that reads bare words)."""
    key, sep, value = token.partition("=")
    if dialect.wording.not_a_word is None:
        return (key, value) if key else None
    if not sep or not key:
        raise dialect.fail(dialect.wording.not_a_word, token=token, option=what)
    return key, value


def read_keys(option: str, words: Sequence[str], keys: Sequence[Key],
              dialect: Dialect) -> dict[str, Value]:
    """A settings option's words (``-draw``, ``-resign``, ``-openings``, ``-sprt``: `option`,
    without dashes) as its keys' typed values, checked as the dialect says."""
    column = [k for k in keys if (k.runner if dialect.settings_column == "runner"
                                  else k.peer is not None)]
    known = {key.name: key for key in column}
    label = f"{dialect.dash}{option}"
    found: dict[str, Value] = {}
    for token in words:
        name, sep, value = token.partition("=")
        refused = (not sep or name not in known
                   or (dialect.defaults and (not name or not value or name in found)))
        if refused:
            raise dialect.fail(dialect.wording.bad_setting, option=label, token=token,
                               keys=", ".join(k.name + "=..." for k in column))
        found[name] = typed(known[name], value, dialect.numbers)
    if dialect.defaults:
        missing = sorted(k.name for k in column if k.name not in found and k.peer == "")
        if missing:
            raise dialect.fail(dialect.wording.missing_settings, option=label,
                               keys=", ".join(f'"{name}"' for name in missing))
        for key in column:
            if key.name not in found and key.peer:
                found[key.name] = typed(key, key.peer, dialect.numbers)
    return found


@dataclass(frozen=True)
class EngineRead:
    """An engine as its ``key=value`` words left it, in a door's terms: the typed value of
    each key given (in the order first given), the lists of repeatable keys, the options."""

    values: Mapping[str, object] = field(default_factory=dict)
    lists: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    options: Mapping[str, str] = field(default_factory=dict)

    def text(self, key: str, default: str = "") -> str:
        """A key's value as text (`default` when not given)."""
        value = self.values.get(key)
        return default if value is None else str(value)


_OPTION = "option."


def read_engine(words: Sequence[str], dialect: Dialect, start: EngineRead | None = None,
                what: str = "engine") -> EngineRead:
    """An engine's words applied in order onto `start` (default: nothing given); raises the
    dialect's refusal of the first word it does not take."""
    keys = {key.name: key for key in dialect.engine_keys}
    engine = start or EngineRead()
    values, options = dict(engine.values), dict(engine.options)
    lists = {name: list(items) for name, items in engine.lists.items()}
    wording = dialect.wording
    for token in words:
        split = _split(token, dialect, what)
        if split is None:
            continue
        key, value = split
        if key.startswith(_OPTION):
            if not key[len(_OPTION):] and wording.no_option_name is not None:
                raise dialect.fail(wording.no_option_name, token=token, option=what)
            options[key[len(_OPTION):]] = value
            continue
        spec = keys.get(key)
        if spec is None:
            raise dialect.fail(wording.unknown_engine_key, key=key, token=token)
        typed_value: object = value
        if spec.read is not None:
            typed_value = spec.read(value)
            if typed_value is None:
                raise dialect.fail(spec.invalid, value=value)
        if spec.action is KeyAction.APPEND:
            lists.setdefault(key, []).append(str(typed_value))
        elif spec.action is KeyAction.CONF:
            configured = dialect.configured(value) if dialect.configured else None
            if configured is None:
                raise dialect.fail(spec.invalid, value=value)
            kept = {k: v for k, v in values.items() if k in keys and keys[k].kept}
            values = {**configured.values, **kept}
            options = dict(configured.options)
            lists = {name: list(items) for name, items in configured.lists.items()}
        else:
            values[key] = typed_value
    return EngineRead(values, {name: tuple(items) for name, items in lists.items()}, options)
