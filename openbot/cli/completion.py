"""Shell completion of bot names (`openbot run <TAB>`): the names `openbot bots list` shows, the home
bots and those the current repository commits. Typer calls `bot_names` only under its completion
protocol (`_OPENBOT_COMPLETE=complete_bash` and friends, set by the script `--install-completion` writes),
so nothing here runs on an ordinary command line."""

from __future__ import annotations


def bot_names(incomplete: str) -> list[str]:
    """The bot names that start with `incomplete`, each once, sorted; [] when they cannot be read (a
    completion must never print an error into the user's command line)."""
    from pathlib import Path

    from openbot.config.bots import bots_by_source
    from openbot.errors import OpenbotError
    from openbot.git.repo import find_repo

    try:
        repo = find_repo(Path.cwd())
        names = {ref.name for ref, _ in bots_by_source(repo.workdir if repo else None)}
    except (OpenbotError, OSError):
        return []
    return sorted(n for n in names if n.startswith(incomplete))
