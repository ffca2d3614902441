"""`openbot eval`: a bot run over a task suite, each task in a fresh repository and home (docs/EVAL.md)."""
