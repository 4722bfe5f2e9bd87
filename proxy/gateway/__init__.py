"""The request path to the provider: the route table (`routes.py`), one generic handler for
every model-call protocol (`handler.py`) with one adapter per protocol (`protocols/`), the
pass-through of every other path, identity, chat commands, memory placement, forwarding over
the pooled client, translation through LiteLLM, the turn capture and the background writer.
The app's lifespan hands the proxy route its collaborators (`parts.Gateway`)."""

from __future__ import annotations

__all__: list[str] = []
