"""Access control: the access key, UI sessions, cross-site request protection and the
outermost middleware (request id, access key, error envelopes)."""

from __future__ import annotations

__all__: list[str] = []
