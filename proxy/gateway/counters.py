"""Counters of the running gateway, shown at `/healthz`."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(slots=True)
class Counters:
    """Plain ints touched only from the event loop (the background writer reports back there)."""

    requests: int = 0
    injected_requests: int = 0
    chat_commands: int = 0
    retrieval_failures: int = 0
    retrieval_timeouts: int = 0  # retrievals over the limit (sent with what they found)
    upstream_errors: int = 0
    upstream_unreachable: int = 0
    upstream_timeouts: int = 0
    upstream_broken_streams: int = 0
    client_disconnects: int = 0
    records_written: int = 0
    jobs_enqueued: int = 0
    write_failures: int = 0
    turns_not_durable: int = 0  # replies that ended before their job was on disk
    writes_lost: int = 0  # refused writes dropped because too many were waiting
    in_flight: int = 0  # proxied requests being answered right now
    memory_skipped_loading: int = 0  # requests sent without memory while the index loaded
    browser_requests_refused: int = 0  # a web page's calls (foreign Origin or Host) refused

    def as_dict(self) -> dict[str, int]:
        return asdict(self)
