"""The user's browser at oidc-provider's development interactions, played over plain HTTP:
open the authorization URL, sign in on the login form, press Continue on the consent form,
and follow the redirects back to the client's loopback callback.

Imported by the tests (`play`), or run as the `$BROWSER` command that Python's
`webbrowser.open` starts for `codex-mcp-client login`:

    python oidc_browser.py URL

As a command it returns at once (webbrowser waits for it, and the CLI's callback runs on
the loop that wait blocks) and plays the browser in a child process, which appends one JSON
line (`play`'s result) to the file named by $OIDC_BROWSER_LOG.
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import re
import sys
from typing import Any
from urllib.parse import urljoin

import aiohttp

FORM = re.compile(r'<form[^>]*action="([^"]+)"[^>]*method="post"', re.IGNORECASE)
PROMPT = re.compile(r'name="prompt" value="(\w+)"')


def cookie_jar() -> aiohttp.CookieJar:
    """A browser's cookies: oidc-provider's are set for 127.0.0.1 (an IP: `unsafe`)."""
    return aiohttp.CookieJar(unsafe=True)


async def play(
    url: str,
    *,
    account: str = "alice",
    jar: aiohttp.CookieJar | None = None,
    timeout: float = 30,
) -> dict[str, Any]:
    """The pages the browser went through (`prompts`), the URL it ended at (`final`) and
    that page's status and text. `jar`: the cookies of an earlier visit (a signed-in user
    is not asked to sign in again)."""
    prompts: list[str] = []
    async with aiohttp.ClientSession(
        cookie_jar=jar if jar is not None else cookie_jar(),
        timeout=aiohttp.ClientTimeout(total=timeout),
    ) as browser:
        reply = await browser.get(url)
        for _ in range(6):  # login, consent, and no loop
            page = await reply.text()
            form, prompt = FORM.search(page), PROMPT.search(page)
            if form is None or prompt is None:
                break
            prompts.append(prompt.group(1))
            answer = {"prompt": prompt.group(1)}
            if prompt.group(1) == "login":
                answer |= {"login": account, "password": "any"}
            action = urljoin(str(reply.url), html.unescape(form.group(1)))
            reply.release()
            reply = await browser.post(action, data=answer)
        text = await reply.text()
        return {"prompts": prompts, "final": str(reply.url), "status": reply.status, "text": text}


def main() -> None:
    url, log = sys.argv[1], os.environ["OIDC_BROWSER_LOG"]
    if os.fork():
        return  # the browser "opened": webbrowser.open returns
    try:
        result = asyncio.run(play(url))
    except Exception as exc:  # the test reads what went wrong in the log
        result = {"error": repr(exc)}
    with open(log, "a", encoding="utf-8") as out:
        out.write(json.dumps({"url": url, **result}) + "\n")
    os._exit(0)


if __name__ == "__main__":
    main()
