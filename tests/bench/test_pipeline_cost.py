"""What the cost benchmark attributes to instructions and to batching, on hand-made requests
and costs (the end-to-end run is `test_bench_smoke`'s)."""

from __future__ import annotations

from typing import Any

import pytest

from bench.pipeline_cost import PostCost, batching_headroom, focus_effect, report
from testing.fakes.openai_server import RecordedRequest


def words(text: str) -> int:
    return len(text.split())


def request(key: str, system: str, user: str) -> RecordedRequest:
    body: dict[str, Any] = {
        "messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]
    }
    return RecordedRequest(path="/v1/chat/completions", headers={}, body=body, key=key)


def test_batching_headroom_is_what_later_extraction_calls_sent_besides_page_text() -> None:
    page = '<page n="1" url="u">\nfive words of page text\n</page>'
    requests = [
        request("analyze", "one two", "three"),
        request("evidence", "rules rules", f"post\n\n{page}"),  # the first: nothing to save
        request("evidence", "rules rules", f"post claims\n\n{page}\n\n{page}"),
        request("write", "w", "x"),
    ]
    # The second call: 2 system words and 2 user words outside its two page blocks.
    assert batching_headroom(requests, words) == 4


def test_a_single_extraction_call_leaves_no_batching_headroom() -> None:
    requests = [request("evidence", "rules", '<page n="1" url="u">\ntext\n</page>')]
    assert batching_headroom(requests, words) == 0


def cost(post_id: str, ours: int, instructions: int, reference: int, ref_instr: int) -> PostCost:
    return PostCost(
        post_id=post_id,
        prompt={"evidence": ours},
        instructions=instructions,
        reference_extraction_prompt=reference,
        reference_instructions=ref_instr,
    )


def test_the_ratio_without_instructions_leaves_every_system_message_out_on_both_sides() -> None:
    costs = [cost("a", 1000, 400, 4000, 1000), cost("b", 2000, 500, 9000, 1500)]
    result = report(costs)
    assert result["prompt_ratio_p50"] == pytest.approx(6500 / 1500)
    # Medians of what is left: ours (600, 1500) -> 1050; the reference's (3000, 7500) -> 5250.
    assert result["prompt_ratio_p50_without_instructions"] == pytest.approx(5250 / 1050)
    assert result["ours_instruction_tokens_p50"] == pytest.approx(450)
    # One extraction call a post already: batching could save nothing.
    assert result["prompt_ratio_p50_if_one_extraction_call"] == result["prompt_ratio_p50"]


def test_the_focus_comparison_counts_posts_whose_verdict_reply_or_quotes_differ() -> None:
    def cost(post_id: str, tokens: int, quotes: tuple[str, ...]) -> PostCost:
        return PostCost(
            post_id=post_id, prompt={"evidence": tokens}, outcome=("refuted", "r", quotes)
        )

    focused = [cost("a", 100, ("q1",)), cost("b", 200, ("q2",)), cost("c", 300, ("q3",))]
    whole = [cost("a", 150, ("q1",)), cost("b", 260, ("q2", "q4")), cost("c", 330, ("q3",))]
    effect = focus_effect(focused, whole, None)
    assert effect["decisions_changed_by_focus"] == 1  # b quoted one more sentence whole
    assert effect["whole_passages_prompt_tokens_p50"] == 260
