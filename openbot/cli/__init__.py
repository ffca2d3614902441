"""The typer CLI: one module per command group; `app.main` maps errors to exit codes."""
