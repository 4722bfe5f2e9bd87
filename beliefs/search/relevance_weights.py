"""Frozen weights of the relevance model (`beliefs.search.relevance`).

Fitted by `python bench/fit_relevance.py --l2 1.0 --beta 1.0 --write`
on 2026-12-05, from 192 candidates of the training corpora
(blind-spot, held-out A to F). Do not edit by hand: fit again.
"""

WEIGHTS = {
    "bias": -0.405419,
    "bm25": 0.291396,
    "phrase": 0.501906,
    "canonical": -0.615931,
    "rare": 0.338230,
    "rare_inexact": -0.449148,
    "everyday_only": -0.884495,
    "general": -0.470992,
    "rarity": 1.424976,
    "name_word_only": 0.317418,
    "rejected_only": 0.630101,
    "inexact_only": 0.759722,
    "numeric": 0.000000,
    "marked": 1.104956,
    "coded": -0.592758,
    "proper": -0.183249,
    "clauses": 0.799115,
    "corroborating_rare": 0.650800,
    "corroborating_common": 0.749210,
    "corroborating_near": 1.508570,
    "other_script": 0.664954,
    "everyday_marked": 1.668918,
    "everyday_coded": 0.020588,
    "everyday_proper": -0.103717,
    "everyday_corroborated": 0.140800,
    "everyday_other_script": 0.150016,
    "everyday_topic": 0.550590,
    "company": 0.576275,
    "alone": -1.148798,
    "shared": -0.000000,
    "trust": -0.000000,
    "turn_length": -0.429034,
}
THRESHOLD = -0.122852
