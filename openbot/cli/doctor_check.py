"""One line of `openbot doctor`: PASS, WARN or FAIL, what was checked, and what was found."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class Check:
    status: Literal["PASS", "WARN", "FAIL"]
    name: str
    detail: str

    def line(self) -> str:
        return f"{self.status} {self.name}: {self.detail}"
