"""Search over the index: which beliefs a turn names, scored and ranked within a deadline.

Imports `beliefs.model`, `beliefs.text` and `beliefs.index.belief_index`.
"""
