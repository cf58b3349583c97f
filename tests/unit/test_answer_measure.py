"""bench_long's headline measure of the real suite: the answer words that reach the model (no model, no corpus)."""

from __future__ import annotations

from scripts.bench_long import answer_words
from scripts.common import content_stems


def test_answer_words_are_the_answers_content_words_less_the_questions() -> None:
    words = answer_words(
        "goalkeeper, because there is far less running",
        "What spot did I usually take when I played soccer, and why?",
        ["I mostly played goalkeeper since there is far less running involved."],
    )
    assert words == {"goalkeeper", "far", "less", "runn"}  # stemmed as scripts.common.stem, stop words out
    assert words <= content_stems("I mostly played goalkeeper since there is far less running involved.")


def test_a_question_counts_only_when_its_evidence_holds_every_answer_word() -> None:
    assert answer_words("Batman", "Which comic book character did I say I like best?", ["Batman, for sure!"]) == {
        "batman"
    }
    assert answer_words("Batman", "Which comic book character?", ["I like the Joker."]) == set()  # a gloss
    assert answer_words("comic book", "Which comic book character?", ["Batman"]) == set()  # nothing left to find
