"""The belief model: records, history events, rules, personas, chains and the store's errors.

The bottom layer: it imports nothing else of `beliefs`.
"""
