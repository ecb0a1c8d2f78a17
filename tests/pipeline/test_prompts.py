"""How a stranger's text goes into a prompt: cut to a limit on a grapheme boundary."""

from __future__ import annotations

import pytest

from pipeline.prompts import CUT_MARK, cut_text

FAMILY = "👩\u200d👩\u200d👧\u200d👦"  # one grapheme cluster of seven code points


def test_text_within_the_limit_is_left_alone() -> None:
    assert cut_text("short", 5) == "short"
    assert cut_text("", 1) == ""


def test_a_cut_ends_on_a_grapheme_boundary_and_is_marked() -> None:
    assert cut_text("ab" + FAMILY + "cd", 8) == "ab" + CUT_MARK  # the emoji is not split
    assert cut_text("ab" + FAMILY + "cd", 9) == "ab" + FAMILY + CUT_MARK
    accented = "e\u0301" * 5  # é as a letter and a combining accent
    assert cut_text(accented, 3) == "e\u0301" + CUT_MARK


@pytest.mark.parametrize("limit", [1, 7, 100, 4000])
def test_a_cut_never_keeps_more_than_the_limit(limit: int) -> None:
    text = ("word " + FAMILY + " e\u0301 ") * 2000
    cut = cut_text(text, limit)
    assert cut.endswith(CUT_MARK)
    assert len(cut) - len(CUT_MARK) <= limit
    assert text.startswith(cut[: -len(CUT_MARK)])


def test_one_cluster_longer_than_the_limit_is_cut_inside_rather_than_dropped() -> None:
    zalgo = "a" + "\u0301" * 10_000
    assert cut_text(zalgo, 10) == zalgo[:10] + CUT_MARK


def test_every_call_that_drafts_a_reply_is_told_to_write_in_the_posts_language() -> None:
    from pipeline.prompts import EVIDENCE_DRAFT_SYSTEM, WRITE_SYSTEM
    from pipeline.records import Platform
    from pipeline.write import writing_rules

    rule = "Write in the language given: the post's language, even when the evidence"
    assert rule in " ".join(WRITE_SYSTEM.split())
    assert rule in " ".join(EVIDENCE_DRAFT_SYSTEM.split())
    assert writing_rules(Platform.X, "de").endswith("Language: de")
