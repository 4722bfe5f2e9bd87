"""Whether a turn asks about changing to another thing: the sign that a rejected alternative it
names is the user's rejected one ("iris worth switching to yet?", "bring prettier back just
for markdown?", "why don't we just use bloc", "Trados に乗り換えた方がいい？").

A proposal to take an option up asks the same ("tempted to just bung apivar strips in",
"lely guy stopped by again, worth a look", "skal vi ikke bare bruge miscanthus", "uk na lang
kaya"). A belief that rejected an option is what such a turn needs however everyday the
option's name ("gin", "iris", "phoenix", "points"): the turn weighs the option against the
user's choice. A price weighed ("a 4090 for my rig, worth it?") proposes nothing.
The words are those of the languages users write to the assistant in; Japanese, Chinese and
Korean are matched inside the text, which puts no space between words.
"""

from __future__ import annotations

import re
from functools import lru_cache

# "switch to", "move everything to", "migrate", "reconsider", "go back to", "instead", "just
# use", "why not", "worth switching", "give it another go", "after all", "what if we", and the
# same in Spanish, Portuguese, French, Italian, German, Dutch, Polish, Swedish, Norwegian,
# Danish, Slovenian, Czech, Serbian, Hungarian, Ukrainian, Russian, Greek, Indonesian, Tagalog,
# Turkish and Vietnamese ("to" joined to its article:
# "passare alla", "pasar al", "passer au"; "instead of": "invece di", "en vez de", "statt")
_CHANGE = re.compile(
    r"\b(?:switch(?:ing|ed)?|migrat\w*|reconsider\w*|revisit\w*|instead|go(?:ing)? back to"
    r"|bring \w+ back|just use|why (?:not|don'?t (?:we|you|i) (?:just )?use)"
    r"|(?:mov(?:e|ing)|port(?:ing)?) (?:\w+ )?(?:over )?to|worth (?:switching|moving|trying)"
    r"|another (?:go|try|look)|give \w+ a (?:go|try)|after all|what if we|cambiar\w*"
    r"|me paso al?|pasar(?:nos|me)? al?|al final|afinal|finalement|et si on|alla fine"
    r"|volver al?|mudar\w*|trocar\w*|voltar ao?|passer (?:à|a|au|aux|sur)|changer|revenir"
    r"|cambiare|passare a(?:l|lla|llo|i|gli|lle)?|invece|al posto d\w*|en (?:vez|lugar) de"
    r"|au lieu d\w*|em vez d\w*|(?:an)?statt\w*|zamiast|in plaats van|namesto|istället för"
    r"|i stedet for|yerine|thay vì|m[ií]sto|nam[ií]sto|umesto|helyett|váltani|átállni"
    r"|замість|вместо|перейти на|переїхати на|переехать на|αντί για"
    r"|wechseln|umsteigen|zurück zu|overstappen|overschakelen|terug naar|przej\w* na"
    r"|zmieni\w*|byta till|gå över till|bytte til|skifte til|preiti na|ganti ke|pindah ke"
    r"|lumipat|mag-switch|geçs\w+|geçel\w+|geçmeli\w*|đổi|chuyển sang"
    # a proposal to take up an option: "should we just", "worth a look", "give X another
    # shot", "tempted to", "a może jednak", "doch lieber", "skal vi ikke bare", "na lang"
    r"|should(?:n'?t)? (?:i|we) (?:just|not)|(?:i|we) (?:could|might|may) (?:just|as well)"
    r"|might just|just (?:use|go with|get|order|take|move|build|keep|mail|buy|ship|stick"
    r"|chuck|dump)"
    r"|can (?:i|we|they) just|worth (?:a (?:look|shot|try|go)|grabbing|getting|doing)"
    r"|any good|another shot|tempt\w*|thinking (?:of|about) (?:\w+ing|going|moving)"
    r"|what about|how about|rethink\w*|do (?:i|we) even need|shoulda|are we mad"
    r"|doch lieber|lieber doch|lohnt (?:sich|es)|sollten wir|sollen wir|überleg\w*"
    r"|g(?:e)?scheiter|(?:ned|nicht) doch"
    r"|a może|może jednak|czy warto|czemu nie|toch maar|zullen we|ipv|de moeite"
    r"|skal vi ikke|bare bruge|ska vi|värt att|verdt å|værd at|ça vaut le coup|et si"
    r"|refaire un essai|vale la pena|vale a pena|conviene|y si|e se|no sería mejor"
    r"|na lang|ek baar|bu seferlik|olmaz mı|kannattaako|pitäisikö|megérné|hay là"
    r"|mending|може таки|може б|τελικά|אולי|تستاهل|იქნებ)\b",
    re.IGNORECASE,
)
# The same words for an ASCII text lower-cased: read so, it matches where the case-blind
# pattern matches the text as typed (the words are all lower case, and ASCII has no letter
# whose case folds elsewhere), about four times as fast.
_CHANGE_LOWER = re.compile(_CHANGE.pattern)
_CHANGE_UNSPACED = (
    "乗り換え",
    "切り替え",
    "変えた",
    "戻す",
    "戻そう",
    "換成",
    "改用",
    "重新考慮",
    "갈아타",
    "바꿀",
    "바꾸",
    "그냥",
    "낫지 않",
    "나을까",
    "ほうがいい",
    "方がいい",
    "方がよ",
    "ほうがよ",
    "にしようかな",
)


@lru_cache(maxsize=1024)  # asked once a turn, for a rejected alternative nothing else vouched for
def asks_to_switch(text: str) -> bool:
    """Whether `text` (a turn's cleaned text) asks about changing to another thing."""
    if text.isascii():
        return _CHANGE_LOWER.search(text.lower()) is not None
    if _CHANGE.search(text) is not None:
        return True
    return any(word in text for word in _CHANGE_UNSPACED)
