"""The one settings object: `config.toml` in TENURE_HOME, overridden by TENURE_* variables."""

from __future__ import annotations

import difflib
import os
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from beliefs.model.errors import reason
from beliefs.model.models import SCOPE_PATTERN


class SettingsError(Exception):
    """A bad setting: names the key, the value and what is accepted."""


class ModelRoute(BaseModel):
    """A model served through LiteLLM because its provider is not OpenAI-compatible."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    litellm_model: str = Field(description="LiteLLM model string, e.g. anthropic/claude-sonnet-4")
    api_base: str | None = None
    api_key_env: str | None = Field(default=None, description="variable holding the key")
    api_key: str | None = Field(default=None, repr=False, description="read from api_key_env")


class Settings(BaseModel):
    """Every knob of the gateway, extractor and compaction worker; frozen once read."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    home: Path = Field(default_factory=lambda: Path("~/.tenure").expanduser())
    host: str = "127.0.0.1"
    port: int = Field(default=5757, ge=1, le=65535)
    api_key: str | None = None
    # What `tenure` commands and `tenure mcp` send to a running server that has no
    # TENURE_API_KEY but access tokens (an operator token from `tenure tokens create`).
    token: str | None = Field(default=None, repr=False)

    upstream_url: str = "https://api.openai.com/v1"
    upstream_api_key: str | None = None
    anthropic_upstream_url: str | None = None
    anthropic_upstream_api_key: str | None = None
    upstream_timeout: float = Field(default=600.0, gt=0)
    upstream_connect_timeout: float = Field(default=10.0, gt=0)
    max_body_bytes: int = Field(default=32 * 1024 * 1024, ge=1024)
    max_header_bytes: int = Field(default=64 * 1024, ge=1024)
    # Web apps (origins) trusted to call the model paths from a browser; no web page may else.
    allowed_origins: tuple[str, ...] = ()
    read_timeout: float = Field(default=60.0, gt=0)

    default_user: str = "default"
    # A request that names no scope works in this one (and `user:universal`), so what is said
    # there is not injected into every other scope.
    default_scopes: tuple[str, ...] = ("domain:general",)
    retrieval_timeout_ms: float = Field(default=50.0, gt=0)
    max_beliefs: int = Field(default=20, ge=0, le=200)
    budget_pct: float = Field(default=8.0, ge=0, le=100)
    budget_floor_tokens: int = Field(default=1024, ge=0)
    curated_mode: bool = False
    # Always-on writes (pinned, delivery `always`) by the memory tools and extraction are held
    # back for the user to confirm: only the UI and CLI make a belief always-on.
    always_write_confirm: bool = False
    inject_scopes: tuple[str, ...] = ()
    inject_min_trust: int = Field(default=1, ge=1, le=3)

    extract_model: str | None = None
    extract_api_base: str | None = None
    extract_api_key: str | None = None
    extract_workers: int = Field(default=1, ge=0, le=16)
    extract_max_attempts: int = Field(default=4, ge=1, le=20)
    extract_timeout: float = Field(default=120.0, gt=0)
    extract_backoff_s: float = Field(default=5.0, ge=0)
    extract_backoff_max_s: float = Field(default=600.0, ge=0)
    breaker_threshold: int = Field(default=3, ge=1)
    breaker_cooldown_s: float = Field(default=300.0, ge=0)

    compaction_model: str | None = None  # else extract_model, else the user's latest turn's
    compaction_interval: float = Field(default=1800.0, ge=0)
    compaction_grace_hours: float = Field(default=24.0, ge=0)
    compaction_cooldown_s: float = Field(default=600.0, ge=0)

    durable_wait_s: float = Field(default=5.0, ge=0)  # a reply's end waits this long for its job
    journal: bool = True  # durable jobs go to an append-only journal in `home` before the table
    write_keep_max: int = Field(default=10_000, ge=1)  # refused writes kept in memory for a retry
    extract_min_rate: float = Field(default=5.0, ge=0)  # jobs/s extraction keeps under load
    extract_backlog_max: int = Field(default=20_000, ge=0)  # pending jobs kept; 0 = unbounded
    # /healthz says "degraded" past this many pending jobs, or an oldest one this old; 0 = off
    extract_backlog_degraded: int = Field(default=1_000, ge=0)
    extract_backlog_degraded_age_s: float = Field(default=300.0, ge=0)
    upstream_max_connections: int = Field(default=256, ge=1)  # per upstream origin, in use

    log_level: Literal["debug", "info", "warning", "error"] = "info"
    models: dict[str, ModelRoute] = Field(default_factory=dict)
    # embedding recall beside name matching (needs the 'semantic' extra); off by default
    semantic: bool = False

    # How the extraction model is asked (see docs/extraction-models.md).
    extract_max_tokens: int = Field(default=1024, ge=64, le=65536)
    extract_output_mode: Literal["auto", "json_schema", "json_object", "tools", "text"] = "auto"
    extract_schema: Literal["full", "light"] = "full"
    extract_rules_in: Literal["auto", "system", "user"] = "auto"
    extract_canary: bool = True  # a turn with a known answer before each model's first job
    # With a backlog, up to this many pending turns of one conversation share one call (1 = off),
    # as long as their text stays under extract_batch_chars.
    extract_batch_turns: int = Field(default=4, ge=1, le=16)
    extract_batch_chars: int = Field(default=16_000, ge=1_000)

    # Client-supplied user ids (`user`, `safety_identifier`, `metadata.user_id`): mapped to
    # Tenure users here, else ignored unless trusted (see proxy/gateway/identity.py).
    trust_client_ids: bool = False
    client_users: dict[str, str] = Field(default_factory=dict)

    # Logs of `tenure serve`: `json` writes one JSON object per line; LiteLLM's own loggers
    # stay silent unless given a level.
    log_format: Literal["text", "json"] = "text"
    litellm_log_level: Literal["off", "debug", "info", "warning", "error"] = "off"

    # The shared store: unset, the DuckDB file in `home`; a postgresql:// URL, that database
    # (replicas of `tenure serve` on several machines or `--workers` then share one memory).
    database_url: str | None = Field(default=None, repr=False)
    # This process's name in the change feed and /healthz (default: host name + random suffix).
    replica_id: str | None = None
    # How long a job claimed by another replica is left to it before being taken over
    # (PostgreSQL; default: twice extract_timeout plus 30 s). Keep it above extract_timeout.
    extract_lease: float | None = Field(default=None, gt=0)
    # Most beliefs the index holds in memory (DuckDB; 0: every belief). Bounded, it holds whole
    # users, the most recently active first, reads a user it lacks on that user's first
    # request (which goes without memory meanwhile) and lets the least recent users go.
    index_max_beliefs: int = Field(default=0, ge=0)

    @field_validator("default_scopes")
    @classmethod
    def _scopes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        scopes = tuple(s.strip().lower() for s in value)
        for scope in scopes:
            if not SCOPE_PATTERN.match(scope):
                raise ValueError(
                    f"{scope!r} is not one of user:universal, domain:<slug>[/<sub>], project:<slug>"
                )
        return scopes

    @field_validator("allowed_origins")
    @classmethod
    def _origins(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        origins = tuple(o.strip().lower().rstrip("/") for o in value)
        for origin in origins:
            scheme, sep, rest = origin.partition("://")
            if not sep or not scheme or not rest or "/" in rest:
                raise ValueError(
                    f"{origin!r} is not an origin: write scheme://host[:port], "
                    "e.g. https://chat.example.com"
                )
        return origins

    @field_validator("upstream_url", "anthropic_upstream_url", "extract_api_base")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} is not an http:// or https:// URL")
        return value.rstrip("/") if value else value

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: str | None) -> str | None:
        from beliefs.store.backend import is_postgres_url

        if value is not None and not is_postgres_url(value):
            raise ValueError(
                "is not a postgresql:// URL (e.g. postgresql://user:password@host:5432/tenure); "
                "leave it unset for the DuckDB file in TENURE_HOME"
            )
        return value

    @property
    def db_path(self) -> Path:
        return self.home / "tenure.duckdb"

    @property
    def store_location(self) -> Path | str:
        """What `beliefs.open_store` is given: the PostgreSQL URL when set, else the DuckDB file."""
        return self.database_url or self.db_path

    @property
    def backend(self) -> Literal["duckdb", "postgresql"]:
        return "postgresql" if self.database_url else "duckdb"

    @property
    def config_path(self) -> Path:
        return self.home / "config.toml"

    @classmethod
    def load(cls, environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
        """Read config.toml from TENURE_HOME, then TENURE_* variables, then explicit overrides.

        Raises:
            SettingsError: a key is unknown or a value is not accepted.
        """
        env = os.environ if environ is None else environ
        home = Path(env.get("TENURE_HOME") or overrides.get("home") or "~/.tenure").expanduser()
        values: dict[str, Any] = {}
        config = home / "config.toml"
        if config.exists():
            try:
                values.update(tomllib.loads(config.read_text(encoding="utf-8")))
            except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
                raise SettingsError(f"{config}: not valid TOML ({exc}); fix or remove it") from exc
        # Where each value came from, so an error names the place to fix it.
        origin = {key: f"in {config}" for key in values}
        for key in cls.model_fields:
            if key in _FILE_ONLY:
                continue
            raw = env.get(f"TENURE_{key.upper()}")
            if raw is not None and raw != "":
                values[key] = _split_list(raw) if key in _LIST_KEYS else raw
                origin[key] = f"TENURE_{key.upper()}"
        for key in _LIST_KEYS:
            if isinstance(values.get(key), str):
                values[key] = _split_list(values[key])
        given = {k: v for k, v in overrides.items() if v is not None}
        values.update(given)
        origin.update({key: "given" for key in given})
        values["home"] = home
        routes = values.get("models")
        if isinstance(routes, dict):
            for route in routes.values():
                if isinstance(route, dict) and route.get("api_key_env") and "api_key" not in route:
                    route["api_key"] = env.get(route["api_key_env"])
        try:
            return cls.model_validate(values)
        except ValidationError as exc:
            raise SettingsError(_describe(exc, origin)) from None


_LIST_KEYS = ("default_scopes", "inject_scopes", "allowed_origins")
_FILE_ONLY = ("home", "models", "client_users")  # tables, or TENURE_HOME read first
# read by the install (setup.py), which `make serve` runs with the same environment
_BUILD_ONLY = frozenset(["TENURE_COMPILE"])


def unknown_variables(environ: Mapping[str, str], settings: Settings) -> list[str]:
    """A warning for each TENURE_* variable that is no setting (a typo is otherwise ignored)."""
    known = {f"TENURE_{key.upper()}" for key in Settings.model_fields if key not in _FILE_ONLY}
    keys = {route.api_key_env for route in settings.models.values() if route.api_key_env}
    warnings = []
    for name in sorted(environ):
        if not name.startswith("TENURE_") or name in known or name in keys:
            continue
        if name == "TENURE_HOME" or name in _BUILD_ONLY:
            continue
        close = difflib.get_close_matches(name, known, n=1)
        hint = f"did you mean {close[0]}?" if close else "see docs/settings.md"
        warnings.append(f"{name} is not a Tenure setting and is ignored; {hint}")
    return warnings


def _split_list(raw: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in raw.split(",") if part.strip())


def _describe(exc: ValidationError, origin: Mapping[str, str]) -> str:
    lines = []
    for err in exc.errors():
        key = ".".join(str(p) for p in err["loc"]) or "settings"
        top = str(err["loc"][0]) if err["loc"] else ""
        where = origin.get(top, f"TENURE_{top.upper()}")
        if err["type"] == "extra_forbidden":
            close = difflib.get_close_matches(top, Settings.model_fields, n=1)
            hint = f"did you mean {close[0]!r}?" if close else "docs/settings.md lists them"
            lines.append(f"unknown setting {key!r} ({where}); {hint}")
            continue
        value = err.get("input")
        if key == "database_url" and isinstance(value, str):
            from beliefs.store.backend import redacted

            value = redacted(value)
        # pydantic prefixes a validator's own message with "Value error, "
        message = reason(err)
        lines.append(f"setting {key} ({where}) = {value!r}: {message}")
    return "; ".join(lines)
