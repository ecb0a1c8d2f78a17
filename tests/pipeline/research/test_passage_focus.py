from pipeline.research.passage_focus import ELIDED, Focus, focus_passage, sentences

CLAIM = "Hot lemon water kills the flu virus in the throat."
PASSAGE = (
    "There is no evidence that lemon water kills influenza. "
    "This is why doctors do not recommend it. "
    "At a hearing last month, charities described the response as measured. "
    "Residents said the figures matched last year's. "
    "A drink passes through the throat in seconds. "
    "Warm drinks can soothe it.\n"
    "Support independent journalism today."
)


def test_sentences_sharing_no_word_with_the_claims_become_one_mark_a_run():
    shown = focus_passage(PASSAGE, Focus.of([CLAIM]))
    assert "charities" not in shown and "Residents" not in shown and "Support" not in shown
    assert "lemon water kills influenza" in shown and "through the throat" in shown
    # Two dropped sentences in a row leave one mark; the dropped last line leaves its own.
    assert shown.count(ELIDED) == 2


def test_the_sentence_after_a_kept_one_is_kept_because_it_often_rules_on_it():
    shown = focus_passage(PASSAGE, Focus.of([CLAIM]))
    assert "This is why doctors do not recommend it." in shown


def test_a_research_questions_words_keep_a_sentence_the_claim_does_not_name():
    text = (
        "Whitlow is alive, her label said. Fans cheered. The fake report began on a copycat site."
    )
    claims = ["Singer Dana Whitlow died in a car crash."]
    assert "copycat" not in focus_passage(text, Focus.of(claims))
    with_question = Focus.of([*claims, "Where did the report of her death come from?"])
    assert "copycat" in focus_passage(text, with_question)


def test_a_passage_with_no_word_of_the_claims_is_shown_whole():
    # The relevance model chose it (a paraphrase, another language): words cannot judge it.
    text = "Zitronenwasser tötet keine Grippeviren. Das sagen Ärzte seit Jahren."
    assert focus_passage(text, Focus.of([CLAIM])) == text


def test_without_focus_words_or_with_nothing_to_drop_the_passage_is_unchanged():
    assert focus_passage(PASSAGE, Focus()) == PASSAGE
    short = "Lemon water does not kill the flu. It soothes the throat."
    assert focus_passage(short, Focus.of([CLAIM])) == short


def test_sentences_split_at_end_marks_and_line_breaks_keeping_every_word():
    text = 'He said "it is false." Then left!\nA heading\nLast one… more'
    parts = sentences(text)
    assert parts == ['He said "it is false."', "Then left!", "A heading", "Last one…", "more"]
    assert " ".join(parts).split() == text.split()


def test_a_passage_in_another_language_than_the_claims_is_shown_whole():
    # Only the name would match: every German sentence saying what happened would be dropped.
    text = (
        "Dana Whitlow lebt. Ihr Management nannte die Meldung über ihren Tod einen Schwindel. "
        "Am Samstag spielte sie wie geplant in Riverton."
    )
    claims = ["Singer Dana Whitlow died last night in a car crash."]
    assert focus_passage(text, Focus.of(claims)) == text
    assert not Focus.of(claims).reads(text)
