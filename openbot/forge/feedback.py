"""`openbot feedback gather`: the feedback file of a bot's pull request, read through the gate.

The reading is the gate's `forge.read` step: a child (`python -P -m openbot.forge.gather`, from a
directory of its own so nothing in the checkout it is started from is imported) whose environment holds
the one token variable the user set and no other secret. What it prints is checked, redacted once more
with the token itself, and written atomically to `--out`."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from openbot import gate
from openbot.errors import ForgeError, UsageError
from openbot.files import write_atomic
from openbot.redact import Redactor
from openbot.views.escapes import visible

TOKEN_VARS = ("GH_TOKEN", "GITHUB_TOKEN")  # gh's order: GH_TOKEN wins
DEFAULT_API = "https://api.github.com"
TIMEOUT_S = 600


def token_var(environ: dict[str, str]) -> str:
    """The variable that holds the forge's token, or a UsageError saying which to set."""
    found = next((name for name in TOKEN_VARS if environ.get(name)), "")
    if not found:
        raise UsageError("no token for the forge's API", hint="set GH_TOKEN or GITHUB_TOKEN")
    return found


def api_base(environ: dict[str, str]) -> str:
    base = environ.get("GITHUB_API_URL") or DEFAULT_API
    if urlsplit(base).scheme not in ("https", "http") or not urlsplit(base).netloc:
        raise UsageError(f"GITHUB_API_URL={base!r} is not a web address", hint=f"e.g. {DEFAULT_API}")
    return base


def check_args(repo: str, head: str) -> None:
    owner, _, name = repo.partition("/")
    if not owner or not name or "/" in name or any(c.isspace() or c in "?#%" for c in repo):
        raise UsageError(f"--repo {repo!r} is not owner/name", hint="e.g. --repo octocat/hello-world")
    if not head.strip() or any(c.isspace() for c in head):
        raise UsageError(f"--head {head!r} is not a branch name", hint="e.g. --head openbot/nightly/fixer")


def gather_to(repo: str, head: str, out: Path, bot_login: str) -> dict[str, Any]:
    """Gather through the gate, write `out`; the document written."""
    check_args(repo, head)
    environ = dict(os.environ)
    var, base = token_var(environ), api_base(environ)
    argv = [sys.executable, "-P", "-m", "openbot.forge.gather", "--repo", repo, "--head", head]
    argv += ["--api", base, "--token-env", var, "--bot-login", bot_login]
    with tempfile.TemporaryDirectory(prefix="openbot-forge-") as cwd:
        try:
            done = gate.run(
                gate.FORGE_READ, argv, named=[var], cwd=cwd, capture_output=True, timeout=TIMEOUT_S
            )
        except gate.TimeoutExpired:
            raise ForgeError(f"the forge's API at {base} did not answer within {TIMEOUT_S} s") from None
    redactor = Redactor.from_env(environ, [environ[var]])
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", errors="replace").strip().splitlines() or ["(nothing said)"]
        raise ForgeError(redactor.redact(said[-1])[:500])
    try:
        doc = json.loads(done.stdout)
    except ValueError:
        raise ForgeError("the forge reader printed no feedback document") from None
    doc = redactor.redact_obj(doc)
    for warning in doc.get("warnings") or []:  # the reader's: at most one per kind, said once here
        print(visible(f"openbot: warning: {str(warning)[:1000]}"), file=sys.stderr, flush=True)
    write_atomic(out, json.dumps(doc, ensure_ascii=False, indent=1) + "\n")
    return dict(doc)
