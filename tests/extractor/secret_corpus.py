"""Secret-looking strings in the formats people paste into an agent, and prose that is not one.

Every value is built here from a seeded generator (none is a real credential): the shape of
each provider's format with random characters in it. `SECRETS` pairs a name with a line as it
would appear in a turn and the secret part of that line; `NOT_SECRETS` are lines redaction must
leave alone.
"""

from __future__ import annotations

import base64
import random
import string
from dataclasses import dataclass

_rng = random.Random(20261201)
_ALNUM = string.ascii_letters + string.digits
_UPPER = string.ascii_uppercase + string.digits
_HEX = "0123456789abcdef"


def _pick(alphabet: str, n: int) -> str:
    # Letters and digits mixed (when the alphabet has both), as generated keys are.
    mixed = any(c.isdigit() for c in alphabet) and any(c.isalpha() for c in alphabet)
    while True:
        value = "".join(_rng.choice(alphabet) for _ in range(n))
        if not mixed or (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
            return value


def _b64url(n: int) -> str:
    return _pick(_ALNUM + "-_", n)


@dataclass(frozen=True)
class Case:
    name: str
    line: str
    secret: str


def _case(name: str, template: str, secret: str) -> Case:
    return Case(name, template.format(s=secret), secret)


_jwt = ".".join(
    base64.urlsafe_b64encode(part.encode()).decode().rstrip("=")
    for part in ('{"alg":"HS256","typ":"JWT"}', '{"sub":"1234","name":"Test","iat":1516239022}')
)
_jwt += "." + _b64url(43)
_pem_body = "\n".join(_pick(_ALNUM + "+/", 64) for _ in range(4))
_rsa = f"-----BEGIN RSA PRIVATE KEY-----\n{_pem_body}\n-----END RSA PRIVATE KEY-----"
_openssh = f"-----BEGIN OPENSSH PRIVATE KEY-----\n{_pem_body}\n-----END OPENSSH PRIVATE KEY-----"
_basic = base64.b64encode(f"deploy:{_pick(_ALNUM, 14)}".encode()).decode()

SECRETS: tuple[Case, ...] = (
    _case("openai project key", "my key is {s} use it", "sk-proj-" + _b64url(48)),
    _case("openai legacy key", "OPENAI_API_KEY={s}", "sk-" + _pick(_ALNUM, 48)),
    _case("anthropic key", "use {s} for claude", "sk-ant-api03-" + _b64url(60)),
    _case("stripe live secret", "stripe.api_key = '{s}'", "sk_live_" + _pick(_ALNUM, 24)),
    _case("stripe test secret", "testing with {s}", "sk_test_" + _pick(_ALNUM, 24)),
    _case("stripe restricted", "the key {s} only reads", "rk_live_" + _pick(_ALNUM, 24)),
    _case("stripe webhook", "STRIPE_WEBHOOK={s}", "whsec_" + _pick(_ALNUM, 32)),
    _case("gitlab pat", "git clone with {s} please", "glpat-" + _pick(_ALNUM + "-_", 20)),
    _case("github classic", "token {s} for the CI", "ghp_" + _pick(_ALNUM, 36)),
    _case("github fine-grained", "{s}", "github_pat_" + _pick(_ALNUM + "_", 82)),
    _case("aws access key id", "aws_access_key_id = {s}", "AKIA" + _pick(_UPPER, 16)),
    _case("aws secret key", "aws_secret_access_key = {s}", _pick(_ALNUM + "/+", 40)),
    _case(
        "slack bot token", "SLACK={s}", "xoxb-" + _pick("0123456789", 12) + "-" + _pick(_ALNUM, 24)
    ),
    _case(
        "slack webhook",
        "post to {s}",
        "https://hooks.slack.com/services/T"
        + _pick(_UPPER, 8)
        + "/B"
        + _pick(_UPPER, 8)
        + "/"
        + _pick(_ALNUM, 24),
    ),
    _case("google api key", "maps key {s}", "AIza" + _pick(_ALNUM + "-_", 35)),
    _case("jwt", "Cookie: session={s}", _jwt),
    _case("rsa private key", "here is the key:\n{s}\nthanks", _rsa),
    _case("openssh private key", "{s}", _openssh),
    _case(
        "postgres url", "DATABASE_URL=postgres://app:{s}@db.internal:5432/main", _pick(_ALNUM, 16)
    ),
    _case("mongodb srv url", "mongodb+srv://admin:{s}@cluster0.example.net/db", _pick(_ALNUM, 14)),
    _case("redis url without user", "redis://:{s}@cache:6379/0", _pick(_ALNUM, 18)),
    _case("db password env", "DB_PASSWORD={s}", _pick(_ALNUM, 14)),
    _case("mysql root password", "MYSQL_ROOT_PASSWORD={s}", _pick(_ALNUM, 12)),
    _case("pgpassword", "export PGPASSWORD='{s}'", _pick(_ALNUM + "!#%", 12)),
    _case("pw colon", "pw: {s}", _pick(_ALNUM, 10)),
    _case("yaml password", "  password: {s}", _pick(_ALNUM, 11)),
    _case("json password", '{{"user": "svc", "password": "{s}"}}', _pick(_ALNUM, 13)),
    _case("env api key", "API_KEY={s}", _pick(_ALNUM, 32)),
    _case("django secret key", "SECRET_KEY={s}", _pick(_ALNUM + "!@#%^&*(-_=+)", 50)),
    _case("env auth token", "AUTH_TOKEN={s}", _pick(_HEX, 40)),
    _case("twilio auth token", "TWILIO_AUTH_TOKEN={s}", _pick(_HEX, 32)),
    _case("sendgrid key", "SENDGRID={s}", "SG." + _b64url(22) + "." + _b64url(43)),
    _case("npm token", "//registry/:_authToken={s}", "npm_" + _pick(_ALNUM, 36)),
    _case("pypi token", "password = {s}", "pypi-AgEIcHlwaS5vcmc" + _b64url(70)),
    _case("hugging face token", "HF said {s} works", "hf_" + _pick(_ALNUM, 34)),
    _case("digitalocean token", "doctl auth init -t {s}", "dop_v1_" + _pick(_HEX, 64)),
    _case("shopify token", "X-Shopify-Access-Token: {s}", "shpat_" + _pick(_HEX, 32)),
    _case("telegram bot token", "bot {s} sends alerts", "123456789:AA" + _pick(_ALNUM + "_-", 33)),
    _case(
        "azure storage key",
        "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={s};",
        _pick(_ALNUM + "+/", 86) + "==",
    ),
    _case("basic auth header", "Authorization: Basic {s}", _basic),
    _case("bearer header", "curl -H 'Authorization: Bearer {s}'", _b64url(40)),
    _case("client secret", "client_secret: {s}", _pick(_ALNUM, 34)),
    _case("private key env", "GPG_PRIVATE_KEY={s}", _pick(_ALNUM, 40)),
    _case("databricks token", "token dapi{s}", _pick(_HEX, 32)),
)

NOT_SECRETS: tuple[str, ...] = (
    "the token budget is 2,000 tokens per turn",
    "The password field is required on the signup form.",
    "commit 3f2c9a1b7e8d4c6f0a1b2c3d4e5f60718293a4b5 fixed it",
    "request id 0b5e7c1e-9b1d-4f2a-8e8e-3f2a1c9d7b6e failed",
    "use scikit-learn, not sk-learn",
    "key: value pairs are fine in YAML",
    "Set MAX_TOKENS=4096 and TIMEOUT=30",
    "the api key rotation policy is 90 days",
    "see https://example.com/docs/auth for the login flow",
    "passwords must be at least 12 characters",
    "our primary_key is the user id",
    "pw is short for password",
)
