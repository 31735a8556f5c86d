"""An LLM-agent-style support triage, with a simulated model.

The "model" draws from a random generator seeded by the payload's seed and the attempt
number, so a run is reproducible: the same payload gives the same overloads, the same retries
and the same reply, which is what makes its trace worth attaching to a bug report. It is
reached through ``inputs["io"].call``, as a real model client would be wrapped: ``run
--record`` keeps what it answered (chat-shaped, so the workbench's calls view shows a
conversation), and ``rerun --set-answer draft_reply#1:1=...`` changes that answer.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

Inputs = Mapping[str, Any]

KNOWLEDGE_BASE = {
    "billing": [
        "Refunds are issued within 5 business days.",
        "Invoices are in Settings > Billing.",
    ],
    "outage": ["Status page: status.example.com.", "Incidents are updated every 30 minutes."],
    "account": ["Password resets expire after 1 hour.", "2FA can be reset by support."],
    "other": ["Our support hours are 9:00-17:00 CET."],
}
KEYWORDS = {
    "billing": ("refund", "invoice", "charge", "billing"),
    "outage": ("down", "outage", "error 500", "not loading"),
    "account": ("password", "login", "2fa", "locked"),
}


def _rng(inputs: Inputs, salt: str) -> random.Random:
    seed = inputs["payload"].get("seed", 0)
    return random.Random(f"{seed}:{salt}:{inputs['task']['attempt']}")


def classify(inputs: Inputs) -> dict[str, Any]:
    text = inputs["payload"]["ticket"].lower()
    category = next((c for c, words in KEYWORDS.items() if any(w in text for w in words)), "other")
    urgent = any(word in text for word in ("urgent", "asap", "down", "immediately"))
    return {"category": category, "priority": "high" if urgent else "normal"}


def search_kb(inputs: Inputs) -> dict[str, Any]:
    category = inputs["context"]["results"]["classify"]["category"]
    limit = inputs["params"].get("limit", 2)
    return {"articles": KNOWLEDGE_BASE[category][:limit]}


def customer_history(inputs: Inputs) -> dict[str, Any]:
    rng = _rng(inputs, "history")
    return {
        "customer": inputs["payload"]["customer"],
        "open_tickets": rng.randint(0, 3),
        "plan": rng.choice(["free", "pro", "enterprise"]),
    }


def simulated_model(messages: list[dict[str, str]], seed: str, overload_rate: float) -> Any:
    """A chat model's answer to ``messages``: sometimes overloaded, else a reply in a tone
    drawn from ``seed``."""
    rng = random.Random(seed)
    if rng.random() < overload_rate:
        raise RuntimeError("model overloaded (simulated HTTP 529)")
    tone = rng.choice(["friendly", "concise", "formal"])
    content = f"[{tone}] {messages[-1]['content']}"
    return {"choices": [{"message": {"role": "assistant", "content": content}}], "tone": tone}


def draft_reply(inputs: Inputs) -> dict[str, Any]:
    """The model call: sometimes overloaded, retried at a fixed interval."""
    results = inputs["context"]["results"]
    articles = results["search_kb"]["articles"]
    draft = f"Thanks for reaching out about {results['classify']['category']}. "
    draft += " ".join(articles)
    messages = [
        {"role": "system", "content": "Reply to the customer, using only the articles given."},
        {"role": "user", "content": draft},
    ]
    seed = f"{inputs['payload'].get('seed', 0)}:draft:{inputs['task']['attempt']}"
    rate = inputs["params"].get("overload_rate", 0.5)
    answer = inputs["io"].call("model", simulated_model, messages, seed, rate)
    text = answer["choices"][0]["message"]["content"]
    return {"reply": text, "tone": answer["tone"], "tokens": len(text.split())}


def canned_reply(inputs: Inputs) -> dict[str, Any]:
    return {"reply": "Thanks for your message; a person will get back to you.", "tone": "canned"}


def check_policy(inputs: Inputs) -> dict[str, Any]:
    """A slow policy service: it sleeps (through the run's clock) past its timeout."""
    inputs.clock.sleep(inputs["params"]["latency"])  # type: ignore[attr-defined]
    return {"approved": True}


def policy_unavailable(inputs: Inputs) -> dict[str, Any]:
    return {"approved": False, "reason": "policy service timed out; needs human review"}


def finalize(inputs: Inputs) -> dict[str, Any]:
    results = inputs["context"]["results"]
    policy = results["check_policy"]
    return {
        "send": policy["approved"],
        "reply": results["draft_reply"]["reply"],
        "escalated": "escalate" in results,
        "review_reason": policy.get("reason"),
    }
