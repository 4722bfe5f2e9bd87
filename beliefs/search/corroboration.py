"""The sense check: when a name that is also an everyday word counts as naming the belief.

"let's go with the second approach" must not pull in the Go services belief, nor "tire rotation" the
on-call rotation, "my nephew Tomás" the second shooter Tomás or "obsessed with Loki" the Grafana
Loki belief; "rewrite it in Go", "which go version" and "can Tomás cover the wedding" must. A
one-word name, whichever field it matched (alias, canonical name, rejected alternative), counts only
with corroboration when it has a sense besides the belief's (`lexicon.has_other_sense`): an everyday
English word, or a word at least once per million words in English or once per hundred thousand in
another language though no English dictionary lists it (a first name, a place, a figure, a word of
another language; a code with a digit, "q1" or "s3", has none); so does a code of two or three
letters that is no word, written in capitals ("UV", "GCS": the UV index, a coma scale), which many
fields share (typed in lower case, "uv", "pg", it is the user's own tool's name), a rarer word the
dictionary lists that the belief writes as a name (`lexicon.rare_word`: "smoking a brisket" is no
dog called Brisket; a belief that writes it in lower case is about the thing, and one of a code
scope names a tool: "not picked up in storybook"), a one-edit match
from such a word ("raw" for the alias "raws", "primer" for "primers"), and a word written inside a
name of several words ("Gary Lineker", "Tesla's Sentry Mode"). An English word rarer than once per
ten thousand words that the belief writes in lower case only is its topic ("exceptions", "rotation",
"secret"): typed in another form than the belief's ("where do we keep secrets?") it counts alone,
unless that form is one of the commonest words ("night" for "nights": many senses);
typed as the belief writes it, it needs corroboration like any other everyday word ("train and test
error", "a starter template", "tire rotation"), a word pointing at the user's own one before it
("write a bio for the band", "which clients"), a turn too short to say another sense ("set up
nightly backups"), or a topic or name of another belief of the same scope in the turn ("does the
protagonist's viewpoint hold?"); so does such a code ("UV lock fails", "Dagster fails every DBT
test"). The kind word of a canonical name (`kind_words`: "database" of `database_postgres`), one
word of the name alone, needs corroboration too, or a question asking which one ("which database do
we use?"), or a turn too short to say another sense; and so does a name rarer than once per
300,000 words in such a turn of a few words ("jest config", "bump django to 5.1"). A code of an
alias of several words written alone ("842" of "ASC 842", "8606" of "Form 8606") always needs
corroboration: "UA 842 out of SFO" is a flight.
Corroboration is one of:

- its written form: a code span, or a capital where a sentence does not start when the
  word's other sense is an English word, written in lower case ("rewrite it in Go"); a name
  no dictionary lists is capitalised in every sense ("my nephew Tomás", "the Maya
  calendar", "Gary Lineker"); or mixed case ("BaFin", "eID") for a one-word name not
  everyone's (`everyones`: "WhatsApp"); or a Turkish case ending after an apostrophe, which
  Turkish writes on every name (`case_endings`: "badem'in", not "badem ezmesi");
- a clause of the same belief that counts, reached by another word of the turn;
- the other words of the several-word name it is written in, when all are the belief's
  ("Zephyr RTOS");
- a word of the belief's own text (content, why it matters, canonical name, aliases; not a
  stop or function word in English or another language, nor one of the commonest words)
  anywhere in the turn, or for one of the commonest name words ("make", "go") within
  `WINDOW` words of it, or anywhere when no dictionary lists it ("what does my son do on
  wednesdays", for a belief about his Wednesday lessons);
- what the user's team uses (`name_roles.team_tools`: "what are we using sloth for again");
- a figure of three characters or more the belief's own text writes too ("the 16:30 call",
  "the 2021 Bourgogne"), not one of the matched name's own;
- for a name the belief writes as one, what the turn says it is to the user
  (`beliefs.search.name_roles`): someone speaking or spoken to ("Rose says…", "ask sunny
  if…"), the turn's subject: its first word with its 's ("Hale's too mopey…", "tank's
  back"), with a genitive's bare s ("idas første skoledag"), or before a verb such as "has",
  "is" or "wants" (`opens_with_name`: "nora got a 168", "ida hat 39,4"); or, for an animal
  the belief names, a living thing's act anywhere in the turn ("is cerenia ok for bran? hes
  been throwing up"). A word of kinship or where it is from ("my sister Priya", "Kasumi from
  housekeeping") says which one: it counts only when the belief says so too, and so does a
  title ("mr muller" for "pan Müller", not for "Frau Müller");
- for a name that is itself a relation in another language, a turn in a language that says
  one's own relations without "my" (`kinship.bare_relation`: "żona ma urodziny", "mama
  kaže…").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from beliefs.index.indexed_doc import IndexedDoc
from beliefs.search.compounds import compounds, inside_compound
from beliefs.search.hits import Match
from beliefs.search.in_names import run_mates, short_code
from beliefs.search.kinship import bare_relation
from beliefs.search.name_roles import (
    DESCRIBED,
    KIN,
    LIVES,
    OPENS_OWN,
    SPEAKS,
    TEAM_USES,
    TITLED,
    addressed,
    animal,
    descriptions,
    kin_of,
    living_turn,
    possessive_opener,
    speakers,
    subject_of_verb,
    team_tools,
    titled,
)
from beliefs.search.own_text import (
    domain_words,
    proper_words,
    rejected_names,
    shares_figure,
    subject,
)
from beliefs.search.short_turns import SHORT_TOPIC, short_named, short_turn
from beliefs.search.switching import asks_to_switch
from beliefs.text.lexicon import (
    COMMON_ZIPF,
    ELSEWHERE_ZIPF,
    EVERYDAY_ZIPF,
    everyday_in,
    has_other_sense,
    in_dictionary,
    is_common,
    is_function_word_elsewhere,
    is_function_word_in,
    is_general,
    rare_word,
    stem,
    zipf,
    zipf_elsewhere,
)
from beliefs.text.query import QueryTerms, is_telling

# Rarer than once per ten thousand words (the commonest words, `lexicon.is_general`): an
# everyday word the belief writes in lower case is its topic ("exceptions", "viewpoint",
# "band"); a commoner one is ambiguous however the belief writes it ("release", "plan").
TOPIC_ZIPF = 5.0
WINDOW = 2  # words either side: "which go version", "the Spark job", "a click command"

WRITTEN = "written as a name"
OPENS = "the turn opens with it"
OTHER_CLAUSE = "another clause"
RUN = "its own name's words"
POINTED = "the user's own"
BARE_RELATION = "a relation said without 'my'"
# A ratio or fraction of two small numbers, or a number with a point: a split, a size, a
# score, a version, a share ("60/40", "3/16", "24/7", "5.4", "99.9"); a split in three groups or
# more ("30/40/30") is one schedule's
_SMALL_NUMBERS = re.compile(r"\d{1,2}[-/]\d{1,2}|\d+(?:\.\d+)+")
# Words before a topic that point at the user's own one: "my editor", "our queues"; "a starter
# template", "two lessons" point at none, nor does "which", which asks among any ("which flux
# for soldering?"). "the" points in a turn of SHORT_THE words or fewer ("set up the editor for
# rust", "write a scene where the villain searches the ship"); in a longer one any noun takes
# it ("who takes the helm when tacking…", "the fees for a fast track passport renewal…").
SHORT_THE = 10
_THE = frozenset(["the"])
_OWN = frozenset(["our", "my"])
_ARTICLES = frozenset(["the", "a", "an", "this", "that", "some"])
SIBLING = "a belief of its scope named too"
QUESTIONS = frozenset(["which", "what"])  # "which key does a payment call need?"
ASKED = "asked which one"
FIGURE = "a figure of its own text"
SWITCHING = "asked to change to it"


def neighbours(terms: QueryTerms, word: str) -> dict[str, str]:
    """Stems of the telling words within WINDOW of each place `word` stands -> the words."""
    seq = terms.sequence
    out: dict[str, str] = {}
    for i, w in enumerate(seq):
        if w != word:
            continue
        for near in seq[max(0, i - WINDOW) : i + WINDOW + 1]:
            if near != word and is_telling(near):
                out.setdefault(stem(near), near)
    return out


def follows(terms: QueryTerms, word: str, pointers: frozenset[str], within: int) -> bool:
    """Whether `word` stands somewhere in the turn with one of `pointers` among the `within`
    words before it ("the band", "which test framework")."""
    seq = terms.sequence
    return any(
        w == word and any(p in pointers for p in seq[max(0, i - within) : i])
        for i, w in enumerate(seq)
    )


def telling_words(terms: QueryTerms) -> dict[str, str]:
    """Stems of the turn's words that may tie it to a belief from anywhere (no stop word, no
    number, none of the commonest words) -> the words."""
    return {
        stem(w): w
        for w in terms.sequence
        # a number first: a new one ("(turn 4711)", an order's) costs a frequency lookup
        if not w.isdigit() and is_telling(w) and not is_general(w)
    }


def english(word: str) -> bool:
    """An everyday English word, or a form of one the dictionary lists by its stem only
    ("pairing" of "pair", "deployed" of "deploy")."""
    return is_common(word) or (zipf(word) >= COMMON_ZIPF and in_dictionary(stem(word)))


def everyones(word: str) -> bool:
    """A name so common in English or another language that, however it is written, it is
    everyone's ("WhatsApp", "iPhone", "YouTube"): at least EVERYDAY_ZIPF."""
    return zipf(word) >= EVERYDAY_ZIPF or zipf_elsewhere(word) >= EVERYDAY_ZIPF


def capital_tells(word: str) -> bool:
    """Whether a capital where no sentence starts says `word` is meant as a name: when its
    other sense is an English word, written in lower case ("rewrite it in Go", "Pixel just
    walked across my keyboard"); not for a name no dictionary lists, capitalised in every
    sense ("my nephew Tomás", "obsessed with Loki", "the Maya calendar"), however frequent
    ("Dave", "Chicago": everyday by frequency alone). A code of two or three letters in capitals
    is read as written ("TS me marca…")."""
    return english(word) and (len(word) <= 3 or in_dictionary(word) or in_dictionary(stem(word)))


def opens_with_name(terms: QueryTerms, word: str) -> bool:
    """Whether the turn opens with `word` as its subject, one of the user's own people or
    things: a name of four letters or more that no dictionary lists, written with a capital
    ("Finn's class is doing a bake sale", "Jonah just sent the comps", "Kłos znowu nie dosłał
    faktur"), or any word but an everyday English one, however written, that a verb such as
    "has", "is" or "wants" follows (`name_roles.subject_of_verb`: "nora got a 168", "ida hat
    39,4", and after an article where a language gives names one: "o trovão tá mancando").
    Otherwise not an everyday word of another language ("Cliente vuole…", "Mijn partner…")
    nor a code in capitals ("UV index is 9")."""
    seq = terms.sequence
    if subject_of_verb(terms, word) and not is_common(word):
        return True
    if not seq or seq[0] != word or len(word) < 4 or english(word):
        return False
    if is_function_word_elsewhere(word) or everyday_in(word, terms.languages):
        return False
    if zipf_elsewhere(word) >= ELSEWHERE_ZIPF:  # "Cliente vuole…" where no language is told
        return False
    first = terms.cleaned.split(maxsplit=1)[0]
    return first[:1].isupper() and not first[1:].isupper()


def needs_sense(
    token: str,
    how: Match,
    query: str,
    in_names: frozenset[str] = frozenset(),
    languages: frozenset[str] = frozenset(),
) -> bool:
    """Whether a matched one-word name needs corroboration: it has another sense (in English,
    or in `languages`, those the turn is written in), a turn's word with one, or a rare word of
    the dictionary, reached it by an edit or by its stem ("raw" for the alias "raws", "compose"
    for "composables", "marmite" for the cat Marmie), or the turn
    writes it inside a name of several words,
    after a word of kinship or as a code in capitals (`in_names`: "Gary Lineker", "the
    California Zephyr", "my sister Priya", "the UV index"). A number needs it as a part of a
    name ("842" of "ASC 842"), as a ratio of two small numbers ("60/40", "24/7") or with a point
    ("99.9" uptime is no SLO's, a 5.4 truck engine no engine version)."""
    if how == "part" or _SMALL_NUMBERS.fullmatch(token):  # "842" of "ASC 842", "60/40": a
        return True  # number is many things
    if " " in token:
        return False
    return (
        has_other_sense(token, languages)
        or rare_word(token)
        or (
            how in ("fuzzy", "stemmed")
            and (
                has_other_sense(query, languages)
                # not a version of the name: "storybook" for "storybook7"
                or (rare_word(query) and token.rstrip("0123456789") != query)
            )
            and token.replace(".", " ") != query  # "next js": a dotted name spaced out
        )
        or query in in_names
    )


def topic(doc: IndexedDoc, token: str) -> bool:
    """Whether a matched everyday English word is the belief's topic, used in its everyday
    sense: the belief writes it in lower case only ("exceptions", "viewpoint", "recipes"), and
    it is rarer than TOPIC_ZIPF (one of the commonest words has many senses: "release",
    "plan"). Another form of it ("recipe") counts alone; the form the belief writes needs the
    belief's world in the turn (`accumulate._corroborate`); one edit from a rarer name ("raw"
    for "raws", "primer" for "primers") needs corroboration."""
    return may_be_topic(token) and token not in proper_words(doc)


def may_be_topic(token: str) -> bool:
    """Whether `token` is an English word rare enough to be a belief's topic (`topic`)."""
    return english(token) and zipf(token) < TOPIC_ZIPF


def _of_code(doc: IndexedDoc) -> bool:
    """Whether the belief is of a code scope ("domain:code"), where a rare word written as a
    name is a tool's ("mongoose", "storybook", "puppeteer")."""
    return any(scope.rpartition(":")[2] == "code" for scope in doc.belief.scope)


@dataclass(frozen=True, slots=True)
class TurnSigns:
    """What a turn says of all its words, read once for all the words the sense check asks
    about: its `telling_words`, whether they are too few to say another sense
    (`short_turn`), its `speakers`, its `possessive_opener`, whether it tells a living thing's
    act (`living_turn`), its `descriptions`, its `team_tools`, and whether it asks to change
    to something (`asks_to_switch`)."""

    telling: dict[str, str]
    short: bool
    speaking: frozenset[str]
    opener: str
    living: bool
    described: dict[str, frozenset[str]]
    compounds: tuple[str, ...]
    team: frozenset[str]
    titled: dict[str, frozenset[str]]
    switching: bool

    @classmethod
    def read(cls, terms: QueryTerms) -> TurnSigns:
        telling = telling_words(terms)
        return cls(
            telling=telling,
            short=short_turn(telling),
            speaking=speakers(terms),
            opener=possessive_opener(terms),
            living=living_turn(terms),
            described=descriptions(terms),
            compounds=compounds(terms),
            team=team_tools(terms),
            titled=titled(terms),
            switching=asks_to_switch(terms.cleaned),
        )


class Witness:
    """What can corroborate one common query word, worked out once per word and turn."""

    __slots__ = (
        "_asked",
        "_compounds",
        "_figures",
        "_from",
        "_general",
        "_inflected",
        "_kin",
        "_living",
        "_mates",
        "_near",
        "_near_stems",
        "_opens",
        "_own",
        "_owned",
        "_pointed",
        "_rare",
        "_relation",
        "_short",
        "_speaks",
        "_switching",
        "_team",
        "_titled",
        "_token",
        "_topic",
        "written",
    )

    def __init__(
        self, terms: QueryTerms, query_word: str, token: str, turn: TurnSigns, *, kind: bool = False
    ) -> None:
        """`turn`: what the turn says of all its words, read once (`TurnSigns`). `kind`: the
        word is the kind word of `token`, a canonical name of several words (`kind_words`)."""
        self._token = token
        self._topic = may_be_topic(token)
        # gated only for being a rare word: the belief's topic unless it writes it as a name
        languages = terms.languages
        self._rare = (
            rare_word(token)
            and not has_other_sense(token, languages)
            and (
                query_word == token  # or another form of it: "notarising" for "notarize"
                or (stem(query_word) == stem(token) and not has_other_sense(query_word, languages))
            )
        )
        self._inflected = query_word != token
        self._general = is_general(query_word)
        by_own = follows(terms, query_word, _OWN, 1) or (
            len(terms.sequence) <= SHORT_THE and follows(terms, query_word, _THE, 1)
        )
        short = turn.short
        self._pointed = self._topic and (by_own or (short and len(terms.sequence) <= SHORT_TOPIC))
        self._short = short and (kind or short_code(token) or short_named(terms, token))
        self._asked = kind and follows(terms, query_word, QUESTIONS, 2)
        marked = query_word in terms.marked  # a code span or a capital; code alone is not
        # mixed case names the word's thing, not which of the names holding it ("DeepSpeed"
        # for "DeepSpeed ZeRO-3")
        mixed = query_word in terms.mixed and " " not in token and not everyones(query_word)
        self.written = (
            mixed
            or (marked and (query_word in terms.coded or capital_tells(query_word)))
            or (query_word in terms.suffixed and query_word == token)
        )
        # a whole one-word name, not a part of a longer one ("Argo Workflows…" for "Argo CD")
        self._opens = not kind and " " not in token and opens_with_name(terms, query_word)
        own = {stem(w) for w in token.split(" ")} | {stem(query_word)}
        near = neighbours(terms, query_word)
        telling = turn.telling
        if self._general:  # "make sure the tests pass" is no make target: for one of
            # the commonest words only a word no dictionary lists ties it from afar
            telling = {s: w for s, w in telling.items() if not is_common(w)}
        near.update(telling)
        self._near = {
            s: w for s, w in near.items() if s not in own and not is_function_word_in(w, languages)
        }
        self._own = frozenset(own)
        self._compounds = turn.compounds
        self._near_stems = frozenset(self._near)
        self._mates = run_mates(terms, query_word)
        self._kin = kin_of(terms, query_word)
        self._speaks = query_word in turn.speaking
        # "clive's looking sluggish"; and a name no dictionary lists with the "s" of its
        # genitive, as Danish, Swedish and German write it and English is often typed ("idas
        # første skoledag", "lukas geburtstagsfeier", "owens class is doing a bake sale")
        self._owned = query_word == turn.opener or (
            query_word == f"{token}s"
            and terms.sequence[:1] == (query_word,)
            and not in_dictionary(token)
        )
        # "bran hasn't eaten", not "the puma ate a deer": an article makes it a kind of thing
        self._living = turn.living and not follows(terms, query_word, _ARTICLES, 1)
        self._from = turn.described.get(query_word, frozenset())
        self._switching = turn.switching
        self._figures = terms.figures
        self._team = query_word in turn.team
        self._titled = turn.titled.get(query_word, frozenset())
        # the belief's name is a relation the turn's language says bare ("mama kaže…")
        self._relation = query_word == token and bare_relation(token, languages)

    def everywhere(self) -> str | None:
        """Why the word counts for every belief it reached whatever the belief, if it does:
        outside a name of several words and not after a word of kinship, written as a name, or
        a kind word asked for, or a kind word or short code in a turn too short for another
        sense."""
        if self._mates or self._kin or self._from:
            return None
        said = self._said()
        if said is not None:
            return said
        return POINTED if self._short else None

    def _said(self) -> str | None:
        """What the word's own place in the turn says, whatever the belief: written as a name,
        opening the turn, or a kind word asked for."""
        if self.written:
            return WRITTEN
        if self._opens:
            return OPENS
        if self._asked:
            return ASKED
        return None

    def own_reason(self, doc: IndexedDoc) -> str | None:
        """Why the word counts for `doc` by its own evidence ("" for an inflected topic), or
        None when nothing in the turn but perhaps another clause corroborates it."""
        # first: the words around a rejected option proposed may read as a name of several
        # words ("bu seferlik hedef'e sipariş geçsek" for the rejected "Hedef Ecza")
        if self._switching and self._token in rejected_names(doc):
            return SWITCHING
        if self._kin:  # "my sister Priya": is the belief's Priya a sister?
            return KIN if self._kin <= domain_words(doc) else None
        if self._mates:  # written in a name of several words: is it the belief's?
            return RUN if self._mates <= domain_words(doc) else None
        if self._from:  # "Kasumi from housekeeping": is the belief's from there?
            return DESCRIBED if not self._from.isdisjoint(domain_words(doc)) else None
        if self._rare and (
            self._token not in proper_words(doc)
            or _of_code(doc)
            or self._token in rejected_names(doc)  # "a good Mongoose schema": rejected
        ):
            return ""  # the belief's topic, in its everyday sense: "the brisket rub"
        topic = self._topic and self._token not in proper_words(doc)
        if topic and self._inflected and not self._general:
            return ""
        said = self._said()
        if said is not None:
            return said
        if self._relation:
            return BARE_RELATION
        if (self._speaks or self._owned) and (
            self._token in proper_words(doc) or subject(doc) == self._token
        ):
            return SPEAKS if self._speaks else OPENS_OWN
        if self._titled and not self._titled.isdisjoint(addressed(doc)):
            return TITLED
        if self._near and not self._near_stems.isdisjoint(domain := domain_words(doc)):
            for near_stem, near_word in self._near.items():  # the first, as the turn has them
                if near_stem in domain:
                    return f"domain word {near_word!r}"
        if self._team:
            return TEAM_USES
        if shares_figure(doc, self._token, self._figures):
            return FIGURE
        if self._compounds:  # "warum FOC statt Blockkommutierung?" for FOC's "Kommutierung"
            inside = inside_compound(self._compounds, domain_words(doc), self._own)
            if inside:
                return f"domain word {inside!r}"
        if self._living and self._token in proper_words(doc) and animal(doc):
            return LIVES
        return POINTED if (topic and self._pointed) or self._short else None
