"""MemoryStore: atomic locked writes, concurrent writers lose nothing, a damaged file is never overwritten."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import pytest

from openbot import paths
from openbot.errors import ConfigError, UsageError
from openbot.state.memory import LEFT_OUT_KEY, MEMORY_LIMIT, NOTE_LIMIT, MemoryStore


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore(paths.memory_file("fixer", "app-12345678"))


def test_absent_file_is_empty_and_nothing_is_created(store: MemoryStore) -> None:
    assert store.load() == {}
    assert store.clear() == (0, None)
    assert not store.path.parent.exists()


def test_set_remove_clear_round_trip_with_private_files(store: MemoryStore) -> None:
    store.set("build", "make -j4")
    store.set("tests", "pytest -q\nthen ruff")
    store.set("build", "make -j8")
    assert store.load() == {"build": "make -j8", "tests": "pytest -q\nthen ruff"}
    assert json.loads(store.path.read_text()) == {"entries": store.load()}
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    assert store.remove("build") is True
    assert store.remove("build") is False
    removed, backup = store.clear()
    assert (
        removed == 1
        and backup is not None
        and json.loads(backup.read_text()) == {"entries": {"tests": "pytest -q\nthen ruff"}}
    )
    assert store.load() == {}
    leftovers = [p.name for p in store.path.parent.iterdir()]
    assert sorted(leftovers) == ["memory.json", backup.name, "memory.json.lock"]  # no temp files left behind


@pytest.mark.parametrize("key", ["", "   ", "a\nb", "a\rb", "k" * 201])
def test_bad_keys_are_refused(store: MemoryStore, key: str) -> None:
    with pytest.raises(UsageError, match="memory key"):
        store.set(key, "v")
    assert not store.path.exists()


def test_longest_key_and_non_string_value(store: MemoryStore) -> None:
    store.set("k" * 200, "ok")
    with pytest.raises(UsageError, match="must be a string"):
        store.set("n", 5)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "what"),
    [
        ("{not json", "not valid JSON"),
        ('["entries"]', "expected an object"),
        ('{"entries": []}', "expected an object"),
        ('{"other": {}}', "expected an object"),
        ('{"entries": {"a": 1}}', "not a string"),
        ('{"entries": {"a": null}}', "not a string"),
        (b"\xff\xfe\x00junk", "not valid JSON"),
    ],
)
def test_damaged_file_is_an_error_and_never_overwritten(
    store: MemoryStore, text: str | bytes, what: str
) -> None:
    store.path.parent.mkdir(parents=True)
    data = text.encode() if isinstance(text, str) else text
    store.path.write_bytes(data)
    for action in (store.load, lambda: store.set("k", "v"), lambda: store.remove("a"), store.clear):
        with pytest.raises(ConfigError, match=what) as info:
            action()
        assert str(store.path) in info.value.one_line()
        assert "openbot memory fixer clear --repair --project app-12345678" in info.value.hint
    assert store.path.read_bytes() == data


def test_quarantine_moves_the_damaged_file_aside(store: MemoryStore) -> None:
    store.path.parent.mkdir(parents=True)
    store.path.write_text("{broken")
    moved = store.quarantine()
    assert moved.parent == store.path.parent and moved.name.startswith("memory.json.corrupt-")
    assert moved.read_text() == "{broken"
    assert store.load() == {}
    store.set("k", "v")
    assert store.load() == {"k": "v"}
    with pytest.raises(UsageError, match="no memory file"):
        MemoryStore(store.path.with_name("other.json")).quarantine()


WRITER = """
import sys
from pathlib import Path
from openbot.state.memory import LEFT_OUT_KEY, MEMORY_LIMIT, NOTE_LIMIT, MemoryStore
store = MemoryStore(Path(sys.argv[1]))
for i in range(int(sys.argv[3])):
    store.set(f"{sys.argv[2]}-{i}", "x" * 100)  # 4 writers x 54 notes stay under the memory limit
    if i % 10 == 9:
        store.remove(f"{sys.argv[2]}-{i}")
"""


def test_concurrent_writers_in_separate_processes_lose_nothing(store: MemoryStore) -> None:
    store.set("existing", "kept")
    writers, per_writer = 4, 60
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(store.path), f"w{w}", str(per_writer)])
        for w in range(writers)
    ]
    assert [p.wait(timeout=60) for p in procs] == [0] * writers
    expected = {f"w{w}-{i}" for w in range(writers) for i in range(per_writer) if i % 10 != 9}
    entries = store.load()
    assert set(entries) == expected | {"existing"}
    assert entries["existing"] == "kept"
    assert not [p for p in os.listdir(store.path.parent) if p.endswith(".tmp")]


def test_a_note_and_the_whole_memory_are_capped(store: MemoryStore) -> None:
    with pytest.raises(UsageError, match="a note holds at most 4 kB"):
        store.set("big", "x" * (NOTE_LIMIT + 1))
    store.set("fits", "é" * (NOTE_LIMIT // 2))  # the cap counts UTF-8 bytes
    for i in range(6):
        store.set(f"n{i}", "x" * NOTE_LIMIT)
    with pytest.raises(UsageError, match="memory is full"):
        store.set("n6", "x" * NOTE_LIMIT)
    store.set("n0", "shorter")  # room again
    assert "big" not in store.load() and store.load()["n0"] == "shorter"


def test_an_oversized_memory_is_shown_capped_and_may_only_shrink(store: MemoryStore) -> None:
    store.path.parent.mkdir(parents=True)
    entries = {"first": "keep", "huge": "y" * 1_200_000, **{f"k{i}": "z" * 3000 for i in range(20)}}
    store.path.write_text(json.dumps({"entries": entries}))
    shown = store.for_prompt()
    assert shown["first"] == "keep" and shown["huge"].endswith("[... cut at 4 kB; shorten this note]")
    assert sum(len(k) + len(v.encode()) for k, v in shown.items()) < MEMORY_LIMIT + 1000
    assert "notes are not shown" in shown[LEFT_OUT_KEY] and "'k19'" in shown[LEFT_OUT_KEY]
    with pytest.raises(UsageError, match="memory is full"):
        store.set("new", "more")
    store.set("huge", "now short")  # shrinking an over-full memory is allowed
    assert store.load()["huge"] == "now short"


def test_a_planted_memory_file_is_damaged_not_followed_or_waited_on(store: MemoryStore) -> None:
    store.path.parent.mkdir(parents=True)
    store.path.symlink_to("/proc/self/environ")
    with pytest.raises(ConfigError, match="is damaged: refused to read: it is a symlink out of"):
        store.load()
    store.path.unlink()
    os.mkfifo(store.path)
    with pytest.raises(ConfigError, match="is damaged: refused to read: it is a FIFO"):
        store.load()
    store.path.unlink()
    store.path.touch()
    os.truncate(store.path, 1 << 30)  # sparse
    with pytest.raises(ConfigError, match="larger than 4 MB"):
        store.load()
