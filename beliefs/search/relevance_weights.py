"""Frozen weights of the relevance model (`beliefs.search.relevance`).

Fitted by `python bench/fit_relevance.py --l2 1.0 --beta 1.0 --write`
on 2026-12-05, from 290 candidates of the training corpora
(blind-spot, held-out A, held-out B, held-out C, held-out D, held-out E, held-out F, held-out
ZL, held-out ZM). Do not edit by hand: fit again.
"""

WEIGHTS = {
    "bias": 0.734609,
    "bm25": -0.065889,
    "phrase": 0.088797,
    "canonical": -0.470027,
    "rare": -0.015361,
    "rare_inexact": -0.624895,
    "everyday_only": -0.873847,
    "general": -0.155703,
    "rarity": 1.677371,
    "name_word_only": 0.394494,
    "rejected_only": 0.932958,
    "inexact_only": 0.262208,
    "numeric": 0.163607,
    "marked": 0.642502,
    "coded": -0.111046,
    "proper": -0.868113,
    "clauses": 1.049110,
    "corroborating_rare": 1.202846,
    "corroborating_common": 1.220580,
    "corroborating_near": 0.714655,
    "other_script": 0.457052,
    "everyday_marked": 1.744813,
    "everyday_coded": 0.013231,
    "everyday_proper": 0.164225,
    "everyday_corroborated": 0.298957,
    "everyday_other_script": 0.042509,
    "everyday_topic": 0.594335,
    "company": 0.519604,
    "alone": -1.297092,
    "shared": 0.000001,
    "trust": 0.000000,
    "turn_length": -1.011892,
}
THRESHOLD = -0.464024
