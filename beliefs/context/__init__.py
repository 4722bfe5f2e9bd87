"""Context assembly: the persona prelude, pinned and relevant beliefs, rendered within a budget.

Imports the layers below (`model`, `text`, `index`, `search`); never the store.
"""
