"""A second secret corpus, for the general rules: chat-platform bot tokens, SaaS keys with no
fixed prefix beside their service's name, vault tokens, OAuth client secrets, credentials
given as command-line flags or in `.netrc`, passwords with no `:` or `=`, and prose (commit
hashes, ids, versions, talk about passwords and tokens) that must be left alone.

None of these formats is in `secret_corpus.py`; every value is built from a seeded generator.
"""

from __future__ import annotations

import random
import string

from tests.extractor.secret_corpus import Case

_rng = random.Random(20261204)
_LOWER = string.ascii_lowercase + string.digits
_ALNUM = string.ascii_letters + string.digits
_HEX = "0123456789abcdef"
_B64 = _ALNUM + "+/"
_URLSAFE = _ALNUM + "-_"


def _pick(alphabet: str, n: int) -> str:
    # Letters and digits mixed, as generated keys are.
    while True:
        value = "".join(_rng.choice(alphabet) for _ in range(n))
        if any(c.isdigit() for c in value) and any(c.isalpha() for c in value):
            return value


def _digits(n: int) -> str:
    return str(_rng.randrange(10 ** (n - 1), 10**n))


def _uuid() -> str:
    h = _pick(_HEX, 32)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def _case(name: str, template: str, secret: str) -> Case:
    return Case(name, template.format(s=secret), secret)


_pgp = "\n".join(_pick(_B64, 64) for _ in range(3))

SECRETS: tuple[Case, ...] = (
    # Chat platforms' bot and app tokens
    _case(
        "slack app-level token",
        "socket mode needs {s} in the app config",
        f"xapp-1-A{_pick(string.ascii_uppercase + string.digits, 10)}-{_digits(13)}-"
        + _pick(_HEX, 64),
    ),
    _case(
        "discord bot token",
        "the discord bot logs in with {s}",
        "MT" + _pick(_URLSAFE, 24) + "." + _pick(_URLSAFE, 6) + "." + _pick(_URLSAFE, 38),
    ),
    _case(
        "discord webhook",
        "alerts go to https://discord.com/api/webhooks/{s}",
        f"{_digits(18)}/{_pick(_URLSAFE, 68)}",
    ),
    _case(
        "telegram token without AA",
        "TG bot: {s}",
        f"{_digits(6)}:{_pick(_URLSAFE, 35)}",
    ),
    _case(
        "telegram token in a url",
        "curl https://api.telegram.org/bot{s}/getMe",
        f"{_digits(10)}:AA{_pick(_URLSAFE, 33)}",
    ),
    _case(
        "slack user token in prose",
        "use my user token {s} for search",
        "xoxp-" + _digits(12) + "-" + _digits(12) + "-" + _pick(_HEX, 32),
    ),
    # SaaS keys with no fixed prefix, beside their service's name
    _case("datadog api key", "Datadog API key {s}", _pick(_HEX, 32)),
    _case("new relic license key", "the New Relic license key is {s}", _pick(_HEX, 40)),
    _case("algolia admin key", "algolia admin key: {s} (do not ship it)", _pick(_HEX, 32)),
    _case("heroku api key uuid", "heroku api key is {s}", _uuid()),
    _case("pagerduty integration key", "PagerDuty integration key {s}", _pick(_ALNUM, 32)),
    _case("circleci token", "CircleCI personal token {s}", _pick(_HEX, 40)),
    _case("cloudflare api token", "cloudflare token for DNS edits is {s}", _pick(_URLSAFE, 40)),
    _case("vercel token", "vercel deploy token `{s}`", _pick(_ALNUM, 24)),
    _case("mailchimp key", "Mailchimp key {s}", _pick(_HEX, 32) + "-us21"),
    _case("okta api token", "okta SSWS token {s}", "00" + _pick(_URLSAFE, 40)),
    _case(
        "sentry dsn", "SENTRY_DSN is https://{s}@o4501234.ingest.sentry.io/4501", _pick(_HEX, 32)
    ),
    _case("groq key", "groq: {s}", "gsk_" + _pick(_ALNUM, 52)),
    _case("replicate token", "replicate {s}", "r8_" + _pick(_ALNUM, 37)),
    _case("notion integration secret", "notion integration {s}", "ntn_" + _pick(_ALNUM, 46)),
    _case(
        "airtable pat",
        "airtable {s}",
        "pat" + _pick(_ALNUM, 14) + "." + _pick(_HEX, 64),
    ),
    _case("postman key", "postman api {s}", "PMAK-" + _pick(_HEX, 24) + "-" + _pick(_HEX, 34)),
    _case("atlassian api token", "jira token {s}", "ATATT3xFfGF0" + _pick(_URLSAFE, 180)),
    _case("square oauth secret", "square app secret {s}", "sq0csp-" + _pick(_URLSAFE, 43)),
    _case("service token in a sentence", "the staging key for billing is {s}", _pick(_ALNUM, 28)),
    # Vault tokens
    _case("vault service token", "VAULT said {s}", "hvs." + _pick(_URLSAFE, 90)),
    _case("vault batch token", "batch token {s}", "hvb." + _pick(_URLSAFE, 120)),
    _case("vault legacy token", "vault login {s}", "s." + _pick(_ALNUM, 24)),
    # OAuth client secrets
    _case(
        "google oauth client secret", "client {s} for the web app", "GOCSPX-" + _pick(_URLSAFE, 28)
    ),
    _case(
        "azure client secret",
        "app registration secret {s}",
        _pick(_ALNUM, 3) + "8Q~" + _pick(_URLSAFE + "~.", 34),
    ),
    _case("client secret flag", "gcloud ... --client-secret {s}", _pick(_ALNUM, 30)),
    _case("oauth client secret prose", "the OAuth app's secret for prod is {s}", _pick(_HEX, 40)),
    # Credentials given on command lines
    _case("curl -u", "curl -u admin:{s} https://ci.internal/api", "Xk9-" + _pick(_ALNUM, 10)),
    _case("curl --user", "curl --user deploy:{s} -X POST $URL", _pick(_ALNUM, 14)),
    _case("sshpass", "sshpass -p {s} ssh root@10.0.0.5", "Hunter-" + _pick(_ALNUM, 8)),
    _case("docker login -p", "docker login -u ci -p {s} registry.internal", _pick(_ALNUM, 16)),
    _case("docker login --password", "docker login --password {s} ghcr.io", _pick(_ALNUM, 18)),
    _case("mysql -p attached", "mysql -u root -p{s} shop", "s3cr" + _pick(_ALNUM, 8)),
    _case("mysqldump -p", "mysqldump -uroot -p{s} --all-databases", _pick(_ALNUM, 12)),
    _case("redis-cli -a", "redis-cli -h cache -a {s} ping", _pick(_ALNUM, 20)),
    _case("openssl passin", "openssl pkcs12 -in a.p12 -passin pass:{s}", _pick(_ALNUM, 12)),
    _case("smbclient -U", "smbclient //nas/share -U backup%{s}", _pick(_ALNUM, 12)),
    _case("kubectl --token", "kubectl --token {s} get pods", _pick(_URLSAFE, 40)),
    _case("--password value", "mongosh --username app --password {s}", "pw-" + _pick(_ALNUM, 10)),
    _case("lftp -u", "lftp -u deploy,{s} sftp://files", _pick(_ALNUM, 12)),
    # .netrc and passwords with no colon or equals sign
    _case(
        "netrc one line",
        "machine api.example.com login me@example.com password {s}",
        _pick(_ALNUM, 16),
    ),
    _case(
        "netrc lines",
        "machine git.internal\n  login builder\n  password {s}\n",
        _pick(_ALNUM, 14),
    ),
    _case("password without colon", "password {s}", "s3cr3t-Hunter-" + _digits(2)),
    _case(
        "password for a thing", "the wifi password at the office: {s}", "Blue-Falcon-" + _digits(2)
    ),
    _case("passphrase", "the gpg passphrase {s}", "Kx9!mountain-" + _pick(_ALNUM, 6)),
    _case("curl attached -u", "curl -uops:{s} https://ci/api", "Zq8-" + _pick(_ALNUM, 10)),
    _case("httpie auth", "http -a admin:{s} POST :8000/api", _pick(_ALNUM, 12)),
    _case("mongo -p", "mongo -u admin -p {s} --authenticationDatabase admin", _pick(_ALNUM, 14)),
    _case("sqlcmd -P", "sqlcmd -S db01 -U sa -P {s} -Q 'select 1'", "Sa!" + _pick(_ALNUM, 10)),
    _case("ldapsearch -w", "ldapsearch -x -D cn=admin -w {s} -b dc=corp", _pick(_ALNUM, 12)),
    _case("7z -p", "7z x backup.7z -p{s}", _pick(_ALNUM, 12)),
    _case("single-dash password flag", "influx -username admin -password {s}", _pick(_ALNUM, 12)),
    _case("gpg --passphrase", "gpg --batch --passphrase {s} -d a.gpg", _pick(_ALNUM, 14)),
    _case("vault login positional", "vault login {s}", "hvs." + _pick(_URLSAFE, 24)),
    _case("sqlplus user/pw", "sqlplus scott/{s}@orcl", "T1ger" + _pick(_ALNUM, 6)),
    _case("htpasswd -b", "htpasswd -b -c .htpasswd admin {s}", _pick(_ALNUM, 12)),
    _case(
        "echo into --password-stdin",
        "echo {s} | docker login -u ci --password-stdin",
        _pick(_ALNUM, 16),
    ),
    _case("echo into sudo -S", "echo '{s}' | sudo -S apt update", "Sud0-" + _pick(_ALNUM, 8)),
    _case("netrc without login", "machine api.heroku.com password {s}", _pick(_HEX, 36)),
    _case("pgpass line", "db.internal:5432:app:app_user:{s}", _pick(_ALNUM, 16)),
    _case("wpa psk", 'network={{\n  ssid="Office"\n  psk="{s}"\n}}', "Lake" + _pick(_ALNUM, 10)),
    _case(
        "password was changed to",
        "the root password was changed to {s} today",
        "Kx7-" + _pick(_ALNUM, 8),
    ),
    _case("wireguard preshared key", "PresharedKey = {s}", _pick(_B64, 43) + "="),
    _case("slack signing secret", "slack signing secret {s}", _pick(_HEX, 32)),
    _case(
        "teams webhook",
        "post to {s}",
        "https://corp.webhook.office.com/webhookb2/"
        + _pick(_HEX, 32)
        + "@"
        + _pick(_HEX, 32)
        + "/IncomingWebhook/"
        + _pick(_HEX, 32)
        + "/"
        + _pick(_HEX, 32),
    ),
    _case("matrix access token", "matrix bot uses {s}", "syt_" + _pick(_ALNUM, 30)),
    _case(
        "mattermost hook",
        "https://chat.corp/hooks/{s}",
        _pick(string.ascii_lowercase + string.digits, 26),
    ),
    _case("plaid secret", "Plaid: {s}", _pick(_HEX, 30)),
    _case("bare telegram token", "use {s} for alerts", f"{_digits(9)}:{_pick(_URLSAFE, 35)}"),
    _case("vault legacy token bare", "token s.{s}", _pick(_ALNUM, 24)),
    _case(
        "docker hub pat",
        "docker login -u me --password-stdin <<< {s}",
        "dckr_pat_" + _pick(_URLSAFE, 27),
    ),
    _case("tailscale auth key", "TS key {s}", "tskey-auth-" + _pick(_ALNUM, 30)),
    _case("langsmith key", "langsmith {s}", "lsv2_pt_" + _pick(_HEX, 32) + "_" + _pick(_HEX, 10)),
    _case(
        "grafana service token",
        "grafana sa {s}",
        "glsa_" + _pick(_ALNUM, 32) + "_" + _pick(_HEX, 8),
    ),
    _case("square access token", "square: {s}", "EAAA" + _pick(_URLSAFE, 60)),
    _case("twilio api key sid", "twilio api {s}", "SK" + _pick(_HEX, 32)),
    _case("hubspot private app token", "hubspot {s}", "pat-na1-" + _uuid()),
    _case("pushover token", "pushover token {s}", _pick(_ALNUM, 30)),
    _case("nuget api key", "NuGet API key {s}", _pick(_LOWER, 46)),
    _case("azure devops pat", "Azure DevOps PAT {s}", _pick(string.ascii_lowercase + "234567", 52)),
    _case("bearer of words", "curl -H 'Authorization: Bearer {s}'", "gateway-secret"),
    _case("here-string into sudo", "sudo -S whoami <<< '{s}'", "Rk4-" + _pick(_ALNUM, 9)),
    _case("npmrc _auth", "_auth={s}\nalways-auth=true", _pick(_B64, 28) + "=="),
    # Other shapes
    _case(
        "pgp private key block",
        "{s}",
        f"-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n{_pgp}\n-----END PGP PRIVATE KEY BLOCK-----",
    ),
    _case(
        "age secret key",
        "age key {s}",
        "AGE-SECRET-KEY-1" + _pick(string.ascii_uppercase + "023456789", 58),
    ),
    _case(
        "azure sas signature",
        "https://acct.blob.core.windows.net/c?sv=2022-11-02&sp=r&sig={s}",
        _pick(_ALNUM, 30) + "%2B" + _pick(_ALNUM, 10) + "%3D",
    ),
    _case("api key in backticks", "API key: `{s}`", _pick(_ALNUM, 32)),
)

NOT_SECRETS: tuple[str, ...] = (
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed the token refresh",
    "cherry-pick a1b2c3d onto main",
    "merged in 3e7f1a2b9c, see the release notes",
    "the order 7c9e6679-7425-40de-944b-e07fc1f90ae7 was refunded",
    "trace 4bf92f3577b34da6a3ce929d0e0e4736 shows the slow query",
    "upgrade to v2.14.3-rc.1 then 2.15.0",
    "we pin python 3.12.4 and node 20.11.1",
    "the password reset flow sends an email",
    "the token budget is 8k per turn",
    "key: value pairs go in the YAML front matter",
    "passwordless login uses magic links",
    "rotate the secret every 90 days",
    "max_tokens: 4096",
    "the API key is stored in 1Password, never in the repo",
    "mysql -u root -p mydb prompts for the password",
    "docker login -u myuser --password-stdin < token.txt",
    "curl -u flag takes user:password",
    "docker run -u 1000:1000 -p 8080:80 nginx",
    "ssh -p 2222 deploy@host",
    "mkdir -p build/output",
    'kubectl --token "$KUBE_TOKEN" get pods',
    "image digest sha256:2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae",
    "the Slack channel #deploys gets the alerts",
    "the Telegram chat id is 123456789",
    "the Datadog dashboard shows p99 latency",
    "the key id is 3f2c9a1b7e8d4c6f0a1b2c3d4e5f6071",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl me@laptop",
    "GPG key fingerprint 3AA5C34371567BD2",
    "use Bearer authentication for the API",
    "the password must have 12 characters and a digit",
    "set PASSWORD_MIN_LENGTH in settings",
    "tokens per second went from 40 to 55",
    "the secret santa list is ready",
    "the token limit of claude-sonnet-4-5 is 200k",
    "openssl req -new -key server.key -out server.csr",
    "machine learning models need lots of data",
    "128k tokens with Meta-Llama-3.1-70B-Instruct",
    "the tokens of claude-sonnet-4-5 cost less",
    "pin the version: v2.3.1",
    "login with password reset links only",
    "docker exec -u postgres:postgres db psql",
    "git push -u origin main",
    "the vercel deployment dpl_8d6Ff2LbYkD5cTQ2Lhx9 failed",
    "the keys live under /etc/ssl/private/server2024.key",
    "the stripe customer cus_NffrFeUfNV2Hib was charged twice",
    "ping fe80:0:0:0:1 on the lan",
    "the password policy requires v2 hashing with bcrypt12x",
    "the password field uses argon2id now",
    "cat log.txt | sudo tee /var/log/app.log",
    "echo hello | wc -c",
    "10:15:30 the build started",
    "ssh -i ~/.ssh/id_ed25519 -p 2222 admin@10.0.0.5",
    "zip -r backup.zip src",
    "unzip -o archive.zip -d out",
    "git log --format=%H -n 1",
    "the user-agent is Mozilla/5.0 (X11; Linux x86_64)",
    "python -m pip install --upgrade pip",
    "npm publish --access public",
    "the fw_update_notes file lists the changes",
    "SK hynix makes memory chips",
    "a pat on the back for the team",
    "re_validate_everything_in_the_batch is slow",
    "the Azure DevOps pipeline run 20260104.3 passed",
)
