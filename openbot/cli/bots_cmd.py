"""`openbot bots` (stub: filled in by its issue)."""

from __future__ import annotations
