"""The pre-check: turns that cannot hold a belief are settled without a model call.

Only two kinds qualify, both cheap to tell apart and safe: a turn in which the user wrote no
words at all (an agent's tool round, an empty message), and a short acknowledgement made only
of thanks, greetings and laughter (with "ok", "great" and the like around them) in any of a few
languages. Anything else, however small, goes to the model: a lone "ok" or "yes" may accept
what the assistant proposed the turn before, so assent without thanks or goodbye is read.
"""

from __future__ import annotations

import re

from beliefs.context.render import strip_injected
from extractor.turn import Turn

MAX_ACK_WORDS = 12
SKIPPED = "skipped by the pre-check"  # what a skipped job keeps as its raw output, with why
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# Words of acknowledgement, greeting, thanks and laughter; every word of a skipped turn is one.
ACK_WORDS = _words(
    """
    thanks thank you thx ty tysm cheers ok okay k kk cool great perfect nice awesome good fine
    got it that that's thats works worked sounds lol haha hahaha hehe bye see later welcome much
    so very all right alright super top wow hi hello hey morning night evening again a lot for
    the help helpful many
    danke dank vielen sehr gut alles klar tschüss prima das war hilfreich schön
    merci beaucoup parfait d'accord bien génial salut bonne nuit soirée
    gracias muchas vale perfecto genial hasta luego bueno
    grazie mille perfetto ciao va bene
    je bedankt graag
    obrigado obrigada valeu
    ありがとう ありがとうございます どうも 了解
    """
)

# Of those, the ones that close an exchange rather than assent to something.
CLOSING_WORDS = _words(
    """
    thanks thank thx ty tysm cheers lol haha hahaha hehe bye hi hello hey danke dank vielen
    tschüss merci salut gracias grazie ciao bedankt obrigado obrigada valeu ありがとう
    ありがとうございます どうも
    """
)


def nothing_to_remember(turn: Turn) -> str | None:
    """Why the turn cannot hold a belief (it is skipped), or None when the model must read it."""
    user = strip_injected(turn.user_message)
    words = [w.casefold() for w in _WORD.findall(user)]
    if not words and not re.search(r"\d", user):
        return "the user wrote no words" + (" (tool calls only)" if turn.tool_calls else "")
    if len(words) > MAX_ACK_WORDS or re.search(r"\d", user):
        return None
    if "?" in user:
        return None
    if all(w in ACK_WORDS for w in words) and any(w in CLOSING_WORDS for w in words):
        return "an acknowledgement"
    return None
