"""Render the report of a failed agent_triage run: the HTML in headless Chromium, the Mermaid
DAG with mermaid-cli. Not part of the test suite (it needs a browser).

Run from the repository root: python scripts/make_report_screenshot.py
It needs ``chromium`` on PATH (Debian: ``apt-get install chromium``) and, for the Mermaid
picture, ``mmdc`` on PATH or in ``$MMDC`` (``npm install @mermaid-js/mermaid-cli`` with
``PUPPETEER_SKIP_DOWNLOAD=1``; it is pointed at the same Chromium).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "screenshots"
# A ticket that is not text makes classify fail; the customer id is redacted.
PAYLOAD = json.dumps({"ticket": 42, "customer": "c-1042", "seed": 10})


def harness(*args: str, cwd: Path) -> None:
    subprocess.run([sys.executable, "-m", "harness_tui", *args], cwd=cwd, check=False)


def main() -> None:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        sys.exit("chromium is not on PATH")
    with tempfile.TemporaryDirectory(prefix="harness-report-") as folder:
        work = Path(folder)
        shutil.copytree(ROOT / "workflows", work / "workflows")
        export = "agent_triage-failed.json"
        run = ["run", "workflows/agent_triage.yaml", "--payload", PAYLOAD, "--no-store", "-q"]
        harness(*run, "--redact", "customer", "--export", export, cwd=work)
        harness("report", export, "--format", "html", "-o", "report.html", cwd=work)
        harness("report", export, "-o", "report.md", cwd=work)
        subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
             "--window-size=1100,1900", f"--screenshot={OUT / 'report.png'}",
             (work / "report.html").as_uri()],
            check=True, capture_output=True,
        )  # fmt: skip
        mmdc = os.environ.get("MMDC") or shutil.which("mmdc")
        if mmdc is None:
            print("mmdc not found: the Mermaid DAG was not rendered")
            return
        markdown = (work / "report.md").read_text(encoding="utf-8")
        found = re.search(r"```mermaid\n(.*?)\n```", markdown, re.DOTALL)
        assert found is not None
        (work / "dag.mmd").write_text(found.group(1) + "\n", encoding="utf-8")
        config = {"executablePath": chromium, "args": ["--no-sandbox", "--disable-gpu"]}
        (work / "puppeteer.json").write_text(json.dumps(config), encoding="utf-8")
        subprocess.run(
            [mmdc, "-p", str(work / "puppeteer.json"), "-i", str(work / "dag.mmd"),
             "-o", str(OUT / "report-mermaid.png"), "-b", "white"],
            check=True, capture_output=True,
        )  # fmt: skip


if __name__ == "__main__":
    main()
