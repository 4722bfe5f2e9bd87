"""Access control: the access key and per-user tokens (what each grants), UI sessions,
cross-site request protection and the outermost middleware (request id, credentials, error
envelopes)."""

from __future__ import annotations

__all__: list[str] = []
