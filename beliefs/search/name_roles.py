"""What a turn says a name in it is to the user, besides its sense: kin ("my sister Priya"),
someone speaking or spoken to ("Rose says…", "ask sunny if…"), the turn's subject with its 's
("Hale's too mopey…"), someone from somewhere ("Kasumi from housekeeping") or someone a title
addresses ("mr muller"). The sense check (`beliefs.search.corroboration`) weighs each against
the belief's own text."""

from __future__ import annotations

import re
from itertools import pairwise

from beliefs.index.indexed_doc import IndexedDoc
from beliefs.search.kinship import (
    BEFORE_NAMES,
    HOUSEHOLD,
    KINSHIP,
    SOURCES,
    kin_said,
    said_kin,
)
from beliefs.text.lexicon import in_dictionary, is_general, stem
from beliefs.text.query import CALENDAR, QueryTerms, is_telling, normalize_name

KIN = "its kinship word"
# Verbs only someone does, right after a clause's first word: "Rose says they're moving to
# memoQ", "Hope has asked whether…", "rory wants to do the trip times". Not "needs" ("rose
# needs pruning"), and only for a name the belief writes as one (`proper_words`).
_SPEAKS = (
    "says|said|asks|asked|tells|told|thinks|reckons|wants|wanted|mentioned|emailed|texted|"
    "messaged|rang|replied|suggested|suggests|promised|confirmed|insists|complained|agreed|"
    "sagt|fragt|meint|möchte|zegt|vraagt|dit|demande|veut|dice|pregunta|quiere|pide|chiede|"
    "vuole|diz|disse|pergunta|perguntou|quer|pediu|mówi|pyta|chce|prosi|säger|frågar|"
    "dicho|pedido|preguntado|demandé|gesagt|gefragt|detto|chiesto|dito|perguntado|gezegd|"
    "gevraagd|wrote|writes|called|pinged|"
    "zei|vroeg|wil|wilde|belde|mailde|appte|stuurde|schreef|"
    "sade|frågade|undrar|skrev|ringde|sier|spør|spurte|siger|spørger|spurgte|ringte|"
    "sagte|fragte|wollte|schrieb|schreibt|"
    "voulait|écrit|appelé|envoyé|dijo|preguntó|pidió|escribió|llamó|mandó|"
    "scrive|scritto|escreveu|ligou|mandou|falou|fala|avisou|"
    "powiedział|powiedziała|pytał|pytała|napisał|napisała|dzwonił|dzwoniła|chciał|chciała|"
    "sanoo|sanoi|kysyy|kysyi|haluaa|halusi|kirjoitti|soitti|"
    "diyor|dedi|soruyor|sordu|istiyor|yazdı|aradı|"
    "bilang|nanya|tanya|bertanya|minta|ngomong|"
    "anasema|alisema|anauliza|aliuliza|anataka|"
    "bola|boli|kaha|pucha|poocha|likha|"
    "forgot|forgets|vill|vil|sendte|sendt|pingade|skickade|mejlade|mailade|smsade|"
    "gestuur|no puede|no pudo|no viene|no vino|kann nicht|kommt nicht|peut pas|vient pas|"
    "non può|não pode|não vem|nie może|nie przyjdzie|kan inte|kan ikke|kan niet|komt niet|"
    "pisze|dzwoni|wysłał|wysłała|komt|kwam|belt|appt|mailt|"
    "pidiendo|diciendo|preguntando|pedindo|dizendo|perguntando|"
    "каже|казав|казала|сказав|сказала|пише|написав|написала|питає|питав|питала|хоче|просить|"
    "скинув|скинула|дзвонив|дзвонила|говорит|сказал|пишет|написал|спрашивает|спросил|спросила|"
    "хочет|просит|скинул|звонил|звонила|話|说|說|讲|講|问|問|"
    "can't|can’t|cannot|couldn't|couldn’t|"
    "no quiere|no quiso|não quer|non vuole|nie chce|will nicht|veut pas|wil niet|vill inte|"
    "vil ikke|rekla|rekel|rekao|pravi|vpraša|vprašala|pita|pitala|pitao|hoče|hoće|piše|"
    "pisala|poslala|poslal|poslao|zvala|zval|zvao|klicala|klical|"
    "λέει|λεει|είπε|ειπε|ρωτάει|ρωταει|ρώτησε|ρωτησε|θέλει|θελει|έγραψε|εγραψε"
)
# A pronoun for whom it is said, before the verb: "Rose m'dit que…", "Ana me pregunta…",
# "Luca mi chiede…"
_TO_ME = r"[mt]['’]|(?:me|te|lui|nous|mi|ti|gli|le|les)\s+"
# ... or "already", "still", "again", "now" in the languages users write, and the Slavic
# past's "je": "O Rui já mandou…", "vale ahora quiere…", "Kosova je rekla…"
_ALREADY = (
    "já|ya|déjà|schon|już|al|allerede|redan|ainda|todavía|encore|noch|ancora|già|znowu|"
    "ahora|agora|maintenant|jetzt|nu|teraz|adesso|ora|spet|je|tudi"
)
# ... and an auxiliary after it: "Montse me ha dicho", "Rose m'a dit", "Jonas hat gefragt"
_AUX = r"(?:ha|a|hat|heeft|har|è|está|estaba|estava)\s+"
# A name may take an article at a clause's start: "A Inês disse…", "o Diego perguntou…"
# "si": Tagalog's before a name; "ο", "η": Greek's
_ARTICLE = r"(?:(?:o|a|la|il|el|lo|der|die|si|ο|η)\s+)?"
_SPEAKER = re.compile(
    rf"(?:^|[.!?;:,]\s*|\b(?:and|but|so|because|cause|since|if|when|now)\s+)"
    rf"{_ARTICLE}(\w[\w'’-]*)\s+"
    rf"(?:(?:has|had|just|already|also|now|still|then|kindly|{_ALREADY})\s+){{0,2}}"
    rf"(?:{_TO_ME})?(?:{_AUX})?(?:{_SPEAKS})\b",
    re.IGNORECASE,
)
# ... and verbs only someone is the object of: "ask sunny if…", "ping kasia", "tell Marta",
# "my usual slot with Miriam"
_ADDRESSES = (  # the phrases first: "an email to pierre" is no email to "to"
    "email to|message to|note to|reply to|text to|letter to|write to|check with|talk to|"
    "speak to|loop in|up with|in with|meeting with|call with|slot with|sync with|1:1 with|"
    "lunch with|coffee with|session with|"
    "ask|asking|tell|telling|ping|pinging|email|emailing|message|messaging|text|texting|"
    "remind|reminding|thank|cc|"
    "email para|mensagem para|mail para|correo a|mensaje a|mail à|message à|écrire à|mail an|"
    "nachricht an|schreib|napisz do|mail do|wiadomość do|mail til|póst til|melding til|"
    "mail till|meddelande till|lettera a|messaggio a|scrivi a|mail aan|bericht aan|"
    "написати|напиши|написать|scrie-i lui|spune-i lui|zi-i lui|trimite-i lui|"
    # ... and Tagalog's "said by", "asked by", "according to", before the one who spoke
    "sabi ni|sabi daw ni|tanong ni|ayon kay|"
    # ... and Greek's "tell", "ask", "write" with "to the" joined before the name
    "πω στον|πω στη|πες στον|πες στη|ρώτα τον|ρωτα τον|ρώτα τη|ρωτα τη|γράψε στον|γραψε στον|"
    "γράψε στη|γραψε στη"
)
_ADDRESSEE = re.compile(rf"\b(?:{_ADDRESSES})\s+(\w[\w'’-]*)", re.IGNORECASE)
# The verbs' first words: a turn holding none (most) is not read for them ("bring it up
# with", "catch up with", "follow up with", "check in with" for the phrases "up with", "in with")
# (a negation's verb for those of several words: "no" is no word of speaking, "puede" is)
_FIRST_WORDS = {v.split(" ")[0] for v in _ADDRESSES.split("|")} | {
    v.split(" ")[-1] for v in _SPEAKS.split("|")
}
# ... and a name written as one that opens a clause and "just" did something: "Biscuit just
# nicked half a prawn", "lol Pixel just walked across my keyboard"
_ACTOR = re.compile(
    r"(?:^|[.!?;:,]\s*|\b(?:lol|omg|ugh|so|and)\s+)([A-Z][\w'’-]*)\s+just\s+[a-z]{3,}"
)
# ... or that did what only a living thing does, right after it or after "has", "just" or
# "again": "hugo ate half a bar of surf wax", "o kafka vomitou de novo", "Tokio hat gekotzt"
_LIVING = (
    "ate|eaten|eats|chewed|chews|swallowed|vomited|vomits|puked|pukes|threw|throwing|bit|"
    "bites|barked|barks|peed|pees|pooped|poops|licked|licks|escaped|limping|limps|sneezed|"
    "hissed|scratched|gefressen|frisst|fraß|gekotzt|kotzt|erbrochen|gebissen|beißt|bellt|comeu|"
    "vomitou|mordeu|latiu|fugiu|comió|vomitó|mordió|ladra|mangé|vomi|mordu|aboie|gegeten|"
    "kotst|blaft|spiste|bet|kastet|zjadł|zjadła|zwymiotował|zwymiotowała|ugryzł|ugryzła|"
    "yedi|kustu|ısırdı|söi|oksensi|puri|muntah|gigit|braakt|spuugt|ametapika|anatapika|"
    "coughs|coughing|coughed|tousse|hustet|tose|tosse|eat|eating|"
    "mancat|mâncat|vomitat|muscat|mușcat|latrat|lătrat|mangiato|vomitato|morso|abbaia|"
    "nagsuka|sumuka|kumain|kinain|kumagat|nangagat|tumahol|amekula|hajala|"
    "sežral|snědl|zvracel|zvrací|kousl|pokousal|"
    "fever|feber|fieber|koorts|fiebre|fièvre|febbre|febre|gorączkę|gorączka|horečku|kuumetta|"
    "ateş|demam|homa|температура|температуру|"
    "spytt|spydde|kräks|kräktes|kräkts|bruha|bruhal|bruhala|pojedel|pojedla|povraća|pojeo|pojela|"
    "overgegeven|gekotst|gespuugd|comido|mange|spist|lajal|laja|έφαγε|drapie|liże|vomiting|"
    "vomit|puking|limp|diarrhoea|diarrhea|κλαίει|κλαιει|ξέρασε|ξερασε|γαβγίζει|γαβγιζει|"
    "yemiyor|yemedi|yiyor|kusuyor|kusmuş|çiş|söönud|sõi|sööb|joob|oksendab|oksendas|drinkt|"
    "borða|borðar|ældi|ælir"
)
# the words that may stand between the name and the act: "has", "just", "again", and a refusal
_BEFORE_ACT = (
    "has|had|just|again|hat|ist|heeft|har|ha|a|já|ja|"
    "hasn't|hasnt|won't|wont|isn't|isnt|didn't|didnt"
)
# ... or, in languages that put a past participle last, an auxiliary and up to three words
# before it: "pixel hat aufs sofa gekotzt", "medo je spet neki pojedel"
_PERFECT = "hat|ist|heeft|har|je|a|ha"
_LIVING_ACT = re.compile(
    rf"(?:^|[.!?;:,]\s*|\b(?:lol|omg|ugh|so|and)\s+){_ARTICLE}([^\W\d_][\w'’-]*)\s+"
    rf"(?:(?:{_BEFORE_ACT})\s+){{0,2}}(?:(?:{_PERFECT})\s+(?:[^\W\d_][\w'’-]*\s+){{0,3}})?"
    rf"(?:{_LIVING})2?\b",
    re.IGNORECASE,
)
# ... or that opens a clause marked as its doer by Hindi's "ne" ("scala ne subah se 3 baar
# vomit kiya", "megha ne bola"), as French marks a subject ("Paloma ne peut pas")
_DOER = re.compile(r"(?:^|[.!?;:,]\s*)([^\W\d_][\w'’-]*)\s+ne\s+\w", re.IGNORECASE)
# ... and German's "will" (wants), read in a German turn only: "Beat will bis Freitag ein
# Statusupdate"; English's "will" says what a thing will do as readily
_WANTS = re.compile(rf"(?:^|[.!?;:,]\s*){_ARTICLE}([^\W\d_][\w'’-]*)\s+will\b", re.IGNORECASE)
_PERSONAL_VERBS = frozenset(
    _FIRST_WORDS - {"up", "in"}
    | {"bring", "catch", "follow", "just", "ne"}
    | set(_LIVING.split("|"))
)
SPEAKS = "someone speaking or spoken to"
# Where or what a name is from says which one: "Tracy from audio", "Rita on the front desk",
# "Kasumi from housekeeping"; one the belief does not say is another's. Not "Avro on
# orders.v2" nor "Lighthouse in Chrome": on or in says where only with "the" or "my"
_DESCRIBED = re.compile(
    r"\b([A-Z][a-z'’-]+) (?:from (?:(?:the|our|my|his|her) )?|(?:on|in) (?:the|our|my|his|her) )"
    r"([a-z][\w-]*)(?: ([a-z][\w-]*))?"
)
# ... and a name typed in lower case, one no dictionary lists, said to be from somewhere
# ("priya from data eng", "tomasz from the auditors"): in lower case only "from" says where
_DESCRIBED_LOWER = re.compile(
    r"\b([a-z][a-z'’-]+) from (?:(?:the|our|my|his|her) )?([a-z][\w-]*)(?: ([a-z][\w-]*))?"
)
DESCRIBED = "what it is from"
# A turn that opens with a name and its "'s" ("Hale's too mopey in chapter 9", "Guy's off next
# week", "Biscuit's T4 came back low"): its subject, the user's own, whatever else the word is
_POSSESSIVE = re.compile(r"([^\W\d_][\w-]*)(?:'s|’s)(?!\w)")
OPENS_OWN = "the turn opens with its 's"
# Words of address written before a person's name ("mr muller emailed", "Frau Brandt", "pan
# Nowak", "don Aurelio"), each with whom it addresses: a man, a woman, or either by their
# degree. What follows is someone, whatever else the word is, and the belief's one only when
# its own text addresses them so too ("pan Müller" for "mr muller"; "Frau Huber" is not
# "Herr Huber", nor "Hollins Farm" a "Dr Hollins").
_ADDRESSED = {
    "man": "mr mister sir herr pan sr señor don monsieur signor sig bapak tuan mzee bwana",
    "woman": "mrs ms miss dame frau pani sra srta señora doña dona mme mlle madame signora ibu fru",
    "doctor": "dr dott",
    "professor": "prof",
}
TITLES = {title: whom for whom, titles in _ADDRESSED.items() for title in titles.split()}
TITLED = "a title before it"


def descriptions(terms: QueryTerms) -> dict[str, frozenset[str]]:
    """The turn's names written with a capital, or in lower case one no dictionary lists, and
    what it says they are from (`_DESCRIBED`, `_DESCRIBED_LOWER`) -> the stems of those words;
    not a day, a month or a stop word ("Galloway on Saturday", "Saltwick in a February gale"
    say nothing of which one)."""
    cleaned = terms.cleaned
    said = [tuple(match) for match in _DESCRIBED.findall(cleaned)]
    if " from " in cleaned:
        said.extend(_lower_described(cleaned))
    found: dict[str, set[str]] = {}
    for name, *whats in said:
        stems = {
            stem(w) for w in whats if is_telling(w) and w not in CALENDAR and not is_general(w)
        }
        if stems:
            found.setdefault(normalize_name(name), set()).update(stems)
    return {name: frozenset(whats) for name, whats in found.items()}


def _lower_described(cleaned: str) -> list[tuple[str, ...]]:
    """The lower-case names of `_DESCRIBED_LOWER` and their words of three letters or more:
    not a dictionary word's plural ("all the raws from the ceremony"), nor a grade ("mienkie
    from gr 4")."""
    return [
        (name, *(w for w in whats if len(w) > 2))
        for name, *whats in _DESCRIBED_LOWER.findall(cleaned)
        if not in_dictionary(name) and not in_dictionary(name.removesuffix("s"))
    ]


def titled(terms: QueryTerms) -> dict[str, frozenset[str]]:
    """The turn's words right after a title (`TITLES`: "mr muller", "Frau Brandt") -> whom
    the titles address."""
    seq = terms.sequence
    if TITLES.keys().isdisjoint(seq):
        return {}
    found: dict[str, set[str]] = {}
    for before, word in pairwise(seq):
        if before in TITLES and word not in TITLES:
            found.setdefault(word, set()).add(TITLES[before])
    return {word: frozenset(whom) for word, whom in found.items()}


def addressed(doc: IndexedDoc) -> frozenset[str]:
    """Whom the titles of the belief's own text address (`TITLES`)."""
    return frozenset(TITLES[w] for w in _WORD.findall(_own_text(doc)) if w in TITLES)


def kin_of(terms: QueryTerms, word: str) -> frozenset[str]:
    """Stems of the words of kinship right before `word` ("sister" for "my sister Priya"): a
    belief about another Priya does not say "sister"."""
    seq = terms.sequence
    return frozenset(stem(b) for b, w in pairwise(seq) if w == word and b in BEFORE_NAMES)


def possessive_opener(terms: QueryTerms) -> str:
    """The turn's first word with its "'s" (`_POSSESSIVE`), of three letters or more, however
    written ("snoek's been in the litter box", "tank's back, new lump L flank", "clive's
    looking sluggish"); "" otherwise. It counts for a belief that writes it as a name or is
    about it (`own_text.subject`)."""
    first = terms.cleaned[:64].split(maxsplit=1)
    if not first:
        return ""
    found = _POSSESSIVE.fullmatch(first[0].rstrip(",.:;!?"))
    if found is None or len(found.group(1)) < 3:
        return ""
    return normalize_name(found.group(1))


# Verbs whose subject stands right before them, as a turn says them of someone or something
# it opens with ("nora got a 168", "ida hat 39,4", "zośka ma w piątek próbny", "sambon vill
# kolla", "paloma tiene excursion"): "has", "is", "was", "wants", "needs" in the languages
# users write, or an adverb a subject takes before its verb ("zbyszek znowu przysłał faktury",
# "zala bi šla jutri z mano")
_SUBJECT_VERB_WORDS = (
    "has|had|is|was|wants|needs|got|hasnt|isnt|wasnt|didnt|doesnt|"
    "hat|hatte|ist|war|will|muss|kann|soll|braucht|möchte|"
    "heeft|wil|moet|kan|zal|"
    "har|hadde|havde|er|var|vil|skal|är|vill|ska|måste|trenger|trænger|behöver|"
    "ma|miał|miała|jest|był|była|chce|musi|może|potrzebuje|"
    "má|je|byl|byla|musí|může|ima|hoče|mora|"
    "est|était|veut|doit|peut|avait|"
    "tiene|tenía|está|estaba|es|era|quiere|necesita|debe|puede|"
    "tem|tinha|estava|é|quer|precisa|pode|deve|"
    "ha|aveva|è|vuole|può|"
    "keeps|kept|still|just|always|never|znowu|wciąż|bi|schon|immer|noch|ya|já|déjà|ancora|già|"
    "weer|nog|alltid|fortfarande|tá|ta|είναι|ειναι|έχει|εχει"
)
_SUBJECT_VERBS = frozenset(_SUBJECT_VERB_WORDS.split("|"))
# The articles a name takes in Portuguese, Catalan, Bavarian and Austrian German, colloquial
# Italian and Spanish, and Greek: "o trovão tá mancando", "da Strudel hat a Zecke". French
# gives a name none: there "la lune est pleine" is the moon; nor does standard German, whose
# "der" and "die" open any noun ("der Zustand ist schlecht").
_NAME_ARTICLE_WORDS = "o|a|da|el|la|il|lo|en|na|ο|η"
_NAME_ARTICLES = frozenset(_NAME_ARTICLE_WORDS.split("|"))
_NO_NAME_ARTICLES = frozenset(["fr"])


def subject_of_verb(terms: QueryTerms, word: str) -> bool:
    """Whether `word`, of three letters or more, opens the turn (after the article some
    languages give a name) as the subject of one of `_SUBJECT_VERBS` right after it: one of
    the user's own, whatever else the word is. A famous namesake opens a turn with no such
    verb ("jonah hill movies")."""
    seq = terms.sequence
    at = int(
        bool(seq) and seq[0] in _NAME_ARTICLES and _NO_NAME_ARTICLES.isdisjoint(terms.languages)
    )
    return (
        len(seq) > at + 2 and seq[at] == word and len(word) >= 3 and seq[at + 1] in _SUBJECT_VERBS
    )


# Words a belief's own text calls an animal by: the pet a turn's living act may be about
_ANIMAL_WORDS = (
    "dog|dogs|cat|cats|puppy|kitten|pet|beagle|terrier|retriever|spaniel|collie|labrador|lab|"
    "hound|tabby|rabbit|hamster|parrot|horse|pony|tortoise|budgie|ferret|kelpie|whippet|"
    "greyhound|dachshund|poodle|husky|mutt|cockapoo|cavapoo|moggy|bunny|kitty"
)
_ANIMALS = frozenset(_ANIMAL_WORDS.split("|"))
# ... and of `_LIVING`, those that say so anywhere in a turn: not the ones of other senses
# away from a name ("a bit of", "I bet", "threw a party", "eating into our margins", "escaped
# quotes", a puri, a muscat); "threw up" and "throwing up" still do
_OTHER_SENSES = "bit|bet|threw|throwing|escaped|eat|eating|eats|puri|kastet|muscat|morso"
_LIVING_ANYWHERE = frozenset(_LIVING.split("|")) - frozenset(_OTHER_SENSES.split("|"))
_UP = frozenset(["threw", "throwing", "throw", "throws"])
LIVES = "a living thing's act in the turn"


def living_turn(terms: QueryTerms) -> bool:
    """Whether the turn says anywhere that something did what only a living thing does
    ("hes been throwing up since lunch", "tofu mange pu depuis hier")."""
    seq = terms.sequence
    if not _LIVING_ANYWHERE.isdisjoint(seq):
        return True
    return any(a in _UP and b == "up" for a, b in pairwise(seq))


def animal(doc: IndexedDoc) -> bool:
    """Whether the belief's own text calls what it is about an animal."""
    return not _ANIMALS.isdisjoint(_WORD.findall(_own_text(doc)))


def speakers(terms: QueryTerms) -> frozenset[str]:
    """The turn's words that open a clause as someone saying or wanting something
    (`_SPEAKER`: "Rose says…", "Hope has asked…", "O Rui já mandou…", "mario pisze…", "оля
    скинула…", "…, Marco wants to leave it"; not "my gut says" nor "landlord in Lisbon
    wants"), that someone asks or tells (`_ADDRESSEE`: "ask sunny if…"), that just did
    something (`_ACTOR`: "Biscuit just nicked a prawn"), did what only a living thing does
    (`_LIVING_ACT`: "puma ate half a ski glove", "covrigul a mancat", "si kape nagsuka", "pixel
    hasn't eaten", "pixel hat aufs sofa gekotzt"), is marked as the doer by Hindi's "ne"
    (`_DOER`) or, in a German turn, wants something (`_WANTS`: "Beat will…")."""
    german = "de" in terms.languages and "will" in terms.sequence
    if _PERSONAL_VERBS.isdisjoint(terms.sequence) and not german:
        return frozenset()
    text = terms.cleaned
    patterns = (_SPEAKER, _ADDRESSEE, _ACTOR, _LIVING_ACT, _DOER, *([_WANTS] if german else []))
    return frozenset(
        normalize_name(m.group(1)) for pattern in patterns for m in pattern.finditer(text)
    )


def own_family(terms: QueryTerms) -> frozenset[str]:
    """The relations the turn is about, said as the user's own (`said_kin`: "my sister's
    wedding", "my dad (78) is on Eliquis", "ma fille a besoin d'aide en math"): a belief that
    says nothing of them is not what the turn asks about. Not a relation the turn cites as a
    source ("my neighbour says…"), nor any in a turn that speaks for a household ("we", "our",
    "notre"), nor "my kids", what teachers and coaches call their class."""
    seq = terms.sequence
    if not HOUSEHOLD.isdisjoint(seq):  # the user speaks for a household: "our Plex server"
        return frozenset()
    return frozenset(
        kin_said(word)
        for i, word in said_kin(seq)
        if word != "kids" and SOURCES.isdisjoint(seq[i + 1 : i + 5])
    )


def owned_words(terms: QueryTerms) -> frozenset[str]:
    """The turn's words right after "my" that name no relation ("can my son use my Steam
    Deck?"), past a number ("my 3/16 Whitworth spanner"): the user's own things, whoever else
    the turn is about."""
    seq = terms.sequence
    out: set[str] = set()
    for i, before in enumerate(seq[:-1]):
        if before == "my":
            j = i + 1
            while j < len(seq) - 1 and seq[j][:1].isdigit():
                j += 1
            if seq[j] not in KINSHIP:
                out.add(seq[j])
    return frozenset(out)


# The speaker's team: "what are we using sloth for again", "do we still run Nomad?"
_TEAM = frozenset(["we", "we're", "we've"])
_USES = frozenset(["use", "using", "used", "run", "running"])
TEAM_USES = "what the user's team uses"


def team_tools(terms: QueryTerms) -> frozenset[str]:
    """The turn's words right after a word of using in a turn where the user speaks for a team
    ("what are we using sloth for again", "client asked if we use MMA"): what the team
    uses is its own, however everyday its name."""
    seq = terms.sequence
    if _TEAM.isdisjoint(seq):
        return frozenset()
    return frozenset(word for before, word in pairwise(seq) if before in _USES)


_KIN_WORD = re.compile(r"[a-zé]+(?:-in-law)?")
_WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")


def kin_words(doc: IndexedDoc) -> frozenset[str]:
    """The relations the belief's own text names, each by one name (`kin_said`): "her
    mother's flat" -> "mum"."""
    text = _own_text(doc)
    english = (
        k
        for w in _KIN_WORD.findall(text)
        if (k := w if w in KINSHIP else w.removesuffix("s")) in KINSHIP
    )
    elsewhere = (w for _, w in said_kin(_WORD.findall(text)))  # "mi hija", "ma fille"
    return frozenset(map(kin_said, (*english, *elsewhere)))


def _own_text(doc: IndexedDoc) -> str:
    """The belief's content, `why_it_matters` and aliases, lower-cased: where it says who its
    people are."""
    belief = doc.belief
    return " ".join([belief.content, belief.why_it_matters or "", *belief.aliases]).lower()
