"""Frozen weights of the relevance model (`beliefs.search.relevance`).

Fitted by `python bench/fit_relevance.py --l2 1.0 --beta 1.0 --write`
on 2026-12-06, from 561 candidates of the training corpora
(blind-spot, held-out A, held-out B, held-out C, held-out D, held-out E, held-out F, held-out
TA, held-out TB, held-out TC, held-out ZL, held-out ZM, held-out ZV, held-out ZW). Do not edit
by hand: fit again.
"""

WEIGHTS = {
    "bias": -1.132585,
    "bm25": 0.657630,
    "phrase": 0.043306,
    "canonical": -1.105099,
    "rare": 0.421929,
    "rare_inexact": -0.218859,
    "everyday_only": -0.276317,
    "general": 0.160627,
    "rarity": 1.267462,
    "name_word_only": -0.552850,
    "rejected_only": 1.279005,
    "inexact_only": 0.016058,
    "numeric": 0.229784,
    "marked": 0.595738,
    "coded": 0.225917,
    "proper": -0.314749,
    "clauses": 0.189060,
    "corroborating_rare": 1.114634,
    "corroborating_common": 1.564413,
    "corroborating_near": 0.445832,
    "other_script": 0.724776,
    "everyday_marked": 0.268557,
    "everyday_coded": 0.014961,
    "everyday_proper": 0.063828,
    "everyday_corroborated": 0.288180,
    "everyday_other_script": 0.048297,
    "everyday_topic": 0.107312,
    "company": 0.813860,
    "alone": -0.477095,
    "shared": -0.000001,
    "trust": -0.000000,
    "turn_length": -1.194000,
    "sense_passed": 0.658632,
    "sense_failed": -1.762305,
    "sense_contrary": -0.450375,
}
THRESHOLD = 0.190534
