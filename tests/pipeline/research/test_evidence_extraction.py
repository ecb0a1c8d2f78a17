import dataclasses
from typing import Literal

from pipeline.llm.client import CallLedger, LLMClient
from pipeline.records import Document, Passage, Stance, Tier
from pipeline.research.evidence_extraction import (
    PageInput,
    QuoteAnswer,
    extract_evidence,
    locate_quote,
    verify_batch,
)
from pipeline.research.passage_focus import Focus
from testing.fakes.openai_server import FakeLLM, Reply

PAGE = (
    "The agency reviewed 42 studies published between 2010 and 2024.\n\n"
    "None of them found that the vaccine alters human DNA; mRNA never enters the cell nucleus.\n\n"
    "Mild side effects such as a sore arm were reported by about one in three people.\n\n"
    "The review was updated in March 2025 after two further trials."
)


def page(text: str = PAGE, url: str = "https://health.example/review") -> PageInput:
    doc = Document(
        url=url,
        canonical_url=url,
        ok=True,
        text=text,
        content_hash="abc",
    )
    return PageInput(
        doc=doc, tier=Tier.HIGH, domain="health.example", relevance=0.7, passages=[], round=1
    )


def test_exact_quote_is_found():
    q = "None of them found that the vaccine alters human DNA"
    assert locate_quote(q, PAGE) == q


def test_quote_with_typography_and_whitespace_differences_is_found_in_page_wording():
    q = "none of them  found that the vaccine alters human DNA; mRNA never enters the cell nucleus"
    assert locate_quote(q, PAGE) == (
        "None of them found that the vaccine alters human DNA; mRNA never enters the cell nucleus"
    )


def test_quote_with_a_small_typo_is_accepted_as_the_pages_text():
    q = "Mild side efects such as a sore arm were reported by about one in three people."
    found = locate_quote(q, PAGE)
    assert found is not None
    assert "side effects" in found


def test_invented_quote_is_dropped():
    assert locate_quote("The vaccine was found to alter human DNA in 42 studies.", PAGE) is None


def test_quote_that_only_partly_matches_is_dropped():
    q = "None of them found that the vaccine alters human DNA, and it cures cancer in all patients"
    assert locate_quote(q, PAGE) is None


def test_too_short_quote_is_dropped():
    assert locate_quote("the vaccine", PAGE) is None


def test_at_most_two_quotes_per_stance_keeping_the_most_confident():
    items = [
        QuoteAnswer(
            quote="The agency reviewed 42 studies published between 2010 and 2024.",
            stance="context",
            confidence=0.5,
        ),
        QuoteAnswer(
            quote="None of them found that the vaccine alters human DNA",
            stance="refutes",
            confidence=0.9,
        ),
        QuoteAnswer(quote="mRNA never enters the cell nucleus", stance="refutes", confidence=0.8),
        QuoteAnswer(
            quote="The review was updated in March 2025 after two further trials.",
            stance="context",
            confidence=0.7,
        ),
        QuoteAnswer(
            quote="Mild side effects such as a sore arm were reported",
            stance="context",
            confidence=0.9,
        ),
        QuoteAnswer(
            quote="The vaccine is made of invented words that are not here at all.",
            stance="refutes",
            confidence=1.0,
        ),
    ]
    result = verify_batch(items, [page()])[0]
    stances = [e.stance for e in result.evidence]
    assert stances.count(Stance.REFUTES) == 2
    assert stances.count(Stance.CONTEXT) == 2
    kept_context = {e.quote for e in result.evidence if e.stance is Stance.CONTEXT}
    assert "The agency reviewed 42 studies published between 2010 and 2024." not in kept_context
    assert any("not on page" in r for r in result.rejected)
    assert any("cap" in r for r in result.rejected)
    first = result.evidence[0]
    assert first.url == "https://health.example/review"
    assert first.tier is Tier.HIGH and first.content_hash == "abc"


def test_duplicate_quotes_are_kept_once():
    q = "None of them found that the vaccine alters human DNA"
    items = [
        QuoteAnswer(quote=q, stance="refutes", confidence=0.9),
        QuoteAnswer(quote=q + ".", stance="refutes", confidence=0.8),
    ]
    assert len(verify_batch(items, [page()])[0].evidence) == 1


OTHER = (
    "Officials said the campaign will continue through the winter months.\n\n"
    "Claims that the vaccine contains tracking chips are false, the regulator said."
)


def on_page(
    page: int, quote: str, stance: Literal["refutes", "context"], confidence: float
) -> QuoteAnswer:
    """One item of a batch answer: a quote the model says is on page number `page`."""
    return QuoteAnswer(page=page, quote=quote, stance=stance, confidence=confidence)


def test_batch_quote_is_credited_to_the_page_that_holds_it_whatever_number_the_model_gave():
    pages = [page(), page(OTHER, "https://regulator.example/chips")]
    items = [
        # Both numbered wrong by the model: each is found on the other page.
        on_page(1, "Claims that the vaccine contains tracking chips are false", "refutes", 0.9),
        on_page(2, "mRNA never enters the cell nucleus", "refutes", 0.8),
    ]
    first, second = verify_batch(items, pages)
    assert [e.quote for e in first.evidence] == ["mRNA never enters the cell nucleus"]
    assert [e.url for e in second.evidence] == ["https://regulator.example/chips"]
    assert second.evidence[0].quote.startswith("Claims that the vaccine contains tracking chips")


def test_batch_quote_on_no_page_is_dropped_and_the_per_stance_cap_is_per_page():
    pages = [page(), page(OTHER, "https://regulator.example/chips")]
    on_first = [
        "The agency reviewed 42 studies published between 2010 and 2024",
        "None of them found that the vaccine alters human DNA",
        "Mild side effects such as a sore arm were reported",
    ]
    items = [on_page(1, q, "context", 0.9 - i / 10) for i, q in enumerate(on_first)]
    items += [
        on_page(2, "Officials said the campaign will continue", "context", 0.5),
        on_page(9, "The moon is made of cheese, the regulator said", "refutes", 0.9),
    ]
    first, second = verify_batch(items, pages)
    assert len(first.evidence) == 2  # the third context quote of page 1 is over the cap
    assert any("cap" in r for r in first.rejected)
    assert len(second.evidence) == 1  # page 2 has its own cap
    # An out-of-range page number is read as page 1; the invented quote is on no page.
    assert any("moon" in r for r in first.rejected)


def test_a_passage_of_one_endless_word_is_cut_in_the_extraction_prompt(fake_llm: FakeLLM):
    blob = "x" * 100_000  # a page's "word" can be of any length; a passage is 120 of them
    url = "https://health.example/review"
    passages = [
        Passage(url=url, index=0, text=PAGE, score=0.9),
        Passage(url=url, index=1, text=blob, score=0.8),
    ]
    long_page = dataclasses.replace(page(PAGE + "\n\n" + blob, url), passages=passages)
    fake_llm.script("evidence", Reply.json({"items": []}))
    extract_evidence(
        [long_page],
        "<post>\nclaim\n</post>",
        ["claim"],
        LLMClient(fake_llm.config()),
        CallLedger(),
        max_passage_chars=500,
    )
    [asked] = fake_llm.requests_for("evidence")
    prompt = asked.messages[-1]["content"]
    assert len(prompt) < 2000
    assert PAGE in prompt and "x" * 500 + " […]" in prompt


def test_the_extractor_reads_only_focused_sentences_but_quotes_are_checked_on_the_whole_page(
    fake_llm: FakeLLM,
):
    url = "https://health.example/review"
    passages = [Passage(url=url, index=0, text=PAGE.replace("\n\n", " "), score=0.9)]
    focused_page = dataclasses.replace(page(PAGE, url), passages=passages)
    # The review's update date shares no word with the claim and follows none that does.
    dropped = "The review was updated in March 2025 after two further trials"
    fake_llm.script(
        "evidence",
        Reply.json(
            {"items": [{"page": 1, "quote": dropped, "stance": "context", "confidence": 0.6}]}
        ),
    )
    result = extract_evidence(
        [focused_page],
        "<post>\nThe vaccine alters your DNA.\n</post>",
        ["The vaccine alters human DNA."],
        LLMClient(fake_llm.config()),
        CallLedger(),
        focus=Focus.of(["The vaccine alters human DNA."]),
    )
    [asked] = fake_llm.requests_for("evidence")
    prompt = asked.messages[-1]["content"]
    assert "mRNA never enters the cell nucleus" in prompt
    assert "42 studies" not in prompt and dropped not in prompt and "[…]" in prompt
    [extraction] = result.pages
    assert [e.quote for e in extraction.evidence] == [dropped]
