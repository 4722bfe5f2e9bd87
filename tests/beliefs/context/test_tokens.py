"""Token counts for the memory budget."""

from __future__ import annotations

import pytest

from beliefs.context.render import estimate_tokens
from beliefs.context.tokens import token_counter


def test_counts_are_the_bundled_tokenizers() -> None:
    count = token_counter()
    if count is estimate_tokens:
        pytest.skip("no tokenizer ranks ship with the installed packages")
    assert count("hello world") == 2
    assert count("Tenure keeps beliefs: idempotency keys, PostgreSQL 16.") == 15
    assert count("") == 0
