"""Rating normalisation: every publisher scale of `pipeline/data/ratings.toml`, as the
publishers print their labels (case, accents, punctuation), the dataset labels, the free-text
patterns, and the listing of texts nobody mapped.

Labels are as the publishers' own methodology pages name them: PolitiFact's Truth-O-Meter
(True ... Pants on Fire, "Barely True" being the pre-2011 name of Mostly False), the Washington
Post's Pinocchios, Snopes' ratings page, AFP's and Reuters' verdict words in each language,
Correctiv's and dpa's German scale, Les Décodeurs', Maldita's, Newtral's, Chequeado's,
Lupa's/Aos Fatos', Pagella Politica's, and the labels of FEVER/CheckThat!, AVeriTeC, HealthVer
and LIAR.
"""

from __future__ import annotations

import tomllib
from collections import defaultdict
from importlib import resources

import pytest

from pipeline.claims.ratings import (
    Rating,
    default_table,
    known_rating_text,
    normalise_rating,
    rating_from_text,
    table_key,
)

F, M, T, X, U = Rating.FALSE, Rating.MISLEADING, Rating.TRUE, Rating.MIXED, Rating.UNRATED

SCALES: dict[str, list[tuple[str, Rating]]] = {
    "politifact": [
        ("True", T),
        ("Mostly True", T),
        ("Half True", M),
        ("Mostly False", M),
        ("Barely True", M),
        ("False", F),
        ("Pants on Fire!", F),
        ("Full Flop", U),
    ],
    "washington_post": [
        ("One Pinocchio", M),
        ("Three Pinocchios", M),
        ("Four Pinocchios", F),
        ("Bottomless Pinocchio", F),
        ("Geppetto Checkmark", T),
    ],
    "snopes": [
        ("Mixture", X),
        ("Unproven", U),
        ("Miscaptioned", M),
        ("Correct Attribution", T),
        ("Labeled Satire", U),
        ("Scam", F),
        ("Legend", U),
    ],
    "afp_en": [("Missing context", M), ("Partly false", M), ("Altered photo", F), ("Satire", U)],
    "afp_fr": [("Faux", F), ("Trompeur", M), ("Manque de contexte", M), ("Retouché", F)],
    "afp_es": [("Falso", F), ("Engañoso", M), ("Falta contexto", M), ("Sátira", U)],
    "afp_de": [("Falsch", F), ("Irreführend", M), ("Fehlender Kontext", M), ("Manipuliert", F)],
    "reuters": [("Misleading", M), ("Unsubstantiated", U), ("Altered", F), ("True", T)],
    "ap": [("Partly false", M), ("Missing context", M), ("False", F)],
    "full_fact": [
        ("Incorrect", F),
        ("This is incorrect", F),
        ("Needs context", M),
        ("Not quite", M),
        ("Correct", T),
        ("We don't know", U),
    ],
    "correctiv": [
        ("Falsch", F),
        ("Größtenteils falsch", M),
        ("Teilweise falsch", M),
        ("Fehlender Kontext", M),
        ("Falscher Kontext", M),
        ("Frei erfunden", F),
        ("Unbelegt", U),
        ("Größtenteils richtig", T),
        ("Wahrscheinlich", X),
        ("Unwahrscheinlich", X),
    ],
    "dpa": [("Zu früh für ein Urteil", U), ("Teilweise falsch", M)],
    "les_decodeurs": [
        ("Faux", F),
        ("Plutôt faux", M),
        ("Trompeur", M),
        ("Exagéré", M),
        ("Imprécis", M),
        ("C'est plus compliqué", X),
        ("Plutôt vrai", T),
        ("Infondé", U),
    ],
    "maldita": [
        ("Bulo", F),
        ("Es falso", F),
        ("Timo", F),
        ("Engañoso", M),
        ("Sin contexto", M),
        ("No hay pruebas", U),
    ],
    "newtral": [("Verdad a medias", M), ("Fake", F), ("Verdadero", T)],
    "chequeado": [("Insostenible", F), ("Discutible", X), ("Verdadero, pero", M)],
    "lupa_aos_fatos": [
        ("Distorcido", M),
        ("Insustentável", F),
        ("Contraditório", X),
        ("Verdadeiro, mas", M),
        ("Ainda é cedo para dizer", U),
    ],
    "pagella_politica": [("Panzana pazzesca", F), ("Nì", X), ("C'eri quasi", M)],
    "datasets": [
        ("REFUTES", F),
        ("SUPPORTS", T),
        ("NOT ENOUGH INFO", U),
        ("Refuted", F),
        ("Supported", T),
        ("Not Enough Evidence", U),
        ("Conflicting Evidence/Cherrypicking", M),
        ("Neutral", U),
        ("pants-fire", F),
        ("barely-true", M),
    ],
}


@pytest.mark.parametrize(
    ("scale", "text", "expected"),
    [(scale, text, rating) for scale, rows in SCALES.items() for text, rating in rows],
)
def test_each_publisher_scale_reads_its_labels_as_printed(
    scale: str, text: str, expected: Rating
) -> None:
    assert rating_from_text(text) is expected
    assert table_key(text) in default_table().scales[scale]


def test_every_scale_in_the_table_is_pinned_by_a_test() -> None:
    assert set(default_table().scales) == set(SCALES)


def test_a_text_in_several_scales_means_the_same_in_each() -> None:
    meanings: dict[str, set[Rating]] = defaultdict(set)
    for scale in default_table().scales.values():
        for text, rating in scale.items():
            meanings[text].add(rating)
    assert {t: r for t, r in meanings.items() if len(r) > 1} == {}


def test_the_table_file_keys_are_already_folded_so_none_is_shadowed() -> None:
    raw = tomllib.loads(resources.files("pipeline.data").joinpath("ratings.toml").read_text())
    keys = [k for scale in raw.values() for k in scale["ratings"]]
    assert [k for k in keys if table_key(k) != k] == []


def test_barely_true_is_mostly_false_not_true() -> None:
    # Issue 14: "Barely True" was read as true through the bare word "true".
    assert rating_from_text("Barely True") is Rating.MISLEADING
    assert rating_from_text("Barely true: the figure is real but old") is Rating.MISLEADING


def test_a_label_followed_by_an_explanation_is_read_by_its_first_clause() -> None:
    assert rating_from_text("False. The video was filmed in 2019 in Chile.") is Rating.FALSE
    assert rating_from_text("Faux : la photo date de 2015") is Rating.FALSE
    assert rating_from_text("Unproven - no record of the event exists") is Rating.UNRATED


def test_free_wording_falls_back_to_the_patterns() -> None:
    assert rating_from_text("True, but misleading") is Rating.MISLEADING
    assert rating_from_text("The claim is not true") is Rating.FALSE
    assert rating_from_text("This claim was refuted by the ministry") is Rating.FALSE


def test_an_unknown_text_stays_unrated_and_is_not_known() -> None:
    assert rating_from_text("Spicy take") is Rating.UNRATED
    assert not known_rating_text("Spicy take")
    assert known_rating_text("Satire")  # known, and deliberately no verdict
    assert known_rating_text("")


def test_a_deployers_map_names_unknown_texts_and_wins_over_the_table() -> None:
    extra = {"Spicy take": Rating.FALSE, "Satire": Rating.FALSE}
    assert rating_from_text("Spicy take!", extra) is Rating.FALSE
    assert rating_from_text("Satire", extra) is Rating.FALSE
    assert known_rating_text("spicy take", extra)


def test_the_text_decides_over_the_number_and_the_number_when_the_text_is_unknown() -> None:
    assert normalise_rating("Barely True", 5, 5, 1) is Rating.MISLEADING
    assert normalise_rating("Spicy take", 1, 5, 1) is Rating.FALSE
