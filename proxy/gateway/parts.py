"""What the request path uses, named one by one: the app's composition root (its lifespan)
builds these from the running resources and hands them to the proxy route; no gateway module
reaches for the app's state or the runtime."""

from __future__ import annotations

from dataclasses import dataclass

from proxy.gateway.background import StoreWriter
from proxy.gateway.chat_commands import ChatStates
from proxy.gateway.counters import Counters
from proxy.gateway.loop_memory import LoopMemories
from proxy.gateway.memory import MemoryBuilder
from proxy.gateway.side_calls import SeenMessages
from proxy.gateway.upstream_pool import UpstreamPool
from proxy.settings import Settings


@dataclass(frozen=True, slots=True)
class Gateway:
    """The collaborators of the proxy paths."""

    settings: Settings
    upstream: UpstreamPool  # the pooled client every forwarded call goes over
    memory: MemoryBuilder  # a turn's memory, from the store's index
    loops: LoopMemories  # each typed message's memory, for the requests of its tool loop
    chat_states: ChatStates  # each conversation's `!` controls
    writer: StoreWriter  # injection records, chat states and extraction jobs, off the path
    counters: Counters
    seen: SeenMessages  # user messages already handed to extraction
