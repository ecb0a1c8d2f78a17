"""Settings that cannot be misread: unknown names in a config file or the environment.

pydantic ignores keys its models do not declare, so `mdoe = "review"` would run the bot in its
default mode with exit status 0. A config file's unknown key or section is refused instead, one
line each, naming the file and line and the closest known name; an unknown `FACTNOTE_*`
environment variable is a warning (the environment holds variables for other readers too, and a
shell's stale export should not stop the bot). Works on the models generically, so a new
setting is known here as soon as it is declared.
"""

from __future__ import annotations

import difflib
import json
import re
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from pydantic import BaseModel
from pydantic.fields import FieldInfo

ENV_PREFIX = "FACTNOTE_"
NESTED = "__"

# FACTNOTE_* variables read by something other than the settings: the CLI's global options,
# the demo's folder, and the test and benchmark harnesses.
OTHER_READERS = frozenset(
    {
        "FACTNOTE_CONFIG",
        "FACTNOTE_LOG_LEVEL",
        "FACTNOTE_LOG_FORMAT",
        "FACTNOTE_EXAMPLES",
        "FACTNOTE_TEST_PG_BIN",
        "FACTNOTE_CRASH_SUMMONS",
        "FACTNOTE_MUSE_DIR",
        # The benchmarks', evaluation's and tests' data folders and outputs, read beside the bot.
        "FACTNOTE_CHECKTHAT_DIR",
        "FACTNOTE_NOTES_TSV",
        "FACTNOTE_SCREENSHOTS",
        "FACTNOTE_BLUESKY_NET_CACHE",
    }
)


def section_model(field: FieldInfo) -> type[BaseModel] | None:
    """The model a field holds: a section, or the items of an array of tables."""
    kind = field.annotation
    for candidate in (kind, *typing.get_args(kind)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def _is_table_array(field: FieldInfo) -> bool:
    return typing.get_origin(field.annotation) is list


def closest(name: str, known: typing.Iterable[str]) -> str | None:
    found = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return found[0] if found else None


@dataclass(frozen=True)
class Unknown:
    path: tuple[str, ...]  # the dotted key as written, the unknown part last
    is_section: bool
    suggestion: str | None


def unknown_keys(
    data: Mapping[str, Any], model: type[BaseModel], prefix: tuple[str, ...] = ()
) -> Iterator[Unknown]:
    """Every key of `data` (a parsed TOML document, or part of one) that `model` does not
    declare; sections are walked into, free-form tables (domain overrides) are not."""
    fields = model.model_fields
    for key, value in data.items():
        path = (*prefix, key)
        field = fields.get(key)
        if field is None:
            sections = [n for n, f in fields.items() if section_model(f) is not None]
            is_section = isinstance(value, dict)
            pool = sections if is_section and sections else list(fields)
            yield Unknown(path, is_section, closest(key, pool) or closest(key, fields))
            continue
        inner = section_model(field)
        if inner is None:
            continue
        if isinstance(value, dict):
            yield from unknown_keys(value, inner, path)
        elif isinstance(value, list) and _is_table_array(field):
            for item in value:
                if isinstance(item, dict):
                    yield from unknown_keys(item, inner, path)


_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_PART = r"(?:\"[^\"]*\"|'[^']*'|[A-Za-z0-9_-]+)"  # a bare or quoted key
_ASSIGN = re.compile(rf"^\s*({_PART}(?:\s*\.\s*{_PART})*)\s*=")


def _dotted(text: str) -> tuple[str, ...]:
    parts = re.findall(r"\"([^\"]*)\"|'([^']*)'|([A-Za-z0-9_-]+)", text)
    return tuple(next(p for p in groups if p) if any(groups) else "" for groups in parts)


def key_line(text: str, path: tuple[str, ...]) -> int | None:
    """The first line (1-based) of a TOML document that sets `path` or opens it as a table; a
    plain scan, enough to point at a key (tomllib keeps no positions)."""
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            table = _dotted(header.group(1))
            if table[: len(path)] == path:
                return number
            continue
        assign = _ASSIGN.match(line)
        if assign and (*table, *_dotted(assign.group(1)))[: len(path)] == path:
            return number
    return None


def unknown_key_lines(
    path: Path, text: str, data: Mapping[str, Any], model: type[BaseModel]
) -> list[str]:
    """One line per unknown key or section of the config file at `path`."""
    lines = []
    for unknown in unknown_keys(data, model):
        line = key_line(text, unknown.path)
        where = f"{path}:{line}" if line else str(path)
        dotted = ".".join(unknown.path)
        if unknown.is_section:
            what, hint = (
                f"section [{dotted}]",
                unknown.suggestion and f"[{'.'.join((*unknown.path[:-1], unknown.suggestion))}]",
            )
        else:
            what, hint = f"setting `{dotted}`", unknown.suggestion and f"`{unknown.suggestion}`"
        advice = f"did you mean {hint}?" if hint else "see examples/factnote.toml for every setting"
        lines.append(f"{where}: unknown {what}; {advice}")
    return lines


def env_names(model: type[BaseModel], prefix: str = ENV_PREFIX) -> Iterator[str]:
    """Every nested environment name of `model`'s settings, sections included (a section can
    be set whole, as JSON)."""
    for name, field in model.model_fields.items():
        full = f"{prefix}{name.upper()}"
        yield full
        inner = section_model(field)
        if inner is not None and not _is_table_array(field):
            yield from env_names(inner, full + NESTED)


def _is_setting(model: type[BaseModel], parts: list[str]) -> bool:
    """Whether the nested name `parts` is a setting of `model`, or a key of one of its
    free-form tables (any key below those is data)."""
    fields = {n.lower(): f for n, f in model.model_fields.items()}
    field = fields.get(parts[0])
    if field is None:
        return False
    if len(parts) == 1:
        return True
    inner = section_model(field)
    if inner is None:
        return typing.get_origin(field.annotation) is dict
    return _is_setting(inner, parts[1:])


def environment_warnings(
    environ: Mapping[str, str], model: type[BaseModel], flat_names: typing.Iterable[str]
) -> list[str]:
    """One line per `FACTNOTE_*` variable that neither the settings nor another reader knows."""
    flat = {n.upper() for n in flat_names if n.upper().startswith(ENV_PREFIX)}
    known = sorted({*env_names(model), *flat, *OTHER_READERS})
    lines = []
    for name in sorted(environ):
        upper = name.upper()
        if not upper.startswith(ENV_PREFIX) or upper in flat or upper in OTHER_READERS:
            continue
        parts = upper[len(ENV_PREFIX) :].lower().split(NESTED)
        if all(parts) and _is_setting(model, parts):
            continue
        hint = closest(upper, known)
        advice = f"did you mean {hint}?" if hint else "no setting has this name"
        lines.append(f"unknown environment variable {name} is ignored; {advice}")
    return lines


@dataclass(frozen=True)
class Effective:
    setting: str  # dotted
    value: str  # as TOML would spell it; secrets masked
    source: str  # "default", "file PATH:LINE" or "environment NAME"


def _shown(value: Any) -> str:
    from pydantic import SecretStr

    if isinstance(value, SecretStr):
        return "(secret, set)" if value.get_secret_value() else "(secret, empty)"
    if value is None:
        return "(unset)"
    if isinstance(value, str) and "://" in value:
        value = _without_password(value)
    if isinstance(value, list) and value and isinstance(value[0], BaseModel):
        value = [item.model_dump(mode="json") for item in value]
    return json.dumps(value, ensure_ascii=False, default=str)


def _without_password(url: str) -> str:
    parts = urlsplit(url)
    if not parts.password:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username or ''}:***@{host}"))


def _leaves(
    model: BaseModel, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], Any]]:
    for name, field in type(model).model_fields.items():
        value = getattr(model, name)
        if isinstance(value, BaseModel) and section_model(field) is not None:
            yield from _leaves(value, (*prefix, name))
        else:
            yield (*prefix, name), value


def _in(data: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    here: Any = data
    for part in path:
        if not isinstance(here, Mapping) or part not in here:
            return False
        here = here[part]
    return True


def effective_settings(
    settings: BaseModel,
    environ: Mapping[str, str],
    flat: Mapping[Any, tuple[str, ...]],
    config: tuple[Path, str, Mapping[str, Any]] | None,
) -> list[Effective]:
    """Every setting's value and where it came from, by the settings' own precedence: a flat
    environment name, then the nested one (or its section's, as JSON), then the file."""
    env = {name.upper(): value for name, value in environ.items()}
    rows = []
    for path, value in _leaves(settings):
        source = "default"
        flat_names = flat.get(path, ())
        nested = [ENV_PREFIX + NESTED.join(path[:i]).upper() for i in range(len(path), 0, -1)]
        named = [n for n in flat_names if env.get(n.upper(), "").strip()]
        named += [n for n in nested if n in env]
        if named:
            source = f"environment {named[0]}"
        elif config is not None and _in(config[2], path):
            line = key_line(config[1], path)
            source = f"file {config[0]}:{line}" if line else f"file {config[0]}"
        rows.append(Effective(".".join(path), _shown(value), source))
    return rows
