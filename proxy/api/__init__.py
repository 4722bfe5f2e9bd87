"""The JSON API under `/api/`: one module per resource, and the input checks they share."""

from __future__ import annotations

__all__: list[str] = []
