"""Placeholder topics: a message named by its best key phrases rather than its first words."""

from __future__ import annotations

from .lexicon import STOPWORDS, is_named, is_number, split_sentences, words


class KeyphraseTopicer:
    """Names a message by its two best key phrases: runs of content words, named things first."""

    name = "keyphrase"

    def __init__(self, max_phrases: int = 2, max_words: int = 3) -> None:
        self._max_phrases = max_phrases
        self._max_words = max_words

    def topic(self, text: str) -> str:
        phrases: list[tuple[float, int, list[str]]] = []
        run: list[str] = []
        run_score = 0.0
        position = 0
        for sentence in split_sentences(text) or [text]:
            toks = words(sentence)
            for i, tok in enumerate(toks + ["."]):
                content = tok[:1].isalnum() and tok.lower() not in STOPWORDS and (len(tok) > 2 or is_number(tok))
                if content and len(run) < self._max_words:
                    run.append(tok)
                    run_score += (
                        3.0 if is_named(tok, i == 0) else 2.0 if is_number(tok) else 1.0 + min(len(tok), 10) / 10
                    )
                    continue
                if run:
                    phrases.append((run_score, position, run))
                    position += 1
                run, run_score = ([tok], 1.0 + min(len(tok), 10) / 10) if content else ([], 0.0)
        if not phrases:
            return " ".join(words(text)[:3]) or "message"
        best = sorted(phrases, key=lambda p: (-p[0], p[1]))[: self._max_phrases]
        best.sort(key=lambda p: p[1])
        return ", ".join(" ".join(p[2]) for p in best)
