"""Frozen weights of the relevance model (`beliefs.search.relevance`).

Fitted by `python bench/fit_relevance.py --l2 1.0 --beta 1.0 --write`
on 2026-12-05, from 289 candidates of the training corpora
(blind-spot, held-out A, held-out B, held-out C, held-out D, held-out E, held-out F, held-out
ZL, held-out ZM). Do not edit by hand: fit again.
"""

WEIGHTS = {
    "bias": 1.042812,
    "bm25": 0.049479,
    "phrase": 0.026547,
    "canonical": -0.523141,
    "rare": 0.032016,
    "rare_inexact": -0.429296,
    "everyday_only": -0.701688,
    "general": -0.098015,
    "rarity": 1.153858,
    "name_word_only": 0.232432,
    "rejected_only": 1.091371,
    "inexact_only": -0.212122,
    "numeric": 0.147477,
    "marked": 0.496088,
    "coded": -0.171082,
    "proper": -0.629560,
    "clauses": 0.528282,
    "corroborating_rare": 1.130892,
    "corroborating_common": 0.982841,
    "corroborating_near": 0.577236,
    "other_script": 0.652088,
    "everyday_marked": 0.570372,
    "everyday_coded": 0.019115,
    "everyday_proper": 0.162003,
    "everyday_corroborated": -0.120297,
    "everyday_other_script": 0.032071,
    "everyday_topic": -0.103681,
    "company": 0.125494,
    "alone": -1.042467,
    "shared": 0.000001,
    "trust": 0.000000,
    "turn_length": -0.829582,
    "sense_passed": 1.185343,
    "sense_failed": -1.744653,
}
THRESHOLD = -0.344623
