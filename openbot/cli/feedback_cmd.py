"""`openbot feedback gather`: a bot's pull request's failed checks and write-access reviewers' feedback,
as the feedback file `openbot run --feedback` reads (docs/FEEDBACK.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from openbot.cli.typer_app import app

feedback_app = typer.Typer(
    name="feedback",
    help="Gather a pull request's CI failures and reviews for the next run.",
    no_args_is_help=True,
)
app.add_typer(feedback_app)


@feedback_app.command("gather")
def gather(
    repo: str = typer.Option(..., "--repo", help="The repository on the forge, owner/name."),
    head: str = typer.Option(..., "--head", help="The bot's branch: its open pull request is read."),
    out: Path = typer.Option(..., "--out", help="Where the feedback file is written (JSON)."),
    bot_login: str = typer.Option(
        "github-actions[bot]", "--bot-login", help="The bot's own account: its comments are not feedback."
    ),
) -> None:
    """Read the open pull request from --head (GITHUB_API_URL, a token in GH_TOKEN or GITHUB_TOKEN): its
    head's failed checks with their log tails, and reviews and comments since the head commit from people
    with write access; everyone else's are listed as ignored. No pull request: no items, exit 0."""
    from openbot.forge.feedback import gather_to
    from openbot.views.escapes import visible

    doc = gather_to(repo, head, out, bot_login)
    pull = doc.get("pull_request")
    where = f"pull request #{pull['number']}" if pull else f"no open pull request from {head}"
    typer.echo(visible(f"{out}: {where}, {len(doc['items'])} item(s), {len(doc['ignored'])} ignored"))
