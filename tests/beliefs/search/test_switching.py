"""A turn asking to change to another thing, read case-blind however it is typed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from beliefs.search.switching import _CHANGE, asks_to_switch

# ASCII words of the pattern and near misses, typed in any case around any ASCII text
_WORDS = [
    "switch to",
    "switching",
    "migrate",
    "reconsider",
    "go back to",
    "bring it back",
    "just use",
    "why don't we use",
    "move everything over to",
    "worth trying",
    "give it a go",
    "after all",
    "what if we",
    "en vez de",
    "au lieu de",
    "passare alla",
    "statt",
    "zamiast",
    "misto",
    "in plaats van",
    "overstappen",
    "mag-switch",
    "switchboard",
    "backto",
    "instead",
    "insteadof",
]


@given(
    st.text(alphabet=st.characters(max_codepoint=127), max_size=30),
    st.sampled_from(_WORDS),
    st.lists(st.booleans(), min_size=30, max_size=30),
    st.text(alphabet=st.characters(max_codepoint=127), max_size=30),
)
def test_an_ascii_turn_reads_as_the_case_blind_pattern_reads_it(
    before: str, word: str, upper: list[bool], after: str
) -> None:
    typed = "".join(ch.upper() if up else ch for ch, up in zip(word, upper, strict=False))
    text = f"{before} {typed}{word[len(typed) :]} {after}"
    asks_to_switch.cache_clear()
    assert asks_to_switch(text) is (_CHANGE.search(text) is not None)


def test_the_words_are_all_lower_case_and_found_in_any_case() -> None:
    assert _CHANGE.pattern == _CHANGE.pattern.lower()
    assert asks_to_switch("WHY DON'T WE JUST USE Bloc?")
    assert asks_to_switch("Worth Switching to Iris yet?")
    assert asks_to_switch("¿Y si usamos flux EN VEZ DE lo que tenemos?")
    assert not asks_to_switch("the switchboard is down")


def test_a_proposal_to_take_up_an_option_asks_to_switch() -> None:
    assert asks_to_switch("tempted to just bung apivar strips in this autumn, less faff")
    assert asks_to_switch("lely guy stopped by again w financing numbers. worth a look")
    assert asks_to_switch("honestly might just build the cohort as a pdt in looker")
    assert asks_to_switch("skal vi ikke bare bruge miscanthus langs stien")
    assert asks_to_switch("sollen wir für die weihnachtssterne nicht doch glitzer nehmen?")
    assert asks_to_switch("uk na lang kaya, mas mabilis daw processing ng NMC")
    assert asks_to_switch("a może jednak kupić tego Tradosa?")
    assert asks_to_switch("그냥 밴드로 옮기는 게 나을까요?")
    assert asks_to_switch("where do i save the draft, just chuck it in the teams channel?")
    assert asks_to_switch("wär Hamburg ned gscheiter für die nächste Ladung")
    assert asks_to_switch("限定の告知、LINEでもやった方がよか？")
    # a price weighed is no option proposed against a choice
    assert not asks_to_switch("black friday deals on a 4090 for my home rig worth it?")
    assert not asks_to_switch("the lely robot milked 62 cows today")
