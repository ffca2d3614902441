#!/usr/bin/env bash
# The offline demo: a complete openbot run with no API key, in a throwaway repo and OPENBOT_HOME.
# Usage: scripts/demo.sh [REPO]   (default: a new temp repo; pass your own repo to try it there —
# your checkout is not modified, the bot works on its own branch in a worktree)
set -euo pipefail
# Everything the demo makes lives in one temp directory, named at the end (nothing else is left behind).
root="$(mktemp -d "${TMPDIR:-/tmp}/openbot-demo.XXXXXX")"
export OPENBOT_HOME="${OPENBOT_HOME_DEMO:-$root/openbot-home}"
repo="${1:-}"
if [ -z "$repo" ]; then
  repo="$root/demo-repo"
  git init -q -b main "$repo"
  printf '# demo repo\n' > "$repo/README.md"
  git -C "$repo" add README.md
  git -C "$repo" -c user.name=demo -c user.email=demo@example.com commit -q -m "initial"
fi
cd "$repo"
echo "== OPENBOT_HOME=$OPENBOT_HOME, repo=$repo"
echo "== openbot bots create demo --from demo"
openbot bots create demo --from demo
echo "== openbot run demo"
status=0
openbot run demo || status=$?
echo "== openbot history demo"
openbot history demo
echo "== openbot memory demo show"
openbot memory demo show
echo "== git branch --list 'openbot/*' (the bot's branch; your own branches are untouched)"
git branch --list 'openbot/*' -v
branch="$(git branch --list 'openbot/demo-*' --format='%(refname:short)' | tail -1)"
echo "== what the bot did, from any directory:"
echo "   git -C '$repo' log --stat main..$branch"
echo "== the demo's files are in $root (remove them with: rm -rf '$root')"
exit "$status"
