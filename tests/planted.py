"""A session full of fake secrets of every kind redaction must catch, and of look-alikes it must
leave alone (git SHAs, UUIDs). Built at run time: no secret-shaped literal sits in the repository."""

from __future__ import annotations

import base64
import json
from pathlib import Path


def _b64(obj) -> str:
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).decode().rstrip("=")


def secrets() -> dict[str, str]:
    """kind → a fake secret of that kind (what must disappear)."""
    alnum = "aB3dE5gH7jK9mN1pQ4sT6vW8yZ0cF2hL"
    return {
        "aws-access-key": "AKIA" + "IOSFODNN7FAKE123",
        "aws-secret-key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCY" + "FAKEKEY123",
        "azure-storage-key": ("Zm9vYmFy" * 11),
        "google-api-key": "AIza" + "SyD-fake0123456789abcdefghijklmnopq",
        "github-token": "ghp_" + alnum + "Xy12",
        "slack-token": "xoxb-" + "123456789012-1234567890123-" + "AbCdEfGhIjKlMnOpQrStUvWx",
        "stripe-key": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc",
        "private-key": "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEAfakefakefake\n"
                       "c2VjcmV0c2VjcmV0c2VjcmV0\n-----END RSA PRIVATE KEY-----",
        "jwt": _b64({"alg": "HS256", "typ": "JWT"}) + "." + _b64({"sub": "42", "name": "fake"})
               + "." + "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
        "basic-auth-password": "Sup3r" + "S3cretPw",
        "anthropic-key": "sk-ant-api03-" + (alnum * 3)[:86] + "-AA",
        "openai-key": "sk-proj-" + alnum + "Zz0099Yy",
        "authorization-header": "tok_9f8e7d6c5b4a39281706" + "ABCDEF",
        "env-secret": "hunter2-correct-" + "horse-battery",
        "assigned-secret": "q8Zr4Lm2" + "Xv9Tp1Ks",
    }


SHA = "3f2a9c1d4e5b6f708192a3b4c5d6e7f8091a2b3c"
SHORT_SHA = "3f2a9c1"
UUID = "550e8400-e29b-41d4-a716-446655440000"
RAW_ONLY = "ghp_" + "RawOnlyFieldToken0123456789abcdefABCD"


def write_session(folder: Path) -> Path:
    """A legion session where every secret appears in a prompt, a command, thinking, a tool
    output or a field only the raw view shows — next to SHAs and UUIDs that must survive."""
    s = secrets()
    folder.mkdir(parents=True, exist_ok=True)
    env_dump = "\n".join([
        "HOME=/home/dev", "PATH=/usr/bin:/bin", f"GIT_COMMIT={SHA}", f"RUN_ID={UUID}",
        f"ANTHROPIC_API_KEY={s['anthropic-key']}", f"DATABASE_PASSWORD={s['env-secret']}",
        f"AZURE_CONN=DefaultEndpointsProtocol=https;AccountName=x;AccountKey={s['azure-storage-key']}",
    ])
    config = "\n".join([
        f'aws_secret_access_key = "{s["aws-secret-key"]}"',
        f'client_secret = "{s["assigned-secret"]}"',
        f"GOOGLE_MAPS = \"{s['google-api-key']}\"",
        s["private-key"],
    ])
    records = [
        {"type": "user", "message_id": "p-1", "timestamp": "2025-10-21T18:59:50Z", "session_id": "s",
         "content": f"Deploy with key {s['aws-access-key']} and token {s['github-token']} "
                    f"(commit {SHORT_SHA}, run {UUID})"},
        {"type": "assistant", "message_id": "a-1", "timestamp": 1761073192.0, "session_id": "s",
         "content": f"Checking the environment. Our OpenAI key is {s['openai-key']}.",
         "metadata": {"model": "claude-sonnet-4-5", "thinking_content":
                      f"The Slack token {s['slack-token']} and the Stripe key {s['stripe-key']} "
                      f"must not leak. Commit {SHA} is fine to mention.",
                      "tool_uses": [
                          {"id": "t-env", "name": "Bash", "input": {"command": "env"}},
                          {"id": "t-curl", "name": "Bash", "input": {
                              "command": f'curl -H "Authorization: Bearer '
                                         f'{s["authorization-header"]}" '
                                         f'https://admin:{s["basic-auth-password"]}@api.example.com/v1'
                                         f' -d \'{{"jwt": "{s["jwt"]}"}}\''}}]}},
        {"type": "user", "message_id": "r-1", "timestamp": 1761073193.0, "session_id": "s",
         "content": "Tool results: 2 results",
         "metadata": {"tool_results": [
             {"tool_use_id": "t-env", "content": env_dump, "is_error": None},
             {"tool_use_id": "t-curl", "content": config, "is_error": None}]},
         "extra": {"note": f"kept only in the record: {RAW_ONLY}"}},
        {"type": "assistant", "message_id": "a-2", "timestamp": 1761073195.0, "session_id": "s",
         "content": f"Done. The key {s['aws-access-key']} was used again; git log shows {SHA} "
                    f"and run {UUID}.", "metadata": {"model": "claude-sonnet-4-5"}},
    ]
    path = folder / "messages.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path
