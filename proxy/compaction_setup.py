"""Wiring compaction into the gateway: the model it uses, the persona keeper, the schedule."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from beliefs.thread import StoreThread
from compaction import CompactionConfig, CompactionScheduler, Compactor, PersonaKeeper
from compaction.model import ChatModel
from extractor.llm import LiteLLMChatModel
from proxy.model_setup import chat_model_for
from proxy.settings import Settings


@dataclass
class CompactionParts:
    persona: PersonaKeeper
    compactor: Compactor
    scheduler: CompactionScheduler
    own_llm: LiteLLMChatModel | None  # the client made here (its caller closes it), or None


def configured_model(settings: Settings) -> str | None:
    """TENURE_COMPACTION_MODEL, else TENURE_EXTRACT_MODEL; None means the user's own model."""
    return settings.compaction_model or settings.extract_model


def compaction_config(settings: Settings) -> CompactionConfig:
    return CompactionConfig(
        grace=timedelta(hours=settings.compaction_grace_hours),
        cooldown_s=settings.compaction_cooldown_s,
        model=configured_model(settings),
    )


def compaction_parts(
    settings: Settings, thread: StoreThread, llm: ChatModel | None = None
) -> CompactionParts:
    """The extractor's LLM boundary serves compaction too: the gateway passes its one shared
    client; a CLI command without one gets its own."""
    own = None
    if llm is None:
        llm = own = chat_model_for(settings)
    persona = PersonaKeeper(thread, llm=llm, model=configured_model(settings))
    compactor = Compactor(thread, llm=llm, config=compaction_config(settings), persona=persona)
    scheduler = CompactionScheduler(compactor, settings.compaction_interval)
    return CompactionParts(persona, compactor, scheduler, own)
