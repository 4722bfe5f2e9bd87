"""The in-memory index of live beliefs: postings, fuzzy keys and optional embedding neighbours.

Imports `beliefs.model` and `beliefs.text`. The store keeps it current; it never reads the store.
"""
