"""Turns too short to say another sense: in a few words a topic, a short code or a rare name
is the user's own ("set up nightly backups", "jest config", "bump django to 5.1"), where a
longer turn has room to mean another thing ("how to keep a badger out of the vegetable
garden", "is loki season 2 worth watching")."""

from __future__ import annotations

import re

from beliefs.text.lexicon import everyday_in, is_common, is_general, zipf
from beliefs.text.query import QueryTerms, is_telling

# A turn of this many telling words or fewer has no room to say another sense: "set up
# nightly backups" is about the user's backups.
SHORT = 3
# ... but a topic counts by it only in a turn of this many words or fewer: "how to keep a badger
# out of the vegetable garden" has few telling words, and room to say another sense
SHORT_TOPIC = 6
# ... and a name rarer than SHORT_NAMED_ZIPF, in a turn of this many words or fewer, is the
# user's own: "bump django to 5.1", "jest config" (not "is loki season 2 worth watching").
SHORT_NAMED = 4
# Rarer than about once per 300,000 words: a tool's name ("jest", "django", "celery"), not a
# word of every day ("the rust on the old chain", "spring break plans?").
SHORT_NAMED_ZIPF = 3.5
# Kana and Han: Japanese and Chinese put no space between words, so one of the turn's words in
# them is a run of several (about two characters a word).
_UNSPACED = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff]")


def short_turn(turn: dict[str, str]) -> bool:
    """Whether the turn's telling words (`telling_words`) are SHORT words or fewer, too few to
    say another sense: a run of kana or Han counts a word for every two characters
    ("公司要做 CI 视觉识别手册" is no three-word turn)."""
    length = 0
    for word in turn.values():
        unspaced = 0 if word.isascii() else len(_UNSPACED.findall(word))
        length += max(1, (unspaced + 1) // 2)
    return length <= SHORT


def short_named(terms: QueryTerms, token: str) -> bool:
    """Whether `token`, a name rarer than SHORT_NAMED_ZIPF in English and no everyday word of
    the turn's language, stands alone or beside a word of code or a version in a turn of
    SHORT_NAMED words or fewer: a tool asked about in a few words is the user's own ("jest
    config", "bump django to 5.1", "sloth?"); "obsessed with Loki" and "loki season 2" hold
    only everyday words, "der Zustand ist schlecht" is German for a bad state."""
    words = terms.sequence
    if len(words) > SHORT_NAMED or zipf(token) >= SHORT_NAMED_ZIPF:
        return False
    if everyday_in(token, terms.languages):
        return False
    return all(w == token for w in words) or any(_technical(w) for w in words if w != token)


def _technical(word: str) -> bool:
    """A word of code or a version: no everyday English word, stop or function word, nor a
    bare number ("config", "devtools", "5.1"; not "season", "2")."""
    return is_telling(word) and not word.isdigit() and not is_common(word) and not is_general(word)
