"""The `openbot` command: `app.main` is the entry point, `typer_app` the typer app (errors → exit codes),
one module per command group."""
