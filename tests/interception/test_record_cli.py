"""``run --record``, then ``verify --against --offline`` with the model server stopped."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .fake_model import FakeModel

TASKS = """
import random

import httpx
import openai
import requests

PROMPT = "Say hello"
ASIDE = "Say nothing"
CHAT = "/v1/chat/completions"


def _body(inputs, content, **extra):
    return {"model": "m", "messages": [{"role": "user", "content": content}],
            "metadata": {"customer": inputs["payload"]["customer"]}, **extra}


def ask_httpx(inputs):
    url = inputs["payload"]["url"]
    with httpx.Client() as client:
        plain = client.post(url + CHAT, json=_body(inputs, PROMPT)).json()
        with client.stream("POST", url + CHAT, json=_body(inputs, PROMPT, stream=True)) as reply:
            streamed = "".join(reply.iter_text())
    return {"plain": plain["choices"][0]["message"]["content"], "streamed": streamed}


def ask_requests(inputs):
    url = inputs["payload"]["url"] + CHAT
    headers = {"Authorization": "Bearer sk-live-secret"}
    plain = requests.post(url, json=_body(inputs, "r"), headers=headers, timeout=5).json()
    with requests.post(url, json=_body(inputs, "r", stream=True), stream=True, timeout=5) as s:
        streamed = b"".join(s.iter_content(7)).decode()
    return {"plain": plain["choices"][0]["message"]["content"], "streamed": streamed}


def ask_openai(inputs):
    client = openai.OpenAI(
        base_url=inputs["payload"]["url"] + "/v1", api_key="sk-openai-secret", max_retries=0
    )
    messages = [{"role": "user", "content": "o"}]
    plain = client.chat.completions.create(model="o", messages=messages)
    parts = client.chat.completions.create(model="o", messages=messages, stream=True)
    return {
        "plain": plain.choices[0].message.content,
        "streamed": "".join(p.choices[0].delta.content or "" for p in parts if p.choices),
    }


def aside(inputs):
    try:
        httpx.post(inputs["payload"]["url"] + CHAT, json=_body(inputs, ASIDE))
    except Exception:
        return "carried on"
    return inputs["io"].call("dice", random.random)
"""

WORKFLOW = """
name: model_calls
on_failure: continue
payload: {url: "URL", customer: cust-4242}
tasks:
  ask_httpx: {run: "MODULE:ask_httpx"}
  ask_requests: {run: "MODULE:ask_requests"}
  ask_openai: {run: "MODULE:ask_openai"}
  aside: {run: "MODULE:aside"}
"""


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, "-m", "harness_tui", *args],
        capture_output=True, text=True, cwd=cwd, env=env, timeout=120,
    )  # fmt: skip


@pytest.mark.slow  # five CLI processes importing the openai client: about 12 s
def test_record_then_verify_offline_with_the_server_stopped(
    fake_model: FakeModel, tmp_path: Path
) -> None:
    module = "model_calls_cli"
    (tmp_path / f"{module}.py").write_text(TASKS, encoding="utf-8")
    flow = tmp_path / "flow.yaml"
    flow.write_text(
        WORKFLOW.replace("URL", fake_model.url).replace("MODULE", module), encoding="utf-8"
    )
    ran = _cli("run", str(flow), "--record", "--no-store", "--export", "run.json", "-q",
               cwd=tmp_path)  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    redacted = _cli("run", str(flow), "--record", "--no-store", "--export", "red.json", "-q",
                    "--redact", "customer", cwd=tmp_path)  # fmt: skip
    assert redacted.returncode == 0, redacted.stderr
    fake_model.stop()

    document = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert document["format_version"] == "1.2"
    io = {a["task"]: a["io"] for a in document["attempts"] if a.get("io")}
    assert [len(io[t]) for t in ("ask_httpx", "ask_requests", "ask_openai", "aside")] == [
        2,
        2,
        2,
        2,
    ]
    assert io["aside"][1]["kind"] == "call" and isinstance(io["aside"][1]["value"], float)

    text = (tmp_path / "red.json").read_text(encoding="utf-8")
    assert "cust-4242" not in text
    for secret in ("sk-live-secret", "sk-openai-secret", "server-secret"):
        assert secret not in text
    for header in ("authorization", "set-cookie", "x-api-key", "cookie"):
        assert f'"{header}"' not in text.lower()

    verified = _cli("verify", str(flow), "--against", "run.json", "--offline", cwd=tmp_path)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "identical to run.json" in verified.stdout
    real = json.dumps({"url": fake_model.url, "customer": "cust-4242"})
    (tmp_path / "real.json").write_text(real, encoding="utf-8")
    from_redacted = _cli("verify", str(flow), "--against", "red.json", "--offline",
                         "--payload", "@real.json", cwd=tmp_path)  # fmt: skip
    assert from_redacted.returncode == 0, from_redacted.stdout + from_redacted.stderr
    assert "identical to red.json" in from_redacted.stdout

    rerun = _cli("rerun", "run.json", "--from", "ask_httpx", "--offline", "--no-store",
                 "--export", "fork.json", "-q", cwd=tmp_path)  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr
    fork = json.loads((tmp_path / "fork.json").read_text(encoding="utf-8"))
    assert fork["results"] == document["results"]
    assert fork["digests"]["results"] == document["digests"]["results"]

    changed = TASKS.replace('"Say hello"', '"Say goodbye"').replace('"Say nothing"', '"Hush"')
    (tmp_path / f"{module}.py").write_text(changed, encoding="utf-8")
    diverged = _cli("verify", str(flow), "--against", "run.json", "--offline", cwd=tmp_path)
    assert diverged.returncode == 1, diverged.stdout + diverged.stderr
    lines = diverged.stdout.splitlines()
    asked = next(line for line in lines if "task 'ask_httpx'" in line)
    assert f"POST {fake_model.url}/v1/chat/completions" in asked
    assert "$.messages[0].content changed" in asked
    assert any("task 'aside'" in line for line in lines)  # it swallowed the refusal
