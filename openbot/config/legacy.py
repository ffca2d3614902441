"""Keys of the Rust openbot's config.md that openbot accepts as they are (docs/LEGACY.md).

The Rust tool (montanaflynn/openbot, src/config.rs at cf3b7f2) read seven frontmatter keys: `description`,
`max_iterations`, `sleep_secs`, `model`, `sandbox` and `skip_git_check` mean the same here and are ordinary
keys (`openbot.config.keys`). `stop_phrase` was already unused there ("Legacy field, currently unused",
docs/CONFIG_REFERENCE.md): `session_complete` ends a session in both. A config that still sets it is
accepted, the key is dropped before validation and a one-line notice says it is ignored. A wrong type is
still an error, as every other key's: the Rust tool refused it too.

Deliberately not legacy-tolerant: the Rust tool fell back to `workspace-write` on an unknown `sandbox`;
openbot refuses it (a typo in the one knob that confines the agent must not run silently with other rights).
"""

from __future__ import annotations

from pathlib import Path

from openbot.errors import ConfigError

# key -> why it is ignored (said in the notice)
IGNORED: dict[str, str] = {
    "stop_phrase": "openbot ends a session when the bot calls session_complete, as the Rust openbot did",
}


def split_legacy(values: dict[str, object], path: Path | str) -> tuple[dict[str, object], tuple[str, ...]]:
    """(the values without ignored legacy keys, one notice line per key dropped)."""
    notices: list[str] = []
    kept = dict(values)
    for key, why in IGNORED.items():
        if key not in kept:
            continue
        value = kept.pop(key)
        if not isinstance(value, str):
            raise ConfigError(
                f"{path}: key '{key}' must be a string, got {value!r}",
                hint=f"remove '{key}': openbot ignores it ({why})",
            )
        notices.append(f"note: {path}: key '{key}' (from the Rust openbot) is ignored: {why}")
    return kept, tuple(notices)
