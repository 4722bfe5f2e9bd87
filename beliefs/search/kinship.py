"""Words of kinship: who someone is to the user, in English and in the other languages users
write in ("my sister", "ma fille", "meine Frau", "mi hijo", "minha mãe", "mia moglie",
"mijn zoon", "moja mama", "min fru"), each relation by one English name (`kin_said`), so a
turn's "mamá" and a belief's "mother" are the same relation."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import pairwise


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Who someone is to the user: "my sister Priya" is no colleague Priya
KINSHIP = _words(
    """sister brother niece nephew cousin aunt auntie uncle mum mom mother dad father son
    daughter wife husband partner boyfriend girlfriend friend neighbour neighbor grandma
    grandmother grandpa grandfather grandson granddaughter stepson stepdaughter kid kids child
    children baby toddler grandkids grandchildren parents family in-laws stepmother stepfather
    stepbrother stepsister brother-in-law sister-in-law mother-in-law father-in-law son-in-law
    daughter-in-law godson goddaughter godmother godfather fiancé fiancée fiance fiancee hubby
    bf gf mate flatmate roommate housemate"""
)

# ... and who someone is to the user at work or about the house, said before a name the same
# way: "coworker tasha" is no sister Tasha. Not a relation the user says is theirs (`said_kin`)
ROLES = _words(
    """coworker co-worker colleague boss manager client customer patient student pupil teacher
    tutor supervisor intern landlord landlady tenant coach trainer physio recruiter"""
)
BEFORE_NAMES = KINSHIP | ROLES

# One relation said several ways: the belief's "mother" is the turn's "mum"
_SAME_KIN = {
    "mom": "mum",
    "mother": "mum",
    "mam": "mum",
    "mama": "mum",
    "father": "dad",
    "papa": "dad",
    "husband": "partner",
    "wife": "partner",
    "hubby": "partner",
    "spouse": "partner",
    "boyfriend": "partner",
    "girlfriend": "partner",
    "bf": "partner",
    "gf": "partner",
    "fiance": "partner",
    "fiancee": "partner",
    "fiancé": "partner",
    "fiancée": "partner",
    "grandmother": "grandma",
    "grandfather": "grandpa",
    "neighbor": "neighbour",
    "auntie": "aunt",
    "friend": "mate",
    "flatmate": "mate",
    "roommate": "mate",
    "housemate": "mate",
    "kids": "kid",
    "child": "kid",
    "children": "kid",
    "toddler": "kid",
    "grandchildren": "grandkids",
}


def _relations(table: str) -> dict[str, str]:
    """Lines of a relation, a colon and its words (a line without a colon goes on with the
    last relation's words) -> {word: relation}."""
    out: dict[str, str] = {}
    relation = ""
    for line in table.strip().splitlines():
        if ":" in line:
            relation, line = (part.strip() for part in line.split(":"))
        out.update((word, relation) for word in line.split())
    return out


# Relations in French, German, Spanish, Portuguese, Italian, Dutch, Polish, Swedish, Greek,
# Tagalog, Hindi and Swahili, counted only beside a word for "my" of those languages
# (`_MY_ELSEWHERE`, `_MY_AFTER`): alone, "kind", "man", "brat" or "son" are other words. Words
# for several relations (Italian "nipote", Dutch "neef", "mama" an uncle in Hindi, "dada" a
# sister in Swahili) are left out, and so are those said of anyone ("bhai", "didi").
_ELSEWHERE = _relations(
    """
    daughter: fille tochter hija filha figlia dochter córka dotter
    son: fils sohn hijo filho figlio zoon syn son
    partner: femme mari conjoint conjointe chum blonde copain copine frau mann esposa esposo
        marido mujer novia novio mulher namorada namorado moglie marito fidanzata fidanzato
        vrouw man żona mąż dziewczyna chłopak fru sambo
    mum: mère maman mutter mama madre mamá mãe mamma moeder matka
    dad: père papa vater padre papá pai papà vader tata ojciec pappa
    sister: sœur soeur schwester hermana irmã sorella zus zusje siostra syster
    brother: frère bruder hermano irmão fratello broer brat bror
    kid: enfant enfants kind kinder hijos filhos figli kinderen dziecko dzieci barn bébé bebé
    grandma: grand-mère mamie oma abuela avó nonna babcia mormor farmor
    grandpa: grand-père papi opa abuelo avô nonno dziadek morfar farfar
    grandson: petit-fils enkel nieto neto
    granddaughter: petite-fille enkelin nieta neta
    nephew: neveu neffe sobrino sobrinho siostrzeniec bratanek
    niece: nièce nichte sobrina sobrinha siostrzenica bratanica
    cousin: cousine cousin primo prima cugino cugina kuzyn kuzynka
    aunt: tante tía tia zia ciocia
    uncle: oncle onkel tío tio zio oom wujek
    neighbour: voisin voisine nachbar nachbarin vecino vecina vizinho vizinha vicino vicina
        buurman buurvrouw sąsiad sąsiadka
    mate: ami amie amigo amiga amico amica
    parents: eltern padres pais genitori ouders rodzice föräldrar
    mother-in-law: belle-mère schwiegermutter suegra sogra suocera schoonmoeder teściowa
    father-in-law: beau-père schwiegervater suegro sogro suocero schoonvader teść
    family: famille familie familia família famiglia rodzina
    daughter: κόρη beti anak
    son: γιος beta
    partner: σύζυγος άντρας γυναίκα asawa jowa pati patni mke mume
    mum: μαμά μητέρα nanay inay mummy mummi maa ammi
    dad: μπαμπάς πατέρας tatay itay papa pappa abbu baba
    sister: αδερφή αδελφή ate behen
    brother: αδερφός αδελφός kuya kaka
    kid: παιδί παιδιά bacche mtoto watoto
    grandma: γιαγιά lola nani dadi
    grandpa: παππούς lolo babu
    nephew: ανιψιός bhatija bhanja
    niece: ανιψιά bhatiji bhanji
    cousin: ξάδερφος ξαδέρφη ξάδελφος ξαδέλφη pinsan
    aunt: θεία tita mausi chachi bua shangazi
    uncle: θείος tito chacha mjomba
    mate: φίλη φίλος kaibigan dost rafiki
    """
)
# "my" after the relation, with that language's relations: Greek "η ανιψιά μου", Tagalog
# "tita ko", Swahili "mama yangu" (Hindi "bhai ko" is "to brother")
_GREEK = _words(
    """κόρη γιος σύζυγος άντρας γυναίκα μαμά μητέρα μπαμπάς πατέρας αδερφή αδελφή αδερφός
    αδελφός παιδί παιδιά γιαγιά παππούς ανιψιός ανιψιά ξάδερφος ξαδέρφη ξάδελφος ξαδέλφη θεία
    θείος φίλη φίλος"""
)
_TAGALOG = _words("anak asawa jowa nanay inay tatay itay ate kuya lola lolo pinsan tita tito")
_SWAHILI = _words("mke mume baba kaka mtoto watoto babu shangazi mjomba rafiki")
_MY_AFTER = {"μου": _GREEK, "ko": _TAGALOG, "yangu": _SWAHILI, "wangu": _SWAHILI}
# "my" in those languages, and in Hindi and Urdu written in Latin letters ("meri beti")
_MY_ELSEWHERE = _words(
    """ma mon mes mein meine meinen meinem meiner meines mi mis meu minha meus minhas mio mia
    miei mie mijn mój moja moje moi mojej mojego mojemu moim moją min mitt mina mera meri mere"""
)
# A turn that speaks for a household ("we", "our"): its relations are not the user's alone
HOUSEHOLD = _words(
    """our we nous notre nos wir unser unsere unseren unserem unserer nosotros nosotras nuestro
    nuestra nuestros nuestras nós nosso nossa nossos nossas noi nostro nostra nostri nostre wij
    ons onze nasz nasza nasze naszego naszej vi vår vårt våra"""
)
# Words by which a relation is a source, not the subject: "my daughter thinks I should switch
# to Family Tree Maker", "my neighbour says the bags with móin are grand", "mi hermana dice
# que…"
SOURCES = _words(
    """says said thinks thought reckons swears saying told suggested suggests recommends
    recommended uses used mentioned dit disait pense conseille trouve sagt meint findet
    empfiehlt dice dijo piensa recomienda diz disse acha recomenda pensa consiglia
    zegt vindt raadt mówi powiedział powiedziała uważa säger tycker"""
)


def kin_said(word: str) -> str:
    """One name for a relation however it is said ("mom", "mother", "mamá" -> "mum")."""
    return _SAME_KIN.get(word) or _ELSEWHERE.get(word) or word


def said_kin(words: Sequence[str]) -> Iterator[tuple[int, str]]:
    """Each word of `words` said as a relation of the user's ("my sister", "ma fille", "mein
    Sohn", "η ανιψιά μου"), with its place: a word of KINSHIP after "my", or a relation of
    another language after its word for "my" or before it."""
    for i, (before, word) in enumerate(pairwise(words)):
        if (before == "my" and word in KINSHIP) or (before in _MY_ELSEWHERE and word in _ELSEWHERE):
            yield i + 1, word
        elif before in _MY_AFTER.get(word, ()):
            yield i, before


# Languages that say a relation of one's own without "my" ("mama kaže…", "żona ma urodziny"):
# the Slavic and Baltic languages, Finnish, Hungarian and Turkish
_BARE_OWN = frozenset(
    ["pl", "cs", "sk", "sl", "sh", "ru", "uk", "bg", "lt", "lv", "fi", "hu", "tr"]
)


def bare_relation(word: str, languages: frozenset[str]) -> bool:
    """Whether `word` is a relation of another language (`_ELSEWHERE`) in a turn written in a
    language that says one's own relations without "my" (`_BARE_OWN`: "żona ma urodziny" is
    the user's wife's birthday)."""
    return word in _ELSEWHERE and not languages.isdisjoint(_BARE_OWN)
