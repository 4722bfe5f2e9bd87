"""A read-only word list held compactly: its words sorted in one `bytes` blob, found by binary
search, each with an optional small number (a frequency bin).

A Python dict or set costs ~100 bytes a word (a str object and a hash slot); wordfreq's English
list of 321k words as a dict, six small lists and english-words' dictionary held ~70 MB that
way. The same words in UTF-8 blobs with an `array` of offsets and one of values take ~10 MB,
for a lookup of ~20 comparisons (~4 µs) rather than one hash. Tables are built from the
packages' own files (wordfreq's cBpack lists, english-words' pickled sets); the strings those
decode are temporary.
"""

from __future__ import annotations

import math
import operator
import pickle
from array import array
from collections.abc import Iterable, Sequence
from functools import cache
from importlib import resources
from itertools import accumulate, islice

# Values fit two bytes: wordfreq's bins are centibels below frequency 1, and its lists stop at
# 800 (once per 10^8 words). They do not fit one: the English list uses 564 distinct bins.
_VALUE_TYPE = "H"
_NO_VALUES: array[int] = array(_VALUE_TYPE)


class WordTable:
    """Words sorted by their UTF-8 bytes, with a value each (or none for a plain word set)."""

    __slots__ = ("_blob", "_starts", "_values")

    def __init__(self, words: Sequence[str], values: Sequence[int] | None = None) -> None:
        """`words` in any order, `values` in step with them; of a word given twice the last
        value counts (as when a dict is filled in that order)."""
        if values is None:
            ordered = sorted(map(str.encode, set(words)))
            self._values = _NO_VALUES
        else:
            if len(values) != len(words):
                raise ValueError(f"{len(words)} words but {len(values)} values")
            encoded = list(map(str.encode, words))
            # stable: a repeated word's copies keep their given order, the last one last
            order = sorted(range(len(encoded)), key=encoded.__getitem__)
            ordered = list(map(encoded.__getitem__, order))
            del encoded
            if any(map(operator.eq, ordered, islice(ordered, 1, None))):
                last = len(ordered) - 1
                kept = [k for k in range(len(ordered)) if k == last or ordered[k] != ordered[k + 1]]
                ordered = [ordered[k] for k in kept]
                order = [order[k] for k in kept]
            self._values = array(_VALUE_TYPE, list(map(values.__getitem__, order)))
        self._blob = b"".join(ordered)
        self._starts = array("I", [0])
        self._starts.extend(accumulate(map(len, ordered)))

    def __len__(self) -> int:
        return len(self._starts) - 1

    def __contains__(self, word: object) -> bool:
        return isinstance(word, str) and self._find(word) >= 0

    def words(self) -> Iterable[str]:
        """Every word, in the table's order."""
        blob, starts = self._blob, self._starts
        return (blob[starts[i] : starts[i + 1]].decode() for i in range(len(self)))

    def value(self, word: str) -> int | None:
        """The value given with `word` (in a table built with values), or None when the table
        does not hold it."""
        at = self._find(word)
        return None if at < 0 else self._values[at]

    def nbytes(self) -> int:
        """The bytes the table's contents take."""
        arrays = (self._starts, self._values)
        return len(self._blob) + sum(a.itemsize * len(a) for a in arrays)

    def _find(self, word: str) -> int:
        key = word.encode("utf-8", "surrogatepass")  # a lone surrogate: in no list
        blob, starts = self._blob, self._starts
        low, high = 0, len(starts) - 1
        while low < high:
            middle = (low + high) >> 1
            probe = blob[starts[middle] : starts[middle + 1]]
            if probe < key:
                low = middle + 1
            elif probe > key:
                high = middle
            else:
                return middle
        return -1


def frequency_table(path: str) -> WordTable:
    """A wordfreq list (a cBpack file: bins of words, the bin's index its frequency in negative
    centibels) as a table from each word to its bin."""
    from wordfreq import read_cBpack  # decodes the file only: no dict, nothing cached

    bins = read_cBpack(path)
    words = [word for words in bins for word in words]
    values = [index for index, words_in_bin in enumerate(bins) for _ in words_in_bin]
    del bins
    return WordTable(words, values)


def zipf_frequency(table: WordTable, word: str, lang: str) -> float:
    """What wordfreq's `zipf_frequency(word, lang, wordlist)` answers, `table` being that list
    (`frequency_table`): the same tokens, bins and arithmetic, so the same float. For languages
    wordfreq splits into words by its regular expression (not Chinese, Japanese or Korean)."""
    if word.isascii() and word.isalpha() and word.islower():
        # wordfreq's tokenizer keeps a word of a to z whole, and it has no digits: skip its ~5 µs
        index = table.value(word)
        return _zipf_of(()) if index is None else zipf_of_bin(index)
    from wordfreq import cB_to_freq
    from wordfreq.numbers import digit_freq, smash_numbers
    from wordfreq.tokens import lossy_tokenize

    frequencies = []
    for token in lossy_tokenize(word, lang):
        smashed = smash_numbers(token)  # runs of digits read as zeros: "2024" is "0000"
        index = table.value(smashed)
        if index is None:
            return _zipf_of(())
        frequency = cB_to_freq(-index)
        if smashed != token:
            frequency *= digit_freq(token)
        frequencies.append(frequency)
    return _zipf_of(frequencies)


@cache
def zipf_of_bin(index: int) -> float:
    """The Zipf value of a word in bin `index` of a wordfreq list."""
    from wordfreq import cB_to_freq

    return _zipf_of((cB_to_freq(-index),))


def _zipf_of(frequencies: Sequence[float]) -> float:
    """The Zipf value of the tokens' frequencies (none: an unknown word), as wordfreq reckons
    it."""
    from wordfreq import freq_to_zipf, zipf_to_freq

    floor = zipf_to_freq(0.0)  # wordfreq's frequency for a word it does not know
    if not frequencies:
        return round(freq_to_zipf(floor), 2)
    # a phrase is as rare as the harmonic sum of its words' frequencies
    inverse_sum = 0.0
    for frequency in frequencies:
        inverse_sum += 1.0 / frequency
    frequency = max(1.0 / inverse_sum, floor)
    # three significant digits, as wordfreq keeps
    frequency = round(frequency, math.floor(-math.log(frequency, 10)) + 3)
    return round(freq_to_zipf(frequency), 2)


def lower_case_entries(sources: Iterable[str]) -> WordTable:
    """The entries of english-words' lists (with `alpha=True`: letters only) that are written
    in lower case."""
    from english_words import ALPHA, PROCESSED_DATA_DIR, get_data_file_name

    words: list[str] = []
    for source in sources:  # one pickled set at a time, rather than their union as well
        name = get_data_file_name(source, [ALPHA])
        data = resources.files("english_words").joinpath(PROCESSED_DATA_DIR, name).read_bytes()
        words.extend(filter(str.islower, pickle.loads(data)))
        del data
    return WordTable(words)
