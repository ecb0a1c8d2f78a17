"""`examples/factnote.toml`, the reference configuration, cannot rot: it names every setting of
`bot.config.Settings` (walked generically, sections and their sections, so a new field fails
here until it is documented), each with a one-line comment, and loading it gives exactly the
defaults. Settings that are unset by default or secret appear as commented-out lines."""

from __future__ import annotations

import os
import re
import tomllib
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from bot import config
from bot.config import Settings, load_settings

REFERENCE = Path(__file__).resolve().parents[1] / "examples" / "factnote.toml"

_HEADER = re.compile(r"^(#\s*)?\[\[?([\w.]+)\]\]?\s*$")
_KEY = re.compile(r'^(#\s*)?("[^"]+"|[A-Za-z_][\w-]*)\s*=')


def _model_of(field: FieldInfo) -> type[BaseModel] | None:
    """The section model a field holds: a model, or a list of models (array of tables)."""
    kind = field.annotation
    for candidate in (kind, *typing.get_args(kind)):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return candidate
    return None


def setting_paths(model: type[BaseModel], prefix: str = "") -> Iterator[str]:
    """Every setting's dotted path; a section (or array of tables) is walked into."""
    for name, field in model.model_fields.items():
        path = f"{prefix}{name}"
        section = _model_of(field)
        if section is not None:
            yield from setting_paths(section, path + ".")
        else:
            yield path


def documented(text: str) -> dict[str, str]:
    """Each key named in the file, set or commented out, by dotted path, with the comment line
    right above it ("" when there is none)."""
    found: dict[str, str] = {}
    section = ""
    previous = ""
    for raw in text.splitlines():
        line = raw.strip()
        header = _HEADER.match(line)
        if header:
            section = header.group(2)
            found.setdefault(section, previous)  # a table (dict or array of tables)
        else:
            key = _KEY.match(line)
            if key and section.count(".") < 2:
                name = key.group(2).strip('"')
                dotted = f"{section}.{name}" if section else name
                # Keys of a free-form table (domain overrides, rating texts) are its examples.
                if not any(dotted.startswith(t + ".") for t in _FREE_FORM):
                    found[dotted] = previous
        is_description = line.startswith("#") and not header and not _KEY.match(line)
        previous = line if is_description else ""
    return found


_FREE_FORM = ("credibility.overrides", "claims.rating_map", "research.tier_weights")


@pytest.fixture
def no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith(("FACTNOTE_", "OPENAI_")):
            monkeypatch.delenv(name)


def test_the_reference_names_every_setting_with_a_comment() -> None:
    named = documented(REFERENCE.read_text(encoding="utf-8"))
    paths = list(setting_paths(Settings))
    assert len(paths) > 100  # the walk found the sections, not only the top level
    missing = [p for p in paths if p not in named]
    assert not missing, f"settings missing from {REFERENCE.name}: {missing}"
    uncommented = [p for p in paths if not named[p]]
    assert not uncommented, f"settings without a comment line above them: {uncommented}"


def test_the_reference_names_nothing_the_settings_do_not_have() -> None:
    named = documented(REFERENCE.read_text(encoding="utf-8"))
    paths = set(setting_paths(Settings))
    sections = {p.rsplit(".", 1)[0] for p in paths if "." in p}
    unknown = [k for k in named if k not in paths and k not in sections]
    assert not unknown, f"{REFERENCE.name} names settings that do not exist: {unknown}"


def test_loading_the_reference_gives_exactly_the_defaults(no_env: None) -> None:
    from_file = load_settings(REFERENCE).model_dump(mode="json")
    defaults = load_settings().model_dump(mode="json")
    assert from_file == defaults


def _set_values(data: dict[str, Any], prefix: str = "") -> Iterator[str]:
    for key, value in data.items():
        if isinstance(value, dict):
            yield from _set_values(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}"


def test_every_value_the_reference_sets_is_its_default_written_out(no_env: None) -> None:
    # A file that set nothing would also load as the defaults: it must write them out.
    data = tomllib.loads(REFERENCE.read_text(encoding="utf-8"))
    written = set(_set_values(data))
    defaults = load_settings().model_dump(mode="json")
    for path in setting_paths(Settings):
        value: Any = defaults
        for part in path.split("."):
            value = value.get(part) if isinstance(value, dict) else None
        if value not in (None, {}, []) and not isinstance(value, dict):
            is_written = path in written or path in _COMMENTED_ON_PURPOSE
            assert is_written, f"{path} = {value!r} is not written out"


# Written commented out although it has a default: X's poll interval follows the plan when
# unset, and a written 60 s would be refused once someone picks the free plan; the images'
# local folder follows [local] inbox when unset, and a written one would stop following it.
_COMMENTED_ON_PURPOSE = {"x.poll_interval_s", "images.local_dir"}


def test_every_flat_environment_name_is_mentioned() -> None:
    text = REFERENCE.read_text(encoding="utf-8")
    flat: dict[tuple[str, str], tuple[str, ...]] = getattr(config, "FLAT_ENV", {})
    missing = [names[0] for names in flat.values() if names[0] not in text]
    assert not missing
