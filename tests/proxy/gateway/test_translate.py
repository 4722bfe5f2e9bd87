"""A model routed through LiteLLM (config.toml `[models."name"]`), against the stand-in."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.fakes.upstream import FakeUpstream
from tests.proxy import beliefs_seed as seed
from tests.proxy.conftest import Gateway

# LiteLLM's own types trip a pydantic warning on first use; it is not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore:Item .* is using the .ReadOnly. qualifier")


def test_routed_model_goes_through_litellm(
    make_gateway: Callable[..., Gateway], upstream: FakeUpstream
) -> None:
    route = {"litellm_model": "openai/stand-in-model", "api_base": upstream.url}
    gw = make_gateway(beliefs=seed.ALL, models={"house-model": route})
    sdk = gw.openai("sk")
    headers = {"X-Tenure-User": seed.USER, "X-Tenure-Scope": "domain:code"}
    messages = [{"role": "user", "content": "Which pg version?"}]

    reply = sdk.chat.completions.create(
        model="house-model", messages=messages, extra_headers=headers
    )  # type: ignore[arg-type]
    assert reply.choices[0].message.content == "Hello from the stand-in provider."
    assert reply.model == "house-model"
    sent = upstream.last("/chat/completions").json
    assert sent["model"] == "stand-in-model"
    assert upstream.last().headers["authorization"] == "Bearer sk"  # the client's own key
    assert "b-postgres" in sent["messages"][-1]["content"]  # memory placed before translation

    stream = sdk.chat.completions.create(
        model="house-model",
        messages=[{"role": "user", "content": "And which pg pooler?"}],  # a typed message each
        stream=True,
        extra_headers=headers,  # type: ignore[arg-type]
    )
    text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
    assert text == "Hello from the stand-in provider."
    gw.settle(lambda: len(gw.rows("SELECT id FROM jobs")) == 2)
    assert gw.rows("SELECT count(*) FROM jobs")[0][0] == 2
