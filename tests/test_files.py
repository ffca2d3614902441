"""files.read_capped: what openbot reads where the agent can write is inside its root, regular, capped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from openbot.errors import ConfigError
from openbot.files import read_capped, read_text_capped, read_user_text


def test_a_link_inside_the_root_is_followed_one_out_of_it_is_refused(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "docs").mkdir(parents=True)
    outside.mkdir()
    (root / "docs" / "AGENTS.md").write_text("rules")
    (root / "CLAUDE.md").symlink_to("docs/AGENTS.md")
    assert read_capped(root / "CLAUDE.md", root=root, limit=100) == (b"rules", False)
    (outside / "secret.md").write_text("secret")
    (root / "env.md").symlink_to("/proc/self/environ")
    (root / "skills").symlink_to("../outside")  # a directory link out: every file below it is out too
    for path in (root / "env.md", root / "skills" / "secret.md"):
        with pytest.raises(ConfigError, match="symlink out of"):
            read_capped(path, root=root, limit=100)
    assert read_capped(root / "skills" / "secret.md", root=root / "skills", limit=100)[0] == b"secret"


def test_special_files_are_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.md")  # reading a FIFO with no writer would wait forever
    (tmp_path / "dir.md").mkdir()
    (tmp_path / "loop.md").symlink_to("loop.md")
    with pytest.raises(ConfigError, match="it is a FIFO, not a regular file"):
        read_capped(tmp_path / "pipe.md", root=tmp_path, limit=100)
    with pytest.raises(ConfigError, match="it is a directory"):
        read_capped(tmp_path / "dir.md", root=tmp_path, limit=100)
    with pytest.raises(ConfigError, match="symlink"):
        read_capped(tmp_path / "loop.md", root=tmp_path, limit=100)
    with pytest.raises(FileNotFoundError):
        read_capped(tmp_path / "missing.md", root=tmp_path, limit=100)


def test_only_the_limit_is_read_however_large_the_file(tmp_path: Path) -> None:
    huge = tmp_path / "huge.md"
    huge.touch()
    os.truncate(huge, 64 << 30)  # sparse 64 GB: reading it whole would exhaust memory
    assert read_capped(huge, root=tmp_path, limit=1000) == (b"\0" * 1000, True)
    with pytest.raises(ConfigError, match="larger than 1 kB"):
        read_user_text(huge, root=tmp_path, limit=1024, what="skill file")


def test_text_cut_inside_a_character_drops_it_and_bad_utf8_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("\ufeff" + "é" * 10, encoding="utf-8")  # BOM, then 2 bytes a character
    assert read_text_capped(tmp_path / "a.md", root=tmp_path, limit=8) == ("éé", True)
    (tmp_path / "b.md").write_bytes(b"ok \xff")
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        read_text_capped(tmp_path / "b.md", root=tmp_path, limit=100)
    assert read_text_capped(tmp_path / "b.md", root=tmp_path, limit=100, errors="replace") == (
        "ok \ufffd",
        False,
    )
    (tmp_path / "c.md").write_bytes(b"+++\r\nmodel = 1\r\n+++\rbody\n")  # read as open() reads text
    assert read_text_capped(tmp_path / "c.md", root=tmp_path, limit=100) == (
        "+++\nmodel = 1\n+++\nbody\n",
        False,
    )
