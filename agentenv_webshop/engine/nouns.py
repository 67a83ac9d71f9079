"""Noun extraction for WebShop's type reward (`get_type_reward`'s title nouns).

Owns the choice of backend and nothing else. WebShop keeps the lowercased text of every spaCy
token tagged NOUN or PROPN in a product name. Backends:

- ``spacy``: used when spaCy and a model (``en_core_web_lg``, else ``en_core_web_sm``) import.
  Faithful to WebShop (AgentGym loads ``en_core_web_lg``).
- ``rules``: a built-in fallback with no downloads. It splits the name like spaCy's tokenizer
  (words, with punctuation and hyphens as separators) and keeps a token as a noun unless it is a
  stopword (determiner, pronoun, preposition, conjunction, auxiliary), a single letter, a number
  or an ordinal, a known adjective / colour / adverb / verb from small word lists, or has an
  adjective or adverb suffix (-ous, -ful, -less, -able, -ible, -ly). Plurals are checked through
  their singular (``'bags'`` is looked up as ``'bag'``, ``'washables'`` as ``'washable'``) but
  the surface form is returned, as spaCy returns ``token.text``.

Difference: spaCy tags by context, and on title-cased product names it tags many adjectives as
PROPN, so it usually returns MORE tokens (e.g. 'Black', 'Organic') than the rule backend, which
drops every listed adjective/colour. Both give an identical noun list for identical names, so
buying the goal product itself always scores title_score 1.0 either way.
"""
from __future__ import annotations

import functools
import logging
import re

__all__ = ["extract_nouns", "noun_backend"]

logger = logging.getLogger(__name__)

_SPACY_MODELS = ("en_core_web_lg", "en_core_web_sm")

_STOPWORDS = frozenset("""
a an the this that these those some any each every either neither no all both half
i me my mine we us our ours you your yours he him his she her hers it its they them their theirs
one ones who whom whose which what whatever whoever
of in on at by for with without within into onto from to up down over under above below
about across after against along among around as before behind beneath beside besides between
beyond but despite during except inside near off out outside per plus since than through
throughout till toward towards until upon via vs versus
and or nor so yet if then else because while whereas though although
is am are was were be been being do does did done have has had having will would shall should
can could may might must not
very too also just only more most less least much many few several such same other another
own quite rather really still even ever again already almost always never often once twice
here there where when how why now
""".split())

_ADJECTIVES = frozenset("""
new old large small big little mini tiny huge long short tall high low wide narrow thick thin
heavy light lightweight soft hard firm smooth rough warm cool cold hot dry wet fresh
good great best better fine nice premium classic modern vintage retro casual formal elegant cute
pretty beautiful sexy slim loose tight fit fitted extra super ultra double single multi
full empty free natural organic pure clean simple plain basic original professional portable
compact adjustable waterproof wireless rechargeable durable comfortable breathable stretchy
easy quick fast slow safe strong sturdy solid real true deep dark bright clear
mens womens men's women's unisex adult kids baby girls boys
black white red blue green yellow orange purple pink brown grey gray silver gold golden beige
ivory navy teal tan khaki maroon violet lavender cream multicolor multicolored colorful
round square oval flat straight curly wavy
daily weekly non anti pre
sugar-free gluten-free dairy-free
french italian american english mexican japanese chinese korean indian
left right front back top bottom inner outer upper lower
first second third last next
""".split())

_VERBS = frozenset("""
make makes made use uses used using get gets got buy sell keep hold holds fits fitting
include includes included including feature features featuring contain contains containing
help helps provide provides designed
wash washed washing dried dry-clean stretch stretched
""".split())

_ADJ_SUFFIXES = ("ous", "ful", "less", "able", "ible", "ly")

_TOKEN_RE = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")
_DIGITS_RE = re.compile(r"^[0-9]+(?:st|nd|rd|th)?$")


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("es") and word[-3] in "sxz":
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def _is_rule_noun(token: str) -> bool:
    word = token.lower()
    if _DIGITS_RE.match(word):
        return False
    candidates = {word, _singular(word)}
    if word.endswith("'s"):
        candidates.add(word[:-2])
    for cand in candidates:
        if cand in _STOPWORDS or cand in _ADJECTIVES or cand in _VERBS:
            return False
    if len(word) > 5 and word.endswith(_ADJ_SUFFIXES):
        return False
    return len(word) > 1  # single letters ("T" of "T-Shirt") are dropped


@functools.lru_cache(maxsize=1)
def _load_spacy():
    try:
        import spacy  # noqa: PLC0415 - optional dependency
    except ImportError:
        logger.info("Title nouns: spaCy not installed; using the built-in rule-based noun tagger")
        return None
    for name in _SPACY_MODELS:
        try:
            nlp = spacy.load(name, disable=["ner", "parser", "lemmatizer"])
        except OSError:
            continue
        logger.info("Title nouns: using spaCy model %s", name)
        return nlp
    logger.info("Title nouns: no spaCy model (%s) installed; using the built-in rule-based noun tagger",
                ", ".join(_SPACY_MODELS))
    return None


def noun_backend() -> str:
    """Name of the active noun backend: ``'spacy:<model>'`` or ``'rules'``."""
    nlp = _load_spacy()
    return "rules" if nlp is None else f"spacy:{nlp.meta.get('lang', 'en')}_{nlp.meta.get('name', '?')}"


@functools.lru_cache(maxsize=65536)
def extract_nouns(text: str) -> tuple[str, ...]:
    """Lowercased nouns of `text` in order, duplicates kept (WebShop's title-noun list).

    Args:
        text: a product name/title.

    Returns:
        A tuple of lowercased token texts tagged NOUN/PROPN (spaCy) or judged nouns (rules).
    """
    nlp = _load_spacy()
    if nlp is not None:
        return tuple(t.text.lower() for t in nlp(text) if t.pos_ in ("NOUN", "PROPN"))
    return tuple(tok.lower() for tok in _TOKEN_RE.findall(text) if _is_rule_noun(tok))
