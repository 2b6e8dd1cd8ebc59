"""Cancel a flow run as a user does, in headless Chromium. Run by the browser venv's python
(playwright), not by pytest:

    python browser_cancel.py CHROMIUM SHOTS_DIR RUN_ID DASHBOARD_URL

Both of Prefect's dashboards, on the run's page while it runs: the V2 dashboard (``/v2``) must offer
Cancel in the run's menu (``v2-menu.png``); in the V1 dashboard (the address the command prints,
``View at ...``) its Cancel button is clicked (``before.png``) and the dialog confirmed
(``cancelling.png``); then the page is reloaded until the run shows Cancelled (``cancelled.png``).
Prints one JSON line per page with what it offered; exits 3 when a page offers no Cancel.
"""

from __future__ import annotations

import json
import re
import sys
import time
from typing import Any

from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import sync_playwright

FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run",
]  # fmt: skip
PAGE_SECONDS = 120  # a loaded 2-core machine: the dashboard's first load compiles a large bundle
FINAL_SECONDS = 300


def loaded(page: Any) -> None:
    """The run's page with its state, its logs (a training step's line) and its buttons drawn (they
    fade in after the state)."""
    page.get_by_text("Running", exact=True).first.wait_for()
    page.get_by_text(re.compile(r"^step \d+/\d+")).first.wait_for()
    page.wait_for_timeout(2000)


def main(chromium: str, shots: str, run_id: str, dashboard: str) -> int:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=FLAGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.set_default_timeout(PAGE_SECONDS * 1000)

        page.goto(f"{dashboard}/v2/runs/flow-run/{run_id}")
        loaded(page)
        page.get_by_role("button", name="Open menu").click()
        page.get_by_role("menuitem").first.wait_for()
        items = [t.strip() for t in page.get_by_role("menuitem").all_inner_texts()]
        page.screenshot(path=f"{shots}/v2-menu.png")
        print(json.dumps({"v2 menu": items}), flush=True)
        if "Cancel" not in items:
            return 3

        page.goto(f"{dashboard}/runs/flow-run/{run_id}")
        loaded(page)
        button = page.get_by_role("button", name="Cancel", exact=True)
        enabled = button.is_enabled()
        page.screenshot(path=f"{shots}/before.png")
        print(json.dumps({"v1 cancel button enabled": enabled}), flush=True)
        if not enabled:
            return 3
        button.click()
        page.get_by_role("button", name="Confirm").click()
        page.get_by_text("Flow run cancelled").first.wait_for()  # the dashboard's own confirmation
        page.screenshot(path=f"{shots}/cancelling.png")
        deadline = time.monotonic() + FINAL_SECONDS
        while True:  # the run ends Cancelled once the step and its checkpoint are done
            page.reload()
            try:
                page.get_by_text("Cancelled", exact=True).first.wait_for(timeout=10_000)
                break
            except PlaywrightTimeout:
                if time.monotonic() > deadline:
                    raise
        page.screenshot(path=f"{shots}/cancelled.png")
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:5]))
