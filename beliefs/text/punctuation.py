"""The punctuation typed around a turn's words: what a word is read without, and what ends a
name of several words."""

from __future__ import annotations

LEAD_PUNCT = "\"'`“”‘’«»([{<*_~|—–-…"
TRAIL_PUNCT = "\"'`“”‘’«»()]}>,.;:!?*_~|—–-…؟،؛"  # Arabic's question mark, comma, semicolon
# what ends a name of several capitalised words: "ask Maya, Tomás and Gary" names three
RUN_BREAKS = frozenset(',;:.!?)]}—–"”')
