"""Frozen weights of the relevance model (`beliefs.search.relevance`).

Fitted by `python bench/fit_relevance.py --l2 1.0 --write` on 2026-12-05, from 192 candidates of the training corpora
(blind-spot, held-out A to F). Do not edit by hand: fit again.
"""

WEIGHTS = {
    "bias": -1.621227,
    "bm25": 0.431545,
    "phrase": 0.383517,
    "canonical": -0.654529,
    "rare": 0.338054,
    "rare_inexact": -0.517454,
    "everyday_only": -0.637825,
    "general": -0.624791,
    "rarity": 1.348250,
    "name_word_only": 0.331271,
    "rejected_only": 0.561912,
    "inexact_only": 0.811639,
    "numeric": 0.000000,
    "marked": 1.062630,
    "coded": -0.518588,
    "proper": -0.246109,
    "clauses": 1.333203,
    "corroborating_rare": 0.946760,
    "corroborating_common": 1.439016,
    "corroborating_near": 1.677023,
    "other_script": 0.612425,
    "everyday_marked": 1.710489,
    "everyday_coded": 0.014853,
    "everyday_proper": -0.366587,
    "everyday_corroborated": 0.472076,
    "everyday_other_script": 0.139149,
    "shared": -0.000001,
    "trust": -0.000001,
    "turn_length": -0.318669,
}
THRESHOLD = -0.137942
