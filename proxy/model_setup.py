"""The language-model client and the extraction config, built from settings once per process."""

from __future__ import annotations

from extractor.config import ExtractionConfig
from extractor.llm import LiteLLMChatModel
from extractor.structured import CallOptions
from proxy.settings import Settings


def chat_model_for(settings: Settings) -> LiteLLMChatModel:
    """The real model client: TENURE_EXTRACT_API_BASE/KEY, else the upstream's (or a route's)
    URL and key. One is built at start-up and shared by extraction and compaction."""
    own = settings.extract_model is None
    routes = {r.litellm_model: (r.api_base, r.api_key) for r in settings.models.values()}
    # LiteLLM appends /v1/messages itself; the gateway's Anthropic base ends in /v1.
    anthropic_base = (settings.anthropic_upstream_url or settings.upstream_url).removesuffix("/v1")
    routes["anthropic/"] = (
        anthropic_base,
        settings.anthropic_upstream_api_key or settings.upstream_api_key,
    )
    return LiteLLMChatModel(
        api_base=settings.extract_api_base or (settings.upstream_url if own else None),
        api_key=settings.extract_api_key or (settings.upstream_api_key if own else None),
        timeout=settings.extract_timeout,
        routes=routes if own else None,
    )


def extraction_config(settings: Settings) -> ExtractionConfig:
    return ExtractionConfig(
        model=settings.extract_model,
        routes={name: route.litellm_model for name, route in settings.models.items()},
        workers=settings.extract_workers,
        max_attempts=settings.extract_max_attempts,
        timeout=settings.extract_timeout,
        backoff_s=settings.extract_backoff_s,
        backoff_max_s=settings.extract_backoff_max_s,
        breaker_threshold=settings.breaker_threshold,
        breaker_cooldown_s=settings.breaker_cooldown_s,
        call=CallOptions(
            max_tokens=settings.extract_max_tokens,
            max_tokens_retry=max(settings.extract_max_tokens * 2, 4096),
            output_mode=settings.extract_output_mode,
            schema=settings.extract_schema,
            rules=settings.extract_rules_in,
        ),
    )
