"""Redaction: every kind of secret found and numbered, look-alikes (SHAs, UUIDs, code) left alone,
events and raw records redacted without touching shared data."""

import json

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viewer import redact
from viewer.model import Event, Ref, Text, ToolResult, ToolUse
from viewer.redact import Redactor

import planted

SECRETS = planted.secrets()


@pytest.fixture(scope="module")
def red():
    return Redactor()


# each secret in the setting where agent transcripts carry it
CONTEXTS = {
    "aws-access-key": "aws configure set aws_access_key_id {}",
    "aws-secret-key": 'aws_secret_access_key = "{}"',
    "azure-storage-key": "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={};Suffix=x",
    "google-api-key": "https://maps.googleapis.com/maps/api?key={}",
    "github-token": "git remote set-url origin https://x:{}@github.com/o/r",
    "slack-token": "SLACK: {}",
    "stripe-key": "stripe.api_key = '{}'",
    "private-key": "id_rsa:\n{}\n",
    "jwt": "cookie session={}; Path=/",
    "basic-auth-password": "postgres://admin:{}@db.internal:5432/app",
    "anthropic-key": "client = Anthropic(api_key='{}')",
    "openai-key": "OPENAI: {}",
    "authorization-header": "Authorization: Bearer {}",
    "env-secret": "PATH=/usr/bin\nDB_PASSWORD={}\nHOME=/root",
    "assigned-secret": 'config = {{"client_secret": "{}"}}',
}


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_each_kind_is_found_and_replaced(red, kind):
    text = CONTEXTS[kind].format(SECRETS[kind])
    out = red.text(text)
    assert SECRETS[kind] not in out
    marker = redact.MARKER.search(out)
    assert marker, out
    # basic auth inside a GitHub URL is still a GitHub token: the more specific rule names it
    assert marker.group(1) == kind or (kind == "github-token" and "github-token" in out)


def test_the_same_secret_keeps_its_number_and_others_get_new_ones(red):
    r = Redactor()
    a, b = SECRETS["github-token"], "ghp_" + "Z" * 36
    out = r.text(f"first {a}, then {b}, then {a} again")
    assert out == ("first [redacted: github-token #1], then [redacted: github-token #2], "
                   "then [redacted: github-token #1] again")
    assert r.text(f"later: {b}") == "later: [redacted: github-token #2]"


KEEP = [
    f"commit {planted.SHA} (HEAD -> main)\nAuthor: dev\n\n    fix window",
    f"git checkout {planted.SHORT_SHA} && git log --oneline -3",
    f"run id {planted.UUID}, request 6ba7b810-9dad-11d1-80b4-00c04fd430c8",
    f'{{"id": "{planted.SHA}", "uuid": "{planted.UUID}", "parentUuid": "{planted.UUID}"}}',
    f"GIT_COMMIT={planted.SHA}\nRUN_ID={planted.UUID}",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "max_tokens: 1024\ninput_tokens=5021\ntoken_count = len(tokens)",
    "api_key = settings.API_KEY\npassword: str = None\nself.secret = secret",
    "token = os.environ['GITHUB_TOKEN']\npassword = getpass()\napi_key=${API_KEY}",
    "XAUTHORITY=/home/u/.Xauthority\nSSH_AUTH_SOCK=/tmp/ssh-XXXX/agent.42\nKEYTIMEOUT=1",
    "PASSWORD_STORE_DIR=~/.password-store\nGPG_KEY_PATH=/etc/keys/pub.asc",
    "The tokenizer counts tokens; the secret of a good test is a clear name.",
    "Authorization: Bearer $TOKEN\nAuthorization: Bearer <your token>",
    "https://example.com/docs?page=2 and postgres://localhost:5432/app",
    "toolu_01AbCdEfGhIjKlMnOpQrStUv msg_01XyZaBcDeFgHiJkLmNoPq req_011CVbTqYj8LnQf3yH2mRk",
]


@pytest.mark.parametrize("text", KEEP)
def test_look_alikes_are_not_secrets(red, text):
    assert red.text(text) == text


def test_redaction_is_idempotent(red):
    text = "\n".join(CONTEXTS[k].format(v) for k, v in SECRETS.items())
    once = red.text(text)
    assert red.text(once) == once
    for v in SECRETS.values():
        assert v not in once


def test_a_private_key_goes_whole_even_json_escaped(red):
    key = SECRETS["private-key"]
    record = json.dumps({"type": "user", "content": f"here:\n{key}\nthanks"})
    assert "\\n" in record  # the key's newlines are escapes in the raw line
    out = red.raw(record.encode())
    value = orjson.loads(out)
    assert value["content"] == "here:\n[redacted: private-key #1]\nthanks"
    # and as plain text (the head of a huge line is not JSON): the whole block still goes
    assert "MIIE" not in red.text(record[: len(record) - 5])


def test_raw_records_keep_their_shape(red):
    rec = {"type": "user", "content": "no secrets", "nested": {"list": [1, "two", None]}}
    data = orjson.dumps(rec)
    assert red.raw(data) is data  # nothing found: the same bytes
    bad = b'{"broken": "AKIA' + b"IOSFODNN7FAKE123"
    assert red.raw(bad) == b'{"broken": "[redacted: aws-access-key #1]'


def test_an_event_is_redacted_everywhere_without_touching_shared_data():
    r = Redactor()
    key = SECRETS["openai-key"]
    shared_input = {"command": f"export OPENAI_API_KEY={key}", "timeout": 5}
    record = {"content": f"use {key}", "input": shared_input}
    ev = Event(Ref("main", 1, 0, 10), "assistant", author="agent", meta=record, blocks=[
        Text(f"my key is {key}"),
        ToolUse("t1", "Bash", shared_input),
        ToolResult("t1", [Text(f"echo {key}", markdown=False)]),
    ])
    r.event(ev)
    marker = "[redacted: openai-key #1]"
    assert ev.blocks[0].text == f"my key is {marker}"
    assert ev.blocks[1].input == {"command": f"export OPENAI_API_KEY={marker}", "timeout": 5}
    assert ev.blocks[2].content[0].text == f"echo {marker}"
    assert ev.meta["content"] == f"use {marker}"
    # the record (which a document cache may hold) is untouched
    assert shared_input["command"].endswith(key) and record["content"].endswith(key)


def test_base64_payloads_are_not_scanned(red):
    import base64

    payload = base64.b64encode(b"AKIA" + b"IOSFODNN7FAKE123" * 40).decode()
    assert red.value(payload) is payload


def test_tally_counts_secrets_and_places():
    t = redact.Tally()
    t.add_text("[redacted: jwt #1] x [redacted: jwt #1] [redacted: jwt #2] [redacted: env-secret #1]")
    assert t.rows() == [("jwt", 2, 3), ("env-secret", 1, 1)]
    assert t.total == 3


def test_hints_never_give_the_value_away():
    assert redact.hint(SECRETS["github-token"]) == "ghp_… (40 chars)"
    assert redact.hint("hunter2pass") == "(11 chars)"


# Every rule runs only where its trigger fires: a trigger that misses a match would let a secret
# through. Random text around each planted secret must never fool the trigger set.
_noise = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@settings(max_examples=300, deadline=None)
@given(before=_noise, after=_noise, kind=st.sampled_from(sorted(CONTEXTS)))
def test_triggers_cover_their_rules(red, before, after, kind):
    text = before + CONTEXTS[kind].format(SECRETS[kind]) + after
    fired = set(red.detector._set.Match(text) or ())
    for i, rule in enumerate(red.detector.rules):
        found = [m for m in rule.regex.finditer(text)
                 if m.group(rule.group) and (rule.check is None or rule.check(m, m.group(rule.group)))]
        if found:
            assert i in fired, (rule.kind, rule.trigger)
    assert SECRETS[kind] not in red.text(text)
