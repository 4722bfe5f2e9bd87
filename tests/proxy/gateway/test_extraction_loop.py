"""The whole loop in one gateway: a turn becomes a job, the workers (started by the lifespan)
extract a belief with the model, and the next request gets that belief injected."""

from __future__ import annotations

from collections.abc import Callable

import httpx

from tests.extractor.fake_llm import FakeChatModel, extraction, new_belief
from tests.fakes.upstream import FakeUpstream
from tests.proxy.conftest import Gateway

HEADERS = {"X-Tenure-User": "carol", "X-Tenure-Scope": "project:billing"}


def test_a_turn_becomes_a_belief_that_is_injected_next_time(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    llm = FakeChatModel(
        [
            extraction(
                new_beliefs=[
                    new_belief(
                        "session_cache",
                        "Sessions are cached in Redis.",
                        aliases=["redis"],
                        scope=["project:billing"],
                    )
                ]
            )
        ]
    )
    gw = make_gateway(llm=llm, extract_workers=1)
    sdk = gw.openai()
    sdk.chat.completions.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": "We cache sessions in Redis, remember that."}],
        extra_headers=HEADERS,
    )
    api = gw.url + "/api/beliefs"
    gw.settle(lambda: bool(httpx.get(api, params={"user": "carol"}).json()), timeout=10)
    [belief] = httpx.get(api, params={"user": "carol"}).json()
    assert belief["canonical_name"] == "session_cache"
    turn_text = llm.calls[0]["messages"][-1]["content"]
    assert "We cache sessions in Redis" in turn_text and "tenure-memory" not in turn_text

    raw = sdk.chat.completions.with_raw_response.create(
        model="gpt-4o-mini",
        messages=[{"role": "user", "content": "How should the redis keys expire?"}],
        extra_headers={**HEADERS, "X-Tenure-No-Extract": "1"},
    )
    assert raw.headers["x-tenure-injected"] == "1"
    assert belief["id"] in upstream.last("/chat/completions").json["messages"][-1]["content"]
    health = httpx.get(gw.url + "/healthz").json()
    assert "extractor" in health
