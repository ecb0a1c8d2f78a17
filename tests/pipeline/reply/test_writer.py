"""When the extractor's draft may stand in for the writer's (`write.early_draft`)."""

from __future__ import annotations

from pipeline.context import CheckContext
from pipeline.llm.client import LLMClient
from pipeline.records import EarlyDraft, Evidence, Platform, Tier, Verdict
from pipeline.reply.writer import MAX_EVIDENCE_IN_PROMPT, draft_reply, early_draft, writer_order
from pipeline.research.evidence_extraction import evidence_key
from testing import builders
from testing.fakes.openai_server import FakeLLM, Reply
from testing.scenarios import POST


def item(url: str, quote: str = "The claim is false.", *, tier: Tier = Tier.HIGH) -> Evidence:
    return builders.evidence(url, tier=tier, quote=quote)


def draft(
    pages: list[str],
    *,
    verdict: Verdict = Verdict.REFUTED,
    complete: bool = True,
    known: tuple[Evidence, ...] = (),
) -> EarlyDraft:
    return EarlyDraft(
        verdict=verdict,
        text="The claim is false. https://a.example/1",
        page_urls=pages,
        complete=complete,
        known=[evidence_key(e) for e in known],
    )


A, B, C = "https://a.example/1", "https://b.example/2", "https://c.example/3"


def test_a_draft_from_the_pages_holding_all_shown_evidence_is_taken() -> None:
    evidence = [item(A), item(B)]
    chosen = draft([A, B, C])
    assert early_draft([chosen], Verdict.REFUTED, evidence) is chosen


def test_a_draft_for_another_verdict_is_not_taken() -> None:
    evidence = [item(A), item(B)]
    assert (
        early_draft([draft([A, B], verdict=Verdict.MISLEADING)], Verdict.REFUTED, evidence) is None
    )


def test_a_draft_that_never_saw_one_of_the_shown_items_is_not_taken() -> None:
    evidence = [item(A), item(B)]
    assert early_draft([draft([A])], Verdict.REFUTED, evidence) is None


def test_evidence_shown_to_the_extractor_as_found_earlier_counts_as_seen() -> None:
    earlier = item(A, "An earlier page says the claim is false.")
    evidence = [earlier, item(B)]
    assert early_draft([draft([B], known=(earlier,))], Verdict.REFUTED, evidence) is not None
    # Another quote of that page was never shown to it: the writer would have used it.
    other = item(A, "A different sentence of the earlier page.")
    assert early_draft([draft([B], known=(earlier,))], Verdict.REFUTED, [other, item(B)]) is None


def test_a_draft_from_a_call_whose_quote_was_on_no_page_is_not_taken() -> None:
    evidence = [item(A), item(B)]
    assert early_draft([draft([A, B], complete=False)], Verdict.REFUTED, evidence) is None


def test_only_the_items_the_writer_would_see_must_have_been_seen() -> None:
    shown = [item(f"https://a.example/{i}") for i in range(MAX_EVIDENCE_IN_PROMPT)]
    beyond = item("https://z.example/9", tier=Tier.LOW)
    pages = [e.url for e in shown]
    assert early_draft([draft(pages)], Verdict.REFUTED, [*shown, beyond]) is not None


def test_no_evidence_means_no_early_draft() -> None:
    assert early_draft([draft([A])], Verdict.REFUTED, []) is None


def test_the_first_acceptable_draft_wins() -> None:
    evidence = [item(A)]
    first, second = draft([B]), draft([A])
    assert early_draft([first, second], Verdict.REFUTED, evidence) is second


def test_writer_order_puts_matched_fact_checks_first() -> None:
    web = item(A)
    fact_check = item(B, tier=Tier.MEDIUM).model_copy(update={"source": "fact_check"})
    assert writer_order([web, fact_check]) == [fact_check, web]


def test_draft_reply_is_written_for_the_contexts_post_platform_and_language(
    fake_llm: FakeLLM,
) -> None:
    fake_llm.script("write", Reply.json({"text": "  Not so. https://a.example/1  "}))
    ctx = CheckContext(
        post=POST,
        platform=Platform.BLUESKY,
        as_of=POST.created_at,
        replay=False,
        lang="de",
        use_llm=True,
    )
    llm = LLMClient(fake_llm.config())
    text = draft_reply(ctx, llm, verdict=Verdict.REFUTED, evidence=[item(A)])
    assert text == "Not so. https://a.example/1"
    prompt = "\n".join(str(m["content"]) for m in fake_llm.requests_for("write")[0].messages)
    assert "a Bluesky reply" in prompt and "Language: de" in prompt and POST.text in prompt
    assert [call.step for call in ctx.ledger.calls] == ["write"]  # the check's own ledger
