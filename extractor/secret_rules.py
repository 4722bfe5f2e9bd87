"""The secret formats redaction knows: provider key shapes, and general rules for credentials
written as command-line flags, in `.netrc`, after a credential word or a service's name.

A rule is (pattern, check, triggers). A pattern with a group "secret" replaces only that
group, otherwise the whole match; `check`, when given, must accept the match (a value after
"token" counts only if it looks generated, not like prose or a model name). A rule runs only
on text holding one of its triggers (lower-cased substrings), so ordinary prose costs a few
substring checks instead of every regex.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable

Check = Callable[[re.Match[str]], bool]
Rule = tuple[re.Pattern[str], Check | None, tuple[str, ...]]


def mixes(match: re.Match[str]) -> bool:
    """The value mixes letters and digits ("token_budget_configuration" does not)."""
    value = match.group("secret")
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


_HEX = re.compile(r"[0-9a-fA-F]{24,}")
_RUNS = re.compile(r"[-_.~/+=]")


def looks_generated(value: str) -> bool:
    """A value a machine made: long hex (a UUID counts), or a long run mixing letters and
    digits (upper and lower case too, when shorter). Model names, versions and paths
    ("Meta-Llama-3.1-70B-Instruct", "2.15.0-rc.1", "/etc/ssl/x.pem") are short runs."""
    if len(value) < 16 or value[0] in "/~.$<{%" or _entropy(value) < 3.0:
        return False
    if not (any(c.isdigit() for c in value) and any(c.isalpha() for c in value)):
        return False
    if _HEX.fullmatch(value.replace("-", "")):
        return True
    for run in _RUNS.split(value):
        if len(run) < 10 or not any(c.isdigit() for c in run):
            continue
        cased = any(c.isupper() for c in run) and any(c.islower() for c in run)
        if cased or (len(run) >= 12 and any(c.isalpha() for c in run)):
            return True
    return False


# Words that make the value after a credential word an identifier, not a credential.
_NOT_A_SECRET = re.compile(
    r"(?i)\b(?:commit|sha|hash|revision|version|id|ids|uuid|digest|request|trace|build|"
    r"checksum|fingerprint|public|order|run|job|issue|limit|budget|count|deployment|customer|"
    r"channel|project|account|user|org|team|workspace|invoice|charge|event|message|thread|"
    r"file|model|bucket|region|cluster)\b"
)


def generated_after_a_name(match: re.Match[str]) -> bool:
    return looks_generated(match.group("secret")) and not _NOT_A_SECRET.search(match.group("gap"))


_PLACEHOLDERS = frozenset(
    {"password", "passwd", "pass", "secret", "token", "xxx", "xxxx", "changeme", "your_password"}
)


def given(match: re.Match[str]) -> bool:
    """A credential typed in, not a variable, a prompt or a placeholder (`$PASS`, `<pw>`)."""
    value = match.group("secret")
    return (
        len(value) >= 3
        and value[0] not in "$<{%-*"
        and value.lower().strip("*") not in _PLACEHOLDERS
        and not value.isdigit()
    )


def given_mixed(match: re.Match[str]) -> bool:
    return given(match) and mixes(match)


def a_password_for_a_user(match: re.Match[str]) -> bool:
    """`user:password` after `-u`: not `uid:gid` or `user:group` (`docker run -u 1000:1000`,
    `-u app:app`)."""
    user, secret = match.group("user"), match.group("secret")
    return given(match) and secret != user and not (user.isdigit() and secret.isdigit())


_KEY_NAMES = (
    r"[a-z0-9_\-]*(?:token|secret|api[_\- ]?key|apikey|access[_\- ]?key|auth[_\- ]?key"
    r"|client[_\- ]?secret|private[_\- ]?key)[a-z0-9_\-]*"
)

# Provider key shapes and values after their names.
KNOWN_FORMATS: tuple[Rule, ...] = (
    (
        re.compile(
            r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
            r"(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)"
        ),
        None,
        ("private key",),
    ),
    (re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{8,}"), None, ("sk-ant-",)),
    (re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"), None, ("sk-",)),
    # Stripe secret and restricted keys, webhook secrets
    (re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"), None, ("k_live_", "k_test_")),
    (re.compile(r"\bwhsec_[A-Za-z0-9]{16,}"), None, ("whsec_",)),
    (
        re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"),
        None,
        ("akia", "asia", "agpa", "aida", "aroa"),
    ),
    (
        re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}\b"),
        None,
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    ),
    (re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"), None, ("github_pat_",)),
    (
        re.compile(r"\bgl(?:pat|dt|ptt|rt|cbt|oas|soat|ft)-[A-Za-z0-9_\-]{20,}"),
        None,
        ("glpat-", "gldt-", "glptt-", "glrt-", "glcbt-", "gloas-", "glsoat-", "glft-"),
    ),
    (re.compile(r"\bx(?:ox[abposre]|app)-[A-Za-z0-9\-]{10,}"), None, ("xox", "xapp-")),
    (re.compile(r"hooks\.slack\.com/services/[A-Za-z0-9/_\-]+"), None, ("hooks.slack.com",)),
    (re.compile(r"\bAIza[0-9A-Za-z_\-]{30,}"), None, ("aiza",)),
    (re.compile(r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"), None, ("sg.",)),
    (re.compile(r"\bnpm_[A-Za-z0-9]{30,}"), None, ("npm_",)),
    (re.compile(r"\bpypi-AgE[A-Za-z0-9_\-]{20,}"), None, ("pypi-age",)),
    (re.compile(r"\bhf_[A-Za-z0-9]{30,}"), None, ("hf_",)),
    (re.compile(r"\bdo[por]_v1_[a-f0-9]{40,}"), None, ("_v1_",)),
    (
        re.compile(r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
        None,
        ("shpat_", "shpca_", "shppa_", "shpss_"),
    ),
    (re.compile(r"\bdapi[a-f0-9]{32}"), None, ("dapi",)),
    # Telegram bot tokens, also inside an API URL (`/bot<token>/`)
    (
        re.compile(r"(?<![0-9])[0-9]{6,12}:(?P<secret>[A-Za-z0-9_\-]{30,})(?![A-Za-z0-9_\-])"),
        mixes,
        ("bot", "telegram", "tg", ":aa"),
    ),
    (
        re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
        None,
        ("eyj",),
    ),
    # "Bearer authentication" is prose: a token mixes letters and digits.
    (re.compile(r"(?i)\bbearer\s+(?P<secret>[A-Za-z0-9\-._~+/]{8,}=*)"), mixes, ("bearer",)),
    (re.compile(r"(?i)\bbasic\s+(?P<secret>[A-Za-z0-9+/]{12,}={0,2})"), None, ("basic",)),
    (re.compile(r"(?i)\bAccountKey=(?P<secret>[^;\s]+)"), None, ("accountkey=",)),
    (
        re.compile(
            r"(?i)\b(?:password|passwd|passphrase|pwd)\b[\"']?\s*(?:[=:]|\bis\b)\s*"
            r"(?P<secret>\"[^\"\n]*\"|'[^'\n]*'|[^\s,;]+)"
        ),
        None,
        ("pass", "pwd"),
    ),
    (
        re.compile(r"(?i)\bpw\b[\"']?\s*[=:]\s*(?P<secret>\"[^\"\n]*\"|'[^'\n]*'|[^\s,;]+)"),
        None,
        ("pw",),
    ),
    # .env style: an upper-case name ending in a secret word, `=` or `:`, any value.
    (
        re.compile(
            r"\b[A-Z][A-Z0-9_]*(?:PASSWORD|PASSWD|PASS|PWD|SECRET|TOKEN|KEY)\s*[=:]\s*[\"']?"
            r"(?P<secret>[^\s\"',;]+)"
        ),
        None,
        ("pass", "pwd", "secret", "token", "key"),
    ),
    (
        re.compile(
            r"(?i)\b" + _KEY_NAMES + r"\b[\"']?\s*(?:[=:]|\bis\b)?\s*[\"']?"
            r"(?P<secret>[A-Za-z0-9\-._~+/]{16,}=*)"
        ),
        mixes,
        ("token", "secret", "key"),
    ),
    # A URL's password (the user may be empty: redis://:pw@host).
    (re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://[^\s:/@]*:(?P<secret>[^\s@/]+)@"), None, ("://",)),
)


_VALUE = r"(?P<secret>[A-Za-z0-9+/=_\-~][A-Za-z0-9+/=_\-.~]{14,}[A-Za-z0-9+/=_\-~])"
# Up to 40 characters of the same clause between a name and its value ("key for prod is").
_GAP = r"(?P<gap>[^\n.,;!?`]{0,40}?)[\s:=(\"'`]+"
_END = r"(?![A-Za-z0-9+/=_\-~])"
_FLAG_VALUE = r"['\"]?(?P<secret>[^\s'\"]+)"
# Services whose keys have no prefix of their own: their name is the only sign.
SERVICES = (
    "datadog",
    "new relic",
    "newrelic",
    "algolia",
    "pagerduty",
    "sentry",
    "twilio",
    "mailgun",
    "mailchimp",
    "sendgrid",
    "heroku",
    "circleci",
    "travis",
    "okta",
    "auth0",
    "cloudflare",
    "vercel",
    "netlify",
    "jira",
    "atlassian",
    "confluence",
    "notion",
    "airtable",
    "linear",
    "asana",
    "trello",
    "dropbox",
    "zoom",
    "discord",
    "slack",
    "telegram",
    "stripe",
    "paypal",
    "braintree",
    "square",
    "shopify",
    "openai",
    "anthropic",
    "mistral",
    "cohere",
    "groq",
    "replicate",
    "pinecone",
    "weaviate",
    "supabase",
    "firebase",
    "mapbox",
    "segment",
    "mixpanel",
    "amplitude",
    "intercom",
    "zendesk",
    "hubspot",
    "salesforce",
    "snowflake",
    "databricks",
    "fastly",
    "digitalocean",
    "linode",
    "vultr",
    "hetzner",
    "azure",
    "gcp",
    "aws",
    "postman",
    "vault",
    "docker hub",
    "dockerhub",
    "npm",
    "pypi",
    "rubygems",
    "huggingface",
    "hugging face",
    "elastic",
    "grafana",
    "honeycomb",
    "rollbar",
    "bugsnag",
)

GENERAL_RULES: tuple[Rule, ...] = (
    # Prefixed formats the provider rules above do not know
    (
        re.compile(r"\b(?:gsk|r8|ntn|pcsk|sntrys|lin_api)_[A-Za-z0-9_]{20,}"),
        None,
        ("gsk_", "r8_", "ntn_", "pcsk_", "sntrys_", "lin_api_"),
    ),
    (re.compile(r"\bsecret_[A-Za-z0-9]{40,}"), None, ("secret_",)),
    (re.compile(r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b"), None, ("pat",)),
    (re.compile(r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}"), None, ("pmak-",)),
    (re.compile(r"\bATATT[A-Za-z0-9_\-=]{20,}"), None, ("atatt",)),
    (re.compile(r"\bsq0(?:csp|atp)-[A-Za-z0-9_\-]{20,}"), None, ("sq0",)),
    (re.compile(r"\b[a-f0-9]{32}-us[0-9]{1,2}\b"), None, ("-us",)),
    (re.compile(r"\bGOCSPX-[A-Za-z0-9_\-]{20,}"), None, ("gocspx-",)),
    (re.compile(r"\b[A-Za-z0-9_~.\-]{3}8Q~[A-Za-z0-9_~.\-]{30,}"), None, ("8q~",)),
    (re.compile(r"\bAGE-SECRET-KEY-1[0-9A-Z]{50,}"), None, ("age-secret-key-",)),
    # HashiCorp Vault tokens: service, batch, recovery; the older `s.` ones (mixed case, and
    # looked for only where Vault is named: every sentence ending in "s." would run it)
    (re.compile(r"\bhv[sbr]\.[A-Za-z0-9_\-]{20,}"), None, ("hvs.", "hvb.", "hvr.")),
    (
        re.compile(r"\b(?P<secret>s\.[A-Za-z0-9]{24})\b"),
        lambda m: looks_generated(m.group("secret")),
        ("vault",),
    ),
    # Discord bot tokens (id.timestamp.hmac) and webhooks
    (
        re.compile(r"\b[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,}"),
        None,
        ("discord", "bot", "token"),
    ),
    (
        re.compile(r"discord(?:app)?\.com/api/webhooks/[0-9]+/[A-Za-z0-9_\-]+"),
        None,
        ("discord",),
    ),
    # A URL's user part that is a key (a Sentry DSN), and credentials in its query
    (
        re.compile(r"(?i)\b[a-z][a-z0-9+.\-]*://(?P<secret>[A-Za-z0-9]{16,})@"),
        lambda m: looks_generated(m.group("secret")),
        ("://",),
    ),
    (
        re.compile(
            r"(?i)[?&](?:sig|signature|x-amz-signature|x-goog-signature|x-amz-security-token|"
            r"token|access_token|refresh_token|id_token|api[_\-]?key|key|secret|"
            r"client_secret|password|passwd|pwd|auth)=(?P<secret>[^&\s#\"']{8,})"
        ),
        None,
        (
            "sig=",
            "signature=",
            "token=",
            "key=",
            "secret=",
            "password=",
            "passwd=",
            "pwd=",
            "auth=",
        ),
    ),
    # Credentials given as command-line flags: `-u user:pass` (curl, wget), `-U user%pass`
    # (smbclient), `-u user,pass` (lftp)
    (
        re.compile(
            r"(?:^|\s)(?:-u|-U|--user|--proxy-user)[\s=]+['\"]?(?P<user>[^\s:%,'\"]+)[:%,]"
            r"(?P<secret>[^\s'\"]+)"
        ),
        a_password_for_a_user,
        ("-u", "--user", "--proxy-user"),
    ),
    # --password X, --token=X, --client-secret X … (not --password-stdin, --token-file)
    (
        re.compile(
            r"(?i)(?:^|\s)--(?:[a-z0-9]+-)*(?:password|passwd|pass|token|secret|api-?key|"
            r"access-key|secret-key|auth-token|client-secret|private-key)(?:=|\s+)" + _FLAG_VALUE
        ),
        given,
        ("--",),
    ),
    (re.compile(r"\bsshpass\s+-p\s*" + _FLAG_VALUE), given, ("sshpass",)),
    # docker / podman / helm registry / az / oc login … -p X
    (re.compile(r"\blogin\b[^\n|;&]*?\s-p\s*" + _FLAG_VALUE), given, ("login",)),
    # mysql -pX (attached: `mysql -p db` asks for the password and names the database)
    (
        re.compile(
            r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mariadb(?:-dump)?)\b"
            r"[^\n|;&]*?\s-p(?P<secret>[^\s'\"\-][^\s'\"]*)"
        ),
        given,
        ("mysql", "mariadb"),
    ),
    (re.compile(r"\bredis-cli\b[^\n|;&]*?\s-a\s+" + _FLAG_VALUE), given, ("redis-cli",)),
    (re.compile(r"-pass(?:in|out)?\s+pass:(?P<secret>\S+)"), given, ("pass:",)),
    # .netrc: `machine m login l password p`, on one line or several
    (
        re.compile(r"(?i)\b(?:machine\s+\S+|default)\s+login\s+\S+\s+password\s+" + _FLAG_VALUE),
        given,
        ("machine", "default"),
    ),
    # "password s3cr3t-Hunter-42": no colon or equals, so the value must look like one
    (
        re.compile(r"(?i)\b(?:password|passwd|passphrase|pwd)\s+['\"]?(?P<secret>[^\s'\"]{6,})"),
        given_mixed,
        ("pass", "pwd"),
    ),
    # "the wifi password at the office: Blue-Falcon-88"
    (
        re.compile(
            r"(?i)\b(?:password|passwd|passphrase|pwd)\b[^\n:=.!?]{1,40}?[:=]\s*['\"]?"
            r"(?P<secret>[^\s'\",;]+)"
        ),
        given_mixed,
        ("pass", "pwd"),
    ),
    # A credential word, then within the clause a generated-looking value
    (
        re.compile(
            r"(?i)\b(?:tokens?|keys?|secrets?|passwords?|passwd|passphrase|credentials?|apikey|"
            r"auth|ssws)\b" + _GAP + _VALUE + _END
        ),
        generated_after_a_name,
        ("token", "key", "secret", "pass", "cred", "auth", "ssws"),
    ),
    # A service's name, then within the clause a generated-looking value
    (
        re.compile(
            r"(?i)\b(?:" + "|".join(re.escape(s) for s in SERVICES) + r")\b" + _GAP + _VALUE + _END
        ),
        generated_after_a_name,
        SERVICES,
    ),
)

RULES: tuple[Rule, ...] = KNOWN_FORMATS + GENERAL_RULES
