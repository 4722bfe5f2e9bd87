"""Token counting for the memory budget: a real BPE tokenizer when one ships on disk."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

from beliefs.context.render import estimate_tokens

# tiktoken's cl100k_base ranks, as bundled (under their cache file name) inside litellm's wheel.
_CL100K_FILE = "9b5ad71b2ce5302211f9c61530b329a4922fc6a4"
_CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)


def _bundled_ranks() -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        path = Path(root) / "litellm_core_utils" / "tokenizers" / _CL100K_FILE
        if path.exists():
            return path
    return None


@lru_cache(maxsize=1)
def token_counter() -> Callable[[str], int]:
    """cl100k_base token counts, loaded once without network; chars/4 if unavailable."""
    path = _bundled_ranks()
    if path is None:
        return estimate_tokens
    try:
        import tiktoken
        from tiktoken.load import load_tiktoken_bpe
    except ImportError:
        return estimate_tokens
    encoding = tiktoken.Encoding(
        name="cl100k_base",
        pat_str=_CL100K_PATTERN,
        mergeable_ranks=load_tiktoken_bpe(str(path), expected_hash=_CL100K_SHA256),
        special_tokens={"<|endoftext|>": 100257},
    )
    # The tokenizer keeps its own copy of the ranks; the encoding holds the dict it was given
    # only to be pickled, which this one never is (16 MB of 100k bytes objects).
    encoding._mergeable_ranks = {}

    @lru_cache(maxsize=16384)
    def count(text: str) -> int:
        # Belief lines and the standing block repeat across turns: count each text once.
        return len(encoding.encode_ordinary(text))

    return count
