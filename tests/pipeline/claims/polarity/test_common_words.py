"""The list of ordinary words the entity rule reads for shouted words
(`pipeline.claims.polarity.common_words`, made from WordNet by tools/wordnet_common_words.py)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from pipeline.claims.polarity.common_words import ordinary
from tools.wordnet_common_words import common_words


@pytest.mark.parametrize("word", ["course", "update", "views", "shipped", "shares", "prayers"])
def test_ordinary_words_and_their_forms_are_known(word: str) -> None:
    assert ordinary(word)


@pytest.mark.parametrize("word", ["trump", "omar", "nsa", "carter", "green", "obama", "cnn"])
def test_names_and_words_that_also_name_people_or_places_are_not_ordinary(word: str) -> None:
    assert not ordinary(word)


WORDNET = Path("/usr/share/wordnet")


@pytest.mark.skipif(not (WORDNET / "cntlist.rev").exists(), reason="Debian's wordnet-base")
def test_the_bundled_list_is_what_the_tool_makes_from_wordnet() -> None:
    bundled = resources.files("pipeline.data").joinpath("common_words_wordnet.txt")
    lines = bundled.read_text(encoding="utf-8").splitlines()
    assert [line for line in lines if not line.startswith("#")] == common_words(WORDNET)
