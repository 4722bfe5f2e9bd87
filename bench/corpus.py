"""A synthetic, deterministic belief corpus and turn texts for the benchmarks."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from beliefs.model.models import Belief

TECH = [
    "redis",
    "postgres",
    "mongodb",
    "kafka",
    "rabbitmq",
    "kubernetes",
    "docker",
    "terraform",
    "ansible",
    "nginx",
    "envoy",
    "grafana",
    "prometheus",
    "sentry",
    "datadog",
    "react",
    "vue",
    "svelte",
    "angular",
    "nextjs",
    "remix",
    "fastify",
    "express",
    "django",
    "flask",
    "fastapi",
    "rails",
    "spring",
    "typescript",
    "python",
    "golang",
    "rust",
    "kotlin",
    "swift",
    "elixir",
    "graphql",
    "grpc",
    "websocket",
    "oauth",
    "jwt",
    "saml",
    "ldap",
    "vault",
    "consul",
    "etcd",
    "airflow",
    "dagster",
    "spark",
    "flink",
    "snowflake",
    "bigquery",
    "dbt",
    "pandas",
    "numpy",
    "pytorch",
    "jax",
    "tailwind",
    "storybook",
    "vitest",
    "jest",
    "playwright",
    "cypress",
    "webpack",
    "vite",
    "esbuild",
    "biome",
    "eslint",
    "prettier",
    "mypy",
    "ruff",
    "pytest",
    "celery",
    "sidekiq",
]
THINGS = [
    "cache",
    "queue",
    "schema",
    "migration",
    "pipeline",
    "deploy",
    "rollout",
    "cluster",
    "gateway",
    "proxy",
    "index",
    "shard",
    "replica",
    "backup",
    "monitor",
    "alert",
    "dashboard",
    "runbook",
    "budget",
    "roadmap",
    "contract",
    "invoice",
    "client",
    "chapter",
    "character",
    "narrator",
    "scene",
    "draft",
    "outline",
    "villain",
    "mentor",
    "city",
    "harbour",
    "letter",
]
FILLER = [
    "so",
    "I",
    "was",
    "wondering",
    "how",
    "we",
    "should",
    "think",
    "about",
    "the",
    "way",
    "this",
    "works",
    "when",
    "the",
    "team",
    "is",
    "busy",
    "and",
    "the",
    "release",
    "is",
    "close",
    "because",
    "honestly",
    "it",
    "has",
    "been",
    "bugging",
    "me",
    "for",
    "a",
    "while",
    "now",
    "and",
    "I",
    "would",
    "like",
    "a",
    "clear",
    "answer",
    "that",
    "fits",
    "what",
    "we",
    "already",
    "do",
    "here",
    "please",
]
# Shared alias vocabulary: the named tools plus made-up product, person and place names.
VOCABULARY = (
    TECH
    + [
        f"{a}{b}"
        for a in ("zor", "kel", "mav", "tri", "bel", "nox")
        for b in ("ana", "ix", "ord", "ium", "ette", "on", "ar", "is", "us", "ent") * 1
    ][:60]
)
VOCABULARY += [f"{w}{n}" for w in ("atlas", "nova", "orbit", "delta", "pixel") for n in range(250)]
SCOPES = ("domain:code", "domain:writing", "project:billing", "project:atlas", "domain:research")


def make_corpus(n: int, *, user_id: str = "bench-user", seed: int = 7) -> list[Belief]:
    """`n` beliefs for one user: 1-2 word names, 0-6 aliases, some rejected alternatives."""
    return list(iter_corpus(n, user_id=user_id, seed=seed))


def iter_corpus(
    n: int, *, user_id: str = "bench-user", seed: int = 7, users: int = 1
) -> Iterator[Belief]:
    """`make_corpus`'s beliefs one at a time (large stores fit in memory only as rows);
    with `users` > 1 belief i belongs to `{user_id}-{i % users}`."""
    rng = random.Random(seed)
    base = datetime(2026, 1, 1, tzinfo=UTC)
    for i in range(n):
        owner = user_id if users == 1 else f"{user_id}-{i % users}"
        tech, thing = rng.choice(TECH), rng.choice(THINGS)
        name = f"{tech}_{thing}_{i}"
        aliases = [f"{tech} {thing}", f"{tech}{i % 97}", f"{thing}-{i}"][: rng.randint(1, 3)]
        aliases += [rng.choice(VOCABULARY) for _ in range(rng.randint(0, 3))]
        rejected = [rng.choice(VOCABULARY) for _ in range(rng.choice((0, 0, 0, 1, 2)))]
        kind = rng.choices(
            ("preference", "entity", "decision", "relation", "open_question"), (4, 4, 3, 1, 1)
        )[0]
        yield (
            Belief(
                id=f"b-bench-{i}",
                user_id=owner,
                type=kind,
                canonical_name=name,
                aliases=aliases,
                rejected_alternatives=rejected,
                content=f"Uses {tech} for the {thing}; decided after comparing options. " * 2,
                why_it_matters=f"Shape every {thing} suggestion around {tech}.",
                scope=[rng.choice(SCOPES)] if rng.random() > 0.1 else ["user:universal"],
                pinned=rng.random() < 0.01,
                confidence=rng.uniform(0.5, 1.0),
                participants=[f"b-bench-{rng.randrange(n)}"] if kind == "relation" else [],
                last_reinforced_at=base + timedelta(minutes=i),
                created_at=base,
                updated_at=base + timedelta(minutes=i),
            )
        )


def make_queries(count: int, *, seed: int = 11) -> list[str]:
    """Turn texts of 15-60 words mixing filler, named tools, things and the odd typo."""
    rng = random.Random(seed)
    out: list[str] = []
    for _ in range(count):
        words = rng.sample(FILLER, rng.randint(10, 30))
        for _ in range(rng.randint(0, 4)):
            tech = rng.choice(TECH)
            if rng.random() < 0.2 and len(tech) > 4:
                pos = rng.randrange(2, len(tech))
                tech = tech[:pos] + tech[pos + 1 :]
            words.insert(rng.randrange(len(words)), tech)
        if rng.random() < 0.5:
            words.insert(rng.randrange(len(words)), rng.choice(THINGS))
        out.append(" ".join(words) + "?")
    return out
