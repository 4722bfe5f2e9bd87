"""Text as the search reads it: query terms, English word stems and rarity, option mentions.

Imports only `beliefs.model`.
"""
