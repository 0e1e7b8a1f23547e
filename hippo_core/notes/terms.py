"""Words as ranking counts them: markup out of headings, common words out, light stemming.

verify's word-level turn search and ``relevance = "bm25"`` of the context block both match
a note by its uncommon words. Stemming here is deliberately light, what an English plural
or tense adds (``retries`` and ``retry``, ``handled`` and ``handles``): it merges the forms
a task and a note write of one word, without the aggressive stems that merge different
words (``general`` and ``generate``).

Snowball's English stemmer (Porter2, through PyStemmer) was measured in its place on the
public retrieval sets (``../shared/evals/retrieval``, held-in) and ranked worse:
``relevance = "bm25"`` recall@5 0.729 to 0.721 on hatch and 0.746 to 0.742 on vite (28 of
600 tasks worse, 15 better), verify's text-only turn search 0.475 to 0.468 and 0.489 to
0.477. These rules stay, although PyStemmer would have cost the first prompt only about 1 ms.
"""

from __future__ import annotations

from collections import Counter

from hippo_core.base.patterns import Lazy
from hippo_core.base.records import Record
from hippo_core.notes.text import decode_note, split_frontmatter, words

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hippo_core.notes.note import Note

#: Markup a heading may carry that is not its words: attribute lists (``{ #anchor .cls }``),
#: HTML tags, a link's target, and the ``#``s that close an ATX heading.
_MARKUP = Lazy(r"\{[^}]*\}|<[^>]*>|\s#+\s*$")  # read notes only: compiled when one is
_LINK = Lazy(r"!?\[([^\]]*)\]\([^)]*\)")
_COMMON = """
    a about above after again all also an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from
    further had has have having he her here hers him his how i if in into is it its itself
    just me more most my no nor not now of off on once only or other our ours out over own
    same she should so some such than that the their theirs them then there these they this
    those through to too under until up use used using very was we were what when where
    which while who whom why will with would you your yours
"""
#: Words too common to find a note by; left out of word-level searches and rankings.
COMMON = frozenset(_COMMON.split())
_STEMS: dict[str, str] = {}


def clean(heading: str) -> str:
    """A heading's words without its markup: ``Handling errors { #handling-errors }`` is
    ``Handling errors``; emphasis and code ticks go with the other non-word characters."""
    return " ".join(_MARKUP.sub(" ", _LINK.sub(r"\1", heading)).split())


def stem(word: str) -> str:
    """A lower-case word without its plural or tense ending: ``retries`` and ``retried``
    are ``retry``; ``handle``, ``handles``, ``handled`` and ``handling`` are ``handl``. Not a
    word, but the same stem for every form, which is all a match needs."""
    found = _STEMS.get(word)
    if found is None:
        found = _STEMS[word] = _stem(word)
    return found


def _stem(word: str) -> str:
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith(("ies", "ied")):
        return word[:-3] + "y"
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    for ending in ("ing", "ed"):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            word = word[: -len(ending)]
            if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
                word = word[:-1]  # running -> run, but falling -> fall
            break
    # A silent e goes too, so that "cache" meets "cached" and "caching" where they end.
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def terms(text: str) -> list[str]:
    """The text's uncommon words of three or more letters or digits, stemmed, in order."""
    return [stem(word) for word in words(text) if word not in COMMON]


#: File names that name their folder's note rather than a subject of their own.
_FOLDER_NOTES = frozenset(["index", "readme", "_index"])


class NoteTerms(Record):
    """A note's terms by field (:mod:`hippo_core.notes.fields`): the title's (with the file
    name's), the headings' but the title, and the body's."""

    __slots__ = ("title", "headings", "body")
    title: Counter[str]
    headings: Counter[str]
    body: Counter[str]

    def __init__(self, title: Counter[str], headings: Counter[str], body: Counter[str]) -> None:
        self._set(title=title, headings=headings, body=body)


def note_terms(note: Note, raw: bytes) -> NoteTerms:
    """The terms of a note read from ``raw``, by field: its title and file name
    (``index.md`` and ``README.md`` by their folder's name); its headings, the title's own
    left out; its body, everything after the frontmatter (the headings' lines among it)."""
    text, _why = decode_note(raw)
    body = Counter(terms(text[split_frontmatter(text).body_start :])) if text else Counter()
    parts = note.path.removesuffix(".md").split("/")
    name = parts[-2] if parts[-1].lower() in _FOLDER_NOTES and len(parts) > 1 else parts[-1]
    title = Counter(terms(clean(note.title)))
    title.update(terms(name))
    headings = list(note.headings)
    if note.title in headings:  # the title is the first heading that is its own line
        headings.remove(note.title)
    below = Counter(term for heading in headings for term in terms(clean(heading)))
    return NoteTerms(title, below, body)
