"""Credentials with no fixed shape, found by where they stand: given as command-line flags,
in `.netrc`, after "password" with no colon, after a credential word or a service's name when
the value looks generated, and in a URL's query or user part; and the chat-platform, Vault
and OAuth formats. Rules are (pattern, check, triggers), as in `secret_rules`."""

from __future__ import annotations

import re

from extractor.secret_rules import (
    Led,
    Rule,
    Words,
    a_password_for_a_user,
    a_password_in_prose,
    generated_after_a_name,
    given,
    given_mixed,
    looks_generated,
    trie_pattern,
)

_VALUE = r"(?P<secret>[A-Za-z0-9+/=_\-~][A-Za-z0-9+/=_\-.~]{14,}[A-Za-z0-9+/=_\-~])"
# Up to 40 characters of the same clause between a name and its value ("key for prod is").
_GAP = r"(?P<gap>[^\n.,;!?`]{0,40}?)[\s:=(\"'`]+"
_END = r"(?![A-Za-z0-9+/=_\-~])"
_FLAG_VALUE = r"['\"`]?(?P<secret>[^\s'\"`]+)"
# Services whose keys have no prefix of their own: their name is the only sign.
_SERVICE_NAMES = """
datadog, new relic, newrelic, algolia, pagerduty, sentry, twilio, mailgun, mailchimp,
sendgrid, heroku, circleci, travis, okta, auth0, cloudflare, vercel, netlify, jira, atlassian,
confluence, notion, airtable, linear, asana, trello, dropbox, zoom, discord, slack, telegram,
stripe, paypal, braintree, square, shopify, openai, anthropic, mistral, cohere, groq,
replicate, pinecone, weaviate, supabase, firebase, mapbox, segment, mixpanel, amplitude,
intercom, zendesk, hubspot, salesforce, snowflake, databricks, fastly, digitalocean, linode,
vultr, hetzner, azure, gcp, aws, postman, vault, docker hub, dockerhub, npm, pypi, rubygems,
huggingface, hugging face, elastic, grafana, honeycomb, rollbar, bugsnag, postmark, plaid,
coinbase, binance, alchemy, infura, etherscan, contentful, sanity, typesense, bitly, rapidapi,
shodan, virustotal, pusher, ably, twitch, spotify, launchdarkly, optimizely, snyk, sonarqube,
sonarcloud, codecov, coveralls, buildkite, jenkins, teamcity, bitrise, expo, fly.io, render,
railway, terraform cloud, pulumi, doppler, loggly, papertrail, sumo logic, splunk, dynatrace,
appdynamics, lightstep, raygun, logrocket, fullstory, hotjar, posthog, clerk, stytch, vonage,
nexmo, messagebird, plivo, sinch, brevo, sendinblue, mailjet, sparkpost, resend, customer.io,
klaviyo, braze, onesignal, mux, cloudinary, imgix, uploadcare, backblaze, wasabi, scaleway,
ovh, alibaba, gemini, perplexity, fireworks, deepseek, elevenlabs, assemblyai, deepgram,
voyage, jina, qdrant, zilliz, neon, planetscale, turso, upstash, cockroach, fauna, convex,
xata, hasura, storyblok, prismic, webflow, bigcommerce, woocommerce, klarna, adyen, razorpay,
paystack, flutterwave, mollie, docusign, calendly, typeform, monday, clickup, figma, miro,
loom, vimeo, youtube, twitter, facebook, instagram, linkedin, reddit, tiktok, webex,
mattermost, rocket.chat, zulip, whatsapp, github, gitlab, bitbucket, jfrog, artifactory,
nexus, quay, sonatype, openrouter, google, gcloud, microsoft, entra, keycloak, onelogin, duo,
1password, bitwarden, lastpass,
wandb, weights & biases, langsmith, langfuse, tavily, firecrawl, browserbase, tailscale,
pushover, nuget, gradle, maven, sonatype, terraform, ansible, nomad, consul
"""
SERVICES = tuple(re.split(r"\s*,\s*", _SERVICE_NAMES.strip()))

CREDENTIAL_RULES: tuple[Rule, ...] = (
    # Prefixed formats the provider rules above do not know
    (
        re.compile(r"\b(?:gsk|r8|ntn|pcsk|sntrys|lin_api)_[A-Za-z0-9_]{20,}"),
        None,
        ("gsk_", "r8_", "ntn_", "pcsk_", "sntrys_", "lin_api_"),
    ),
    (re.compile(r"\bsecret_[A-Za-z0-9]{40,}"), None, ("secret_",)),
    (re.compile(r"\bsyt_[A-Za-z0-9_]{20,}"), None, ("syt_",)),  # Matrix (Synapse)
    (re.compile(r"\boauth:[a-z0-9]{30}\b"), None, ("oauth:",)),  # Twitch chat
    (re.compile(r"\bEAA[A-Za-z0-9_\-]{56,}"), None, ("eaa",)),  # Facebook / WhatsApp Graph
    (re.compile(r"\bA{20,}[A-Za-z0-9%]{30,}"), None, ("aaaaaaaaaaaaaaaaaaaa",)),  # X bearer
    (
        re.compile(r"\bhttps://[a-z0-9.\-]*webhook\.office\.com/webhookb2/[^\s\"'<>]+"),
        None,
        ("webhook.office.com",),
    ),
    (re.compile(r"/hooks/(?P<secret>[A-Za-z0-9]{20,})"), None, ("/hooks/",)),
    (re.compile(r"\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}\b"), None, Led(("pat",))),
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
        Led(("s.",)),
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
    # (smbclient), `-u user,pass` (lftp), `-a user:pass` (httpie)
    (
        re.compile(
            r"(?:^|\s)(?:-u|-U|--user|--proxy-user|-a|--auth)(?:[\s=]+|(?<=-u)(?=\w))['\"]?"
            r"(?P<user>[^\s:%,'\"]+)[:%,](?P<secret>[^\s'\"]+)"
        ),
        a_password_for_a_user,
        ("-u", "--user", "--proxy-user", "-a", "--auth"),
    ),
    # --password X, -password X, --token=X, --client-secret X … (not --password-stdin)
    (
        re.compile(
            r"(?i)(?:^|\s)--?(?:[a-z0-9]+-)*(?:password|passwd|pass|passphrase|token|secret|"
            r"api-?key|access-key|secret-key|auth-token|access-token|client-secret|private-key)"
            r"(?:=|\s+)" + _FLAG_VALUE
        ),
        given,
        ("-",),
    ),
    # Short flags that take a password: sshpass -p, … login -p (docker, podman, helm, az,
    # oc), mongo -p, psexec -p, rdesktop -p, sqlcmd / bcp -P, zip -P, ldapsearch -w,
    # openssl -k, redis-cli -a
    (
        re.compile(
            r"\b(?:sshpass|login|mongo|mongosh|mongodump|mongorestore|psexec|rdesktop)\b"
            r"[^\n|;&]*?\s-p\s*" + _FLAG_VALUE
        ),
        given,
        ("sshpass", "login", "mongo", "psexec", "rdesktop"),
    ),
    (
        re.compile(r"\b(?:sqlcmd|bcp|isql|osql|zip|unzip)\b[^\n|;&]*?\s-P\s*" + _FLAG_VALUE),
        given,
        ("sqlcmd", "bcp", "isql", "osql", "zip"),
    ),
    (re.compile(r"\bldap\w*\b[^\n|;&]*?\s-w\s*" + _FLAG_VALUE), given, ("ldap",)),
    (re.compile(r"\bopenssl\b[^\n|;&]*?\s-k\s+" + _FLAG_VALUE), given, ("openssl",)),
    (re.compile(r"\bredis-cli\b[^\n|;&]*?\s-a\s+" + _FLAG_VALUE), given, ("redis-cli",)),
    # mysql -pX, 7z -pX (attached: `mysql -p db` asks for the password and names the database)
    (
        re.compile(
            r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mariadb(?:-dump)?|7z|7za|"
            r"rar|unrar)\b[^\n|;&]*?\s-p['\"]?(?P<secret>[^\s'\"\-][^\s'\"]*)"
        ),
        given,
        ("mysql", "mariadb", "7z", "rar"),
    ),
    (re.compile(r"-pass(?:in|out)?\s+pass:(?P<secret>\S+)"), given, ("pass:",)),
    (re.compile(r"\bxfreerdp\b[^\n|;&]*?\s/p:" + _FLAG_VALUE), given, ("xfreerdp",)),
    # Positional: `vault login <token>`, `cf auth <user> <password>`, `sqlplus user/pw@db`,
    # `htpasswd -b file user pw`, `net use … /user:x pw`
    (re.compile(r"\bvault\s+login\s+(?!-)" + _FLAG_VALUE), given, ("vault",)),
    (re.compile(r"\bcf\s+auth\s+\S+\s+" + _FLAG_VALUE), given, ("cf",)),
    (re.compile(r"\bsqlplus\s+[^\s/@]+/(?P<secret>[^\s@]+)"), given, ("sqlplus",)),
    (
        re.compile(
            r"\bhtpasswd\s+(?=(?:-\w+\s+)*-\w*b)(?:-\w+\s+)*[^\s-]\S*\s+[^\s-]\S*\s+" + _FLAG_VALUE
        ),
        given,
        ("htpasswd",),
    ),
    (re.compile(r"(?i)\bnet\s+use\b[^\n]*?/user:\S+\s+" + _FLAG_VALUE), given, ("net",)),
    # A password piped into a command that reads it: `echo pw | docker login
    # --password-stdin`, `| sudo -S`, `| chpasswd`, `| passwd --stdin`
    (
        re.compile(
            r"\b(?:echo|printf)\s+['\"]?(?P<secret>[^\s'\"|]+)['\"]?\s*\|[^\n|]*"
            r"(?:--password-stdin|\bsudo\s+-S|\bchpasswd\b|--stdin)"
        ),
        given,
        ("stdin", "sudo", "chpasswd"),
    ),
    # … or given as a here-string: `sudo -S <<< pw`, `--password-stdin <<< pw`
    (
        re.compile(
            r"(?:--password-stdin|\bsudo\s+-S|\bchpasswd|--stdin)\b[^\n|]*?<<<\s*" + _FLAG_VALUE
        ),
        given,
        ("stdin", "sudo", "chpasswd"),
    ),
    # .npmrc's `_auth=` (base64 user:password)
    (re.compile(r"(?m)^\s*_auth\s*=\s*['\"]?(?P<secret>[^\s'\"]+)"), given, ("_auth",)),
    # .netrc (`machine m login l password p`, on one line or several), .pgpass
    # (`host:port:db:user:password`), wpa_supplicant `psk=`, Wi-Fi QR codes, `pass=`
    (
        re.compile(
            r"(?i)\b(?:machine\s+\S+|default)(?:\s+(?:login|account)\s+\S+)*\s+password\s+"
            + _FLAG_VALUE
        ),
        given,
        Led(("machine", "default")),
    ),
    (
        re.compile(
            r"(?m)^(?:\*|localhost|[\w\-]*\.[\w.\-]+|[A-Za-z][A-Za-z\-]*):(?:\d+|\*):[^\s:]+:"
            r"[^\s:]+:(?P<secret>\S+)$"
        ),
        given,
        (":",),
    ),
    (re.compile(r"(?i)\bpsk\s*=\s*\"?(?P<secret>[^\"\s]+)"), given, ("psk",)),
    (re.compile(r"\bWIFI:[^\n]*?\bP:(?P<secret>[^;\s]+)"), given, ("wifi:",)),
    (re.compile(r"(?i)(?:^|[\s,;?&])pass=(?P<secret>[^\s,;&'\"]+)"), given, ("pass=",)),
    # "password s3cr3t-Hunter-42", "the password was changed to Kx9-lake": no colon or
    # equals, so the value must mix letters and digits and no word in between may say it is
    # something else ("password policy v2")
    (
        re.compile(
            r"(?i)\b(?:password|passwd|passphrase|pwd)\b(?P<gap>[^\n.!?:=]{0,40}?)\s['\"]?"
            r"(?P<secret>(?=[^\s'\",;]*[0-9])(?=[^\s'\",;]*[A-Za-z])[^\s'\",;]{6,}?)['\"]?"
            r"(?=[\s,;.!?)]|$)"
        ),
        a_password_in_prose,
        Led(("pass", "pwd")),
    ),
    # "the wifi password at the office: Blue-Falcon-88"
    (
        re.compile(
            r"(?i)\b(?:password|passwd|passphrase|pwd)\b[^\n:=.!?]{1,40}?[:=]\s*['\"]?"
            r"(?P<secret>[^\s'\",;]+)"
        ),
        given_mixed,
        Led(("pass", "pwd")),
    ),
    # A credential word, then within the clause a generated-looking value
    (
        re.compile(
            r"(?i)\b[a-z]*?(?:tokens?|keys?|secrets?|passwords?|passwd|passphrase|credentials?|"
            r"auth|ssws|pats?)\b" + _GAP + _VALUE + _END
        ),
        generated_after_a_name,
        # a match starts where the word ending in the name does ("apitoken")
        Led(("token", "key", "secret", "pass", "cred", "auth", "ssws", "pat"), "(?i:[a-z]*)"),
    ),
    # A service's name, then within the clause a generated-looking value
    (
        re.compile(r"(?i)\b" + trie_pattern(sorted(SERVICES)) + r"\b" + _GAP + _VALUE + _END),
        generated_after_a_name,
        Words(SERVICES),
    ),
)
