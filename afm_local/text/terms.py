"""The terms a text contributes to the lexical ranking: its words, lower-cased, stop words out, stemmed.

English and Russian words are stemmed by Snowball (PyStemmer, the stemmer bm25s uses), each word by the
stemmer of its script, so "researching" meets "research" and "аллергией" meets "аллергия"; digits are
kept as written.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .lexicon import STOPWORDS

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CYRILLIC = re.compile(r"[а-яё]")


@lru_cache(maxsize=2)
def _stemmer(language: str):  # type: ignore[no-untyped-def]
    import Stemmer

    return Stemmer.Stemmer(language)


def terms(text: str) -> list[str]:
    """The text's lexical terms, in order (repeats kept: they are term frequencies)."""
    words = [w for w in (m.lower() for m in _WORD.findall(text)) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())]
    latin = [w for w in words if not _CYRILLIC.search(w)]
    cyrillic = [w for w in words if _CYRILLIC.search(w)]
    stems = dict(zip(latin, _stemmer("english").stemWords(latin)))
    stems.update(zip(cyrillic, _stemmer("russian").stemWords(cyrillic)))
    return [stems[w] for w in words]
