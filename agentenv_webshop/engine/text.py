"""Text helpers shared by search (and usable by the expert): the indexed document text and an
English analyzer close to Lucene's default English one (pyserini's).

The analyzer lowercases, splits on non-word characters (keeping ``6.5`` and ``don't`` whole, like
Lucene's StandardTokenizer), drops a trailing possessive ``'s``, removes Lucene's 33 English
stopwords and applies the Porter stemmer (PyStemmer's ``porter``, the algorithm of Lucene's
PorterStemFilter). Without PyStemmer it warns once and does not stem.
"""
from __future__ import annotations

import logging
import re

logger = logging.getLogger(__name__)

__all__ = ["LUCENE_STOPWORDS", "product_document", "option_text", "Analyzer"]

# Lucene's EnglishAnalyzer.ENGLISH_STOP_WORDS_SET (also bm25s' "en" list).
LUCENE_STOPWORDS = frozenset((
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no",
    "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this",
    "to", "was", "will", "with"))

_TOKEN_RE = re.compile(r"\w+(?:[.']\w+)*")


def option_text(options: dict[str, list[str]]) -> str:
    """WebShop's indexed option text: ``", and ".join(f"{name}: {', '.join(values)}")``."""
    return ", and ".join(f"{name}: {', '.join(values)}" for name, values in options.items())


def product_document(product: dict) -> str:
    """The text WebShop indexes for a product: lower(Title, Description, first bullet, option text)."""
    bullets = product.get("BulletPoints") or []
    parts = [product.get("Title") or "", product.get("Description") or "", bullets[0] if bullets else "",
             option_text(product.get("options") or {})]
    return " ".join(parts).lower()


class Analyzer:
    """Tokenise text into stemmed terms; each distinct surface word is analysed once and cached."""

    def __init__(self, stem: bool = True):
        self._stemmer = None
        if stem:
            try:
                import Stemmer  # PyStemmer

                self._stemmer = Stemmer.Stemmer("porter")
            except ImportError:
                logger.warning("PyStemmer is not installed: search runs without stemming "
                               "(pip install PyStemmer to match Lucene's Porter stemming)")
        self._cache: dict[str, str | None] = {}

    @property
    def stemming(self) -> bool:
        """Whether the Porter stemmer is active."""
        return self._stemmer is not None

    def _analyse_word(self, word: str) -> str | None:
        term: str | None = word
        if term.endswith("'s"):
            term = term[:-2]
        if not term or term in LUCENE_STOPWORDS:
            term = None
        elif self._stemmer is not None:
            term = self._stemmer.stemWord(term)
        self._cache[word] = term
        return term

    def terms(self, text: str) -> list[str]:
        """Analysed terms of ``text`` in order (duplicates kept)."""
        cache = self._cache
        out = []
        for word in _TOKEN_RE.findall(text.lower()):
            term = cache[word] if word in cache else self._analyse_word(word)
            if term is not None:
                out.append(term)
        return out
