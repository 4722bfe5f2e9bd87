"""The belief store: DuckDB or PostgreSQL, migrations, history, chains, rules and the change feed.

The top layer: it writes beliefs and tells the index it is handed what changed.
"""
