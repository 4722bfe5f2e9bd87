"""Frozen weights of the relevance model (`beliefs.search.relevance`).

Fitted by `python bench/fit_relevance.py --l2 1.0 --beta 1.0 --write`
on 2026-12-05, from 405 candidates of the training corpora
(blind-spot, held-out A, held-out B, held-out C, held-out D, held-out E, held-out F, held-out
ZL, held-out ZM, held-out ZV, held-out ZW). Do not edit by hand: fit again.
"""

WEIGHTS = {
    "bias": 0.506680,
    "bm25": 0.314010,
    "phrase": 0.084195,
    "canonical": -0.585572,
    "rare": 0.103963,
    "rare_inexact": -0.349373,
    "everyday_only": -0.514406,
    "general": -0.042340,
    "rarity": 1.267607,
    "name_word_only": -0.124990,
    "rejected_only": 1.163733,
    "inexact_only": -0.335926,
    "numeric": 0.134334,
    "marked": 0.661311,
    "coded": -0.056869,
    "proper": -0.600784,
    "clauses": 0.419483,
    "corroborating_rare": 1.021812,
    "corroborating_common": 1.204298,
    "corroborating_near": 0.532381,
    "other_script": 0.731873,
    "everyday_marked": 0.676386,
    "everyday_coded": 0.007518,
    "everyday_proper": 0.138507,
    "everyday_corroborated": 0.074532,
    "everyday_other_script": 0.016326,
    "everyday_topic": -0.214920,
    "company": 0.859399,
    "alone": -1.134512,
    "shared": 0.000000,
    "trust": 0.000000,
    "turn_length": -1.082891,
    "sense_passed": 1.164841,
    "sense_failed": -1.787585,
    "sense_contrary": -0.645815,
}
THRESHOLD = 0.031334
