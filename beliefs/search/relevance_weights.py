"""Frozen weights of the relevance model (`beliefs.search.relevance`).

Fitted by `python bench/fit_relevance.py --l2 1.0 --beta 1.0 --write`
on 2026-12-06, from 561 candidates of the training corpora
(blind-spot, held-out A, held-out B, held-out C, held-out D, held-out E, held-out F, held-out
TA, held-out TB, held-out TC, held-out ZL, held-out ZM, held-out ZV, held-out ZW). Do not edit
by hand: fit again.
"""

WEIGHTS = {
    "bias": -1.330731,
    "bm25": 0.649540,
    "phrase": 0.144248,
    "canonical": -1.077761,
    "rare": 0.496306,
    "rare_inexact": -0.164656,
    "everyday_only": -0.258644,
    "general": 0.184922,
    "rarity": 1.250393,
    "name_word_only": -0.833029,
    "rejected_only": 1.304502,
    "inexact_only": 0.066805,
    "numeric": 0.257932,
    "marked": 0.599351,
    "coded": 0.236964,
    "proper": -0.292910,
    "clauses": 0.142167,
    "corroborating_rare": 1.165338,
    "corroborating_common": 1.569158,
    "corroborating_near": 0.422916,
    "other_script": 0.728181,
    "everyday_marked": 0.289359,
    "everyday_coded": 0.014603,
    "everyday_proper": 0.070884,
    "everyday_corroborated": 0.338630,
    "everyday_other_script": 0.048616,
    "everyday_topic": 0.097131,
    "company": 0.882775,
    "alone": -0.411405,
    "shared": -0.000001,
    "trust": -0.000000,
    "turn_length": -1.086962,
    "sense_passed": 0.673129,
    "sense_failed": -1.729218,
    "sense_contrary": -0.461644,
    "kind_passed": 0.807624,
}
THRESHOLD = 0.123462
