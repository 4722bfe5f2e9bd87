"""Frozen weights of the relevance model (`beliefs.search.relevance`).

Fitted by `python bench/fit_relevance.py --l2 1.0 --beta 1.0 --write`
on 2026-12-05, from 289 candidates of the training corpora
(blind-spot, held-out A, held-out B, held-out C, held-out D, held-out E, held-out F, held-out
ZL, held-out ZM). Do not edit by hand: fit again.
"""

WEIGHTS = {
    "bias": 0.993845,
    "bm25": 0.059832,
    "phrase": 0.024067,
    "canonical": -0.522798,
    "rare": 0.045762,
    "rare_inexact": -0.431392,
    "everyday_only": -0.716310,
    "general": -0.101526,
    "rarity": 1.163209,
    "name_word_only": 0.238463,
    "rejected_only": 1.084258,
    "inexact_only": -0.207807,
    "numeric": 0.149607,
    "marked": 0.533692,
    "coded": -0.169907,
    "proper": -0.648790,
    "clauses": 0.530642,
    "corroborating_rare": 1.131441,
    "corroborating_common": 0.985177,
    "corroborating_near": 0.567893,
    "other_script": 0.700341,
    "everyday_marked": 0.563945,
    "everyday_coded": 0.018937,
    "everyday_proper": 0.160999,
    "everyday_corroborated": -0.108727,
    "everyday_other_script": 0.030362,
    "everyday_topic": -0.105534,
    "company": 0.119141,
    "alone": -1.031761,
    "shared": 0.000001,
    "trust": 0.000000,
    "turn_length": -0.822702,
    "sense_passed": 1.207086,
    "sense_failed": -1.692308,
    "sense_contrary": -0.357654,
}
THRESHOLD = -0.238832
