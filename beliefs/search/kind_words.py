"""Kind words of canonical names: "which database do we use?" finds `database_postgres`.

A word of a multi-word canonical name matches alone, at BOOST_NAME_WORD, when it names the
kind of thing and the rest of the name names the thing itself: the name reads "<kind words>
<name>" (`message_queue_kafka`, `crash_reporting_sentry`). A descriptive name with no one name
at its end (`db_pool_max_conns`, `wedding_packages_pricing`) has no kind word: "a rooftop pool"
is no turn about the connection pool. And the turn must speak of the user's one thing of that
kind (`_points_at_one`): "which database", "our queues", not "two client calls" or "a bullet
journal". One word of the name, pointed at so, still needs the belief's world in the turn, as
an everyday word does (`beliefs.search.corroboration`): the question asking which one ("which
database"), a word of the belief's own text, another clause of the belief, or a turn too short
to say another sense. "one of my clients left biscuits for the team" is no turn about the
client galleries.
"""

from __future__ import annotations

from collections.abc import Container
from functools import lru_cache
from itertools import pairwise

from beliefs.index.bm25 import TF_NORM_ONE, idf, label
from beliefs.index.indexed_doc import FUZZY_PREFIX
from beliefs.index.postings import members
from beliefs.index.user_postings import MAX_NAME_WORD_NAMES, UserPostings
from beliefs.search.corroboration import QUESTIONS, follows
from beliefs.search.own_text import proper_words
from beliefs.text.lexicon import in_dictionary, is_common, is_general, stem
from beliefs.text.query import QueryTerms

BOOST_NAME_WORD = 4.0  # one word of a multi-word canonical name
MAX_KIND_NAMES = MAX_NAME_WORD_NAMES  # a kind word stands in for a name only among this few
# Words that point at one thing of a kind: "which database", "our queues", "the rotation"
DETERMINERS = frozenset(
    [
        "which",
        "what",
        "our",
        "my",
        "the",
        "your",
        "their",
        "this",
        "that",
        "his",
        "her",
        "its",
        "whose",
    ]
)

# canonical token -> its name words the turn holds: (score, label, query word)
NameWords = dict[str, list[tuple[float, str, str]]]
# How a canonical name holds its kind word: "<kind words> <name>" (`message_queue_kafka`), a
# descriptive name (`payment_idempotency_key`), or "<modifier> <kind>" (`primary_database`)
NAMED, DESCRIBED, MODIFIED = "named", "described", "modified"
# a query word's clause score, and per canonical name it reaches: the name's word it is a form
# of and how the name holds it
KindWord = tuple[float, dict[str, tuple[str, str]]]


def match_kind_words(
    postings: UserPostings,
    terms: QueryTerms,
    n: int,
    canonical: Container[str],
    consumed: set[str],
    cache: dict[str, KindWord],
) -> NameWords:
    """Kind words of "<kind> <name>" canonical names the turn holds ("database" of
    `database_postgres`): an everyday or dictionary word but not a general one, not already
    part of a longer name the turn matched (`consumed`), not written as a name or in code by
    the turn, in a canonical name whose other words hold the name (a rare word, or one the
    belief writes as a name), and not written as a name by the belief itself. Per word, what
    it reaches is kept until the index changes (`cache`). A descriptive name (no one name at
    its end) counts only when the turn writes two of its words side by side ("my game engine"
    of `game_engine_godot`; not "a merge conflict in dbt_project.yml" of
    `dbt_incremental_merge_strategy`), or asks which one of the kind it holds ("which key does a
    payment call need?" of `payment_idempotency_key`).
    """
    found: NameWords = {}
    pairs: set[tuple[str, str]] | None = None  # worked out for the first name reached
    for word in dict.fromkeys(terms.content):
        if word in consumed or word in terms.marked:  # `log` in code is no kind of thing
            continue
        known = cache.get(word)
        if known is None:
            known = cache[word] = _kind_word(postings, word, n)
        base, hits = known
        for token, (name_word, shape) in hits.items():
            if token in canonical:
                continue
            if shape == MODIFIED:  # only asked for: "which database should the service use?"
                if follows(terms, word, QUESTIONS, 1):
                    found.setdefault(token, []).append((base, label(word, name_word), word))
                continue
            if pairs is None:
                pairs = _adjacent_stems(terms)
            two = _two_together(token, pairs) or _asked_for(token, terms)
            if two or (shape == NAMED and _points_at_one(terms, word, name_word)):
                found.setdefault(token, []).append((base, label(word, name_word), word))
    return found


def _adjacent_stems(terms: QueryTerms) -> set[tuple[str, str]]:
    """The stems of each two words the turn writes side by side (stop words included: "the
    key to the payment office" sets "key" and "payment" apart), in either order, and of each
    identifier's neighbouring words."""
    pairs: set[tuple[str, str]] = set()
    runs = [terms.sequence, *(p.split(" ") for p in terms.code_phrases)]
    for run in runs:
        stems = [stem(w) for w in run]
        for a, b in pairwise(stems):
            pairs.update(((a, b), (b, a)))
    return pairs


def _two_together(token: str, pairs: set[tuple[str, str]]) -> bool:
    """Whether the turn writes two words of the name side by side ("my game engine" of
    `game_engine_godot`), not apart ("a merge conflict in dbt_project.yml")."""
    stems = {stem(w) for w in token.split(" ")}
    return any((a, b) in pairs for a in stems for b in stems if a != b)


def _asked_for(token: str, terms: QueryTerms) -> bool:
    """Whether the turn asks which one of the kind it holds and names it by two of its words
    ("which key does a payment call need?" of `payment_idempotency_key`)."""
    stems = {stem(w) for w in token.split(" ")}
    seq = terms.sequence
    asked = {stem(w) for before, w in pairwise(seq) if before in QUESTIONS} & stems
    return bool(asked) and len(stems & {stem(w) for w in terms.content}) >= 2


def _kind_word(postings: UserPostings, word: str, n: int) -> KindWord:
    """The canonical names `word` is the kind word of, and its clause score (0 for none)."""
    held = postings.name_words.get(stem(word)) if len(word) > FUZZY_PREFIX else None
    if held is None or isinstance(held, int) or is_general(word):  # an int: too many names
        return 0.0, {}
    tokens = members(held)
    if len(tokens) > MAX_KIND_NAMES:  # the kind of that many things names none of them
        return 0.0, {}
    hits = {}
    for token in tokens:
        name_word = _name_word(token, word)
        if (
            not name_word
            or not (is_common(name_word) or in_dictionary(name_word))
            or is_general(name_word)
            or _written_as_name(postings, token, name_word)
        ):
            continue
        if _names_a_kind(token, name_word) or _names_a_name(postings, token, name_word):
            named = _kind_then_name(postings, token, name_word)
            hits[token] = (name_word, NAMED if named else DESCRIBED)
        elif token.endswith(" " + name_word):
            hits[token] = (name_word, MODIFIED)
    df = sum(len(postings.canonical_ids(t)) for t in hits)
    if df > MAX_KIND_NAMES:
        return 0.0, {}
    return (BOOST_NAME_WORD * idf(n, df) * TF_NORM_ONE if hits else 0.0), hits


def _written_as_name(postings: UserPostings, canonical: str, word: str) -> bool:
    """Whether a belief of that name writes `word` as a name ("Click" of `python_cli_click`):
    then it names the thing, not its kind, and only an alias clause (corroborated) counts."""
    return word in _named_by(postings, canonical)


def _names_a_name(postings: UserPostings, canonical: str, word: str) -> bool:
    """Whether another word of the name is one its beliefs write as a name, an everyday word
    though it is: `crash_reporting_sentry` with the alias "Sentry" is the crash reporting
    kind of thing, named Sentry."""
    others = {w for w in canonical.split(" ") if w != word and len(w) > FUZZY_PREFIX}
    return bool(others & _named_by(postings, canonical))


def _named_by(postings: UserPostings, canonical: str) -> set[str]:
    """The words the beliefs of a canonical name write as names."""
    docs = postings.docs
    return {w for bid in postings.canonical_ids(canonical) for w in proper_words(docs[bid])}


def _name_word(canonical: str, word: str) -> str | None:
    """The word of `canonical` that `word` is a form of: the same stem, and `word` keeps the
    whole of it, or of its singular ("queues" of "queue", "charting" of "charts"; not "caching"
    of "cache", another sense)."""
    target = stem(word)
    for name_word in canonical.split(" "):
        whole = name_word[:-1] if name_word.endswith("s") else name_word
        if word.startswith(whole) and stem(name_word) == target:
            return name_word
    return None


@lru_cache(maxsize=65_536)
def _names_a_kind(canonical: str, word: str) -> bool:
    """Whether `word` names the kind of thing in `canonical`: another word is a rare one."""
    return any(w != word and len(w) > FUZZY_PREFIX and not is_common(w) for w in canonical.split())


def _kind_then_name(postings: UserPostings, canonical: str, word: str) -> bool:
    """Whether `canonical` reads "<kind words> <name>": its beliefs write its last word as a
    name (Kafka, Sentry) or hold it as an alias (pytest), `word` is one of the words before it
    and none of those is a name."""
    words = canonical.split(" ")
    while len(words) > 2 and words[-1].isdigit():  # a version or year after the name
        words.pop()
    if len(words) < 2 or word not in words[:-1] or is_general(words[-1]):
        return False  # "Form 17" of `seller_disclosure_form_17`: too frequent a word to name
    named = _named_by(postings, canonical)
    docs = [postings.docs[bid] for bid in postings.canonical_ids(canonical)]
    aliased = {token for doc in docs for token in doc.aliases[: doc.alias_count]}
    return (words[-1] in named or words[-1] in aliased) and not named.intersection(words[:-1])


def _points_at_one(terms: QueryTerms, word: str, name_word: str) -> bool:
    """Whether the turn speaks of the user's one thing of the kind, not of any such thing: the
    kind word opens the turn or has a determiner, possessive or question word among the two
    words before it ("which database", "our queues", "which test framework", "the stale
    flags"), or is the thing's activity ("keeps crashing" of `crash_reporting_sentry`); not
    after a count or a describing word ("two client calls", "a bullet journal", "a shooter
    bar")."""
    if word.endswith("ing") and not name_word.endswith("ing"):
        return True
    opens = bool(terms.sequence) and terms.sequence[0] == word
    return opens or follows(terms, word, DETERMINERS, 2)
