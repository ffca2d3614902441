"""The `changes` MCP server of the release-notes bot: what changed in the repository since a release,
read with git, read-only. openbot starts it inside the run's sandbox (in an empty directory of its own)
and names the bot's worktree in OPENBOT_WORKDIR, where git runs:

    [mcp_servers.changes]
    command = "${OPENBOT_PYTHON}"
    args = ["${BOT_DIR}/server.py"]

The model chooses the arguments, so a ref is checked before it reaches git (no options, no ranges).
"""

from __future__ import annotations

import os
import re
import subprocess

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("changes", log_level="WARNING")
REF_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,200}$")


def _git(*args: str) -> str:
    where = os.environ.get("OPENBOT_WORKDIR") or None  # unset: `openbot doctor`, the current directory
    out = subprocess.run(["git", *args], capture_output=True, text=True, timeout=60, cwd=where)
    if out.returncode != 0:
        raise ToolError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "git failed")
    return out.stdout


def _since(ref: str) -> str:
    """`<ref>..HEAD`, or HEAD (the whole history) when ref is ""."""
    if not ref:
        return "HEAD"
    if not REF_RE.match(ref) or ".." in ref:
        raise ToolError(f"not a tag, branch or commit name: {ref!r}")
    _git("rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    return f"{ref}..HEAD"


@server.tool()
def last_release() -> str:
    """The most recent tag reachable from HEAD, or "(no tags yet)"."""
    tags = _git("tag", "--merged", "HEAD", "--sort=-creatordate").split()
    return tags[0] if tags else "(no tags yet)"


@server.tool()
def commits_since(ref: str = "", limit: int = 200) -> str:
    """Commits after `ref` (a tag, branch or commit; "" = all), newest first: sha, date, author, subject."""
    limit = max(1, min(limit, 1000))
    log = _git("log", f"--max-count={limit}", "--format=%h %as %an: %s", "--end-of-options", _since(ref))
    return log.strip() or "(no commits)"


@server.tool()
def files_changed(ref: str = "") -> str:
    """Files changed after `ref` ("" = all), with lines added and removed."""
    if not ref:
        return _git("show", "--stat", "--format=", "HEAD").strip() or "(no changes)"
    _since(ref)  # checks the ref
    return _git("diff", "--stat", "--end-of-options", ref, "HEAD").strip() or "(no changes)"


if __name__ == "__main__":
    server.run()
