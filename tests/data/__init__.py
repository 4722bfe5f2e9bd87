"""Sample data the project owns, for tests that need a small, realistic store."""

from __future__ import annotations

from pathlib import Path

# Tenure's belief JSON: two users, three scopes, a three-step supersession chain
# (b-queue-v0 -> b-queue-v1 -> b-queue-current), pinned beliefs and open questions (one
# resolved), and a change_log entry.
SAMPLE_BELIEFS = Path(__file__).with_name("sample_beliefs.json")

__all__ = ["SAMPLE_BELIEFS"]
