"""Frozen weights of the relevance model (`beliefs.search.relevance`).

Fitted by `python bench/fit_relevance.py --l2 1.0 --beta 1.0 --write`
on 2026-12-06, from 565 candidates of the training corpora
(blind-spot, held-out A, held-out B, held-out C, held-out D, held-out E, held-out F, held-out
TA, held-out TB, held-out TC, held-out ZL, held-out ZM, held-out ZV, held-out ZW). Do not edit
by hand: fit again.
"""

WEIGHTS = {
    "bias": -1.259984,
    "bm25": 0.600528,
    "phrase": 0.074554,
    "canonical": -1.106611,
    "rare": 0.423673,
    "rare_inexact": -0.054000,
    "everyday_only": -0.081214,
    "general": 0.351027,
    "rarity": 1.419685,
    "name_word_only": -0.892774,
    "rejected_only": 1.333970,
    "inexact_only": -0.128415,
    "numeric": 0.235708,
    "marked": 0.665176,
    "coded": 0.162093,
    "proper": -0.420053,
    "clauses": 0.195004,
    "corroborating_rare": 1.158171,
    "corroborating_common": 1.564076,
    "corroborating_near": 0.383854,
    "other_script": 0.865925,
    "everyday_marked": 0.028530,
    "everyday_coded": 0.013961,
    "everyday_proper": 0.079179,
    "everyday_corroborated": 0.129110,
    "everyday_other_script": 0.200246,
    "everyday_topic": -0.031891,
    "company": 0.683781,
    "alone": -0.465616,
    "shared": -0.000001,
    "trust": -0.000000,
    "turn_length": -0.956204,
    "sense_passed": 1.027054,
    "sense_failed": -2.324458,
    "sense_contrary": -0.046528,
    "kind_passed": 0.699331,
}
THRESHOLD = 0.190551
