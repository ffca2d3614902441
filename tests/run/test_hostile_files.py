"""Files openbot itself reads from places the agent can write, planted by a hostile agent: each attack is a
real `openbot run` (the real SDK against the loopback Messages API where the request body matters).

The agent can write its worktree (AGENTS.md, CLAUDE.md, .openbot/) and its bot's skills dir; whatever it
leaves there is read by openbot at the next iteration or run, outside any sandbox.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from openbot import paths
from openbot.testing.fakeapi import FakeAnthropic, reply
from tests.helpers import complete, events, git, make_bot, make_repo, remove_tree, run_cli, sessions, shell
from tests.helpers import reply as step

KEY = "sk-ant-test-SECRET-0123456789abcdef"
# Not secret-shaped, so no redaction hides it: if openbot's environment reaches a request, this shows it.
CANARY = "canary-of-openbots-own-environment-7f3a9c"
NOBODY = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]


def claude_bot(name: str, config: str = "") -> None:
    d = paths.bot_home(name)
    d.mkdir(parents=True, exist_ok=True)
    (d / "config.md").write_text(f'+++\nmodel = "claude-sonnet-5-5"\nsleep_secs = 0\n{config}\n+++\nWork.\n')


def api_env(api: FakeAnthropic) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": api.base_url, "OPENBOT_CANARY": CANARY}


@pytest.fixture(params=["root", "nobody"])
def user(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The command prefix to run openbot as root or as `nobody`, with OPENBOT_HOME and HOME theirs."""
    if request.param == "root":
        yield []
        return
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("dropping to nobody needs root and setpriv")
    base = Path(tempfile.mkdtemp(prefix="openbot-nobody-"))  # tmp_path's parents are root-only
    monkeypatch.setenv("OPENBOT_HOME", str(base / "openbot-home"))
    monkeypatch.setenv("HOME", str(base / "home"))
    (base / "home").mkdir()
    try:
        yield [str(base)]  # the caller chowns this tree after setting it up, then runs with NOBODY
    finally:
        remove_tree(base)


def run_as(user: list[str], *args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    if not user:
        return run_cli(*args, cwd=cwd, env=env)
    subprocess.run(["chown", "-R", "65534:65534", user[0]], check=True)
    return subprocess.run(
        [*NOBODY, sys.executable, "-m", "openbot", *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )


def repo_for(user: list[str], tmp_path: Path) -> Path:
    return make_repo(Path(user[0]) / "repo" if user else tmp_path / "repo")


def test_agents_md_linked_to_openbots_environ_never_reaches_the_model(
    user: list[str], tmp_path: Path
) -> None:
    """Committed in the repository (a prompt injection's doing, or the bot's own merged work): no command
    is needed, so this runs as `nobody` too (this machine's Python lives under root-only /root, so a
    sandboxed command cannot start as nobody: the agent-planted variants below run as root only)."""
    repo = repo_for(user, tmp_path)
    (repo / "AGENTS.md").symlink_to("/proc/self/environ")
    (repo / "CLAUDE.md").symlink_to("AGENTS.md")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "docs")
    claude_bot("c")
    with FakeAnthropic([reply("", tool_calls=[complete()])]) as api:
        out = run_as(user, "run", "c", "--json", cwd=repo, env=api_env(api))
        assert out.returncode == 0, out.stderr
        bodies = api.bodies
    sent = json.dumps(bodies)
    assert KEY not in sent and CANARY not in sent
    system = json.dumps(bodies[0]["system"])
    assert "did not read AGENTS.md" in system and "symlink out of" in system
    assert "did not read CLAUDE.md" in system  # a link inside the repo to a refused file: refused too


def test_links_to_openbots_environ_planted_by_the_agent_are_not_read(repo: Path) -> None:
    """The agent links its worktree's AGENTS.md and a skill in each writable layer to openbot's environment.
    The next iteration's system prompt (the recorded copy: the canary is not secret-shaped, so it would
    show there unredacted; the request itself is checked in the test above) holds none of it."""
    skills = paths.bot_skills_dir("b")
    targets = [
        "AGENTS.md",
        f"{skills}/env.md",
        ".openbot/skills/repo-env.md",
        f"{skills}/env-folder/SKILL.md",
    ]
    plant = " && ".join(f"mkdir -p {Path(t).parent} && ln -s /proc/self/environ {t}" for t in targets)
    script = [step("", shell(plant)), step("Planted."), step("", complete())]
    make_bot("b", script, config="max_iterations = 2")
    out = run_cli("run", "b", cwd=repo, env={"OPENBOT_CANARY": CANARY})
    assert out.returncode == 0, out.stderr
    prompt = (sessions("b")[1] / "system_prompt.md").read_text()  # the run's one system prompt
    assert CANARY not in prompt and "PATH=" not in prompt
    # what changed since the run started is told in the next iteration's prompt (the system prompt is
    # fixed for the run): there, the planted link is named, not read
    [conversation] = paths.bot_home("b").glob("workspaces/*/runs/*/conversation.jsonl")
    said = conversation.read_text()
    assert CANARY not in said and "PATH=" not in said
    assert "[openbot did not read AGENTS.md: refused to read: it is a symlink out of" in said
    warnings = [line for line in out.stderr.splitlines() if "skipped invalid skill" in line]
    # the repository's layer is read once, from the user's checkout (where trust hashes it): the link
    # planted in the agent's checkout is not even looked at
    assert len(warnings) == 2 and all("symlink out of" in w for w in warnings)
    assert "repo-env.md" not in out.stderr


def test_a_blocking_skill_or_doc_is_skipped_not_waited_on(repo: Path, tmp_path: Path) -> None:
    """A FIFO stands in for /proc/kmsg & co.: a file whose read() never returns."""
    make_bot("b", [step("", complete())])
    skills = paths.bot_skills_dir("b")
    (skills / "wait").mkdir(parents=True)
    os.mkfifo(skills / "pipe.md")
    os.mkfifo(skills / "wait" / "SKILL.md")
    os.mkfifo(tmp_path / "outside")
    (skills / "linked.md").symlink_to(tmp_path / "outside")
    if os.path.exists("/proc/kmsg"):
        (skills / "kmsg.md").symlink_to("/proc/kmsg")  # refused for leaving the dir: never opened
    out = run_cli("run", "b", "--json", cwd=repo, timeout=60)
    assert out.returncode == 0, out.stderr
    warnings = [line for line in out.stderr.splitlines() if "skipped invalid skill" in line]
    assert len(warnings) == 4 if os.path.exists("/proc/kmsg") else 3
    assert sum("a FIFO, not a regular file" in w for w in warnings) == 2
    assert sum("symlink out of" in w for w in warnings) == len(warnings) - 2


# ru_maxrss outlives execve: a process forked from pytest (hundreds of MB late in a full run) would report
# pytest's peak. A small python in between forks openbot from its own fresh address space.
_MEASURE = (
    "import os, subprocess, sys; p = subprocess.Popen(sys.argv[2:]); _, status, usage = os.wait4(p.pid, 0); "
    "open(sys.argv[1], 'w').write(f'{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss}')"
)


def peak_rss_kb(*args: str, cwd: Path) -> tuple[int, int, str]:
    """(exit code, peak resident memory of the openbot process in kB, stderr) of `python -m openbot`."""
    with tempfile.TemporaryFile() as err, tempfile.TemporaryDirectory() as tmp:
        figures = Path(tmp) / "figures"
        subprocess.run(
            [sys.executable, "-c", _MEASURE, str(figures), sys.executable, "-m", "openbot", *args],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=err,
            stderr=err,
            check=True,
        )
        code, rss = figures.read_text().split()
        err.seek(0)
        return int(code), int(rss), err.read().decode()


def test_gigabyte_sparse_skill_and_agents_md_are_capped_not_read(repo: Path) -> None:
    make_bot(
        "b",
        [
            step("", shell("truncate -s 1G AGENTS.md")),
            step("Made it big."),  # iteration 2 reads AGENTS.md for its system prompt
            step("", shell("rm AGENTS.md"), complete()),  # nothing that size for the WIP commit
        ],
        config="max_iterations = 2",
    )
    huge = paths.make_private_dir(paths.bot_skills_dir("b")) / "huge.md"
    huge.touch()
    os.truncate(huge, 1 << 30)  # sparse: as cheap on disk as it is costly to read
    code, rss_kb, err = peak_rss_kb("run", "b", cwd=repo)
    assert code == 0, err
    assert rss_kb < 400_000  # reading either file whole takes over 1 GB
    [warning] = [line for line in err.splitlines() if "skipped invalid skill" in line]
    assert "huge.md" in warning and "larger than" in warning
    prompts = [s / "system_prompt.md" for s in sessions("b")]
    assert all(p.stat().st_size < 100_000 for p in prompts)
    [conversation] = paths.bot_home("b").glob("workspaces/*/runs/*/conversation.jsonl")
    assert conversation.stat().st_size < 200_000  # iteration 2's prompt tells the change, capped
    assert "[... AGENTS.md cut at" in conversation.read_text()


def test_a_huge_memory_note_is_refused_and_the_model_is_told(repo: Path) -> None:
    """Run 1 (scripted: the SDK's streaming of a 1.2 MB tool input is slow in itself) tries to save the
    note; run 2's first request, which carries the memory, stays small."""
    note = "x" * 1_200_000
    save = {"name": "memory", "input": {"action": "set", "key": "all", "value": note}}
    make_bot("c", [step("", save), step("", complete())])
    assert run_cli("run", "c", cwd=repo).returncode == 0
    [result] = [e for e in events(sessions("c")[0]) if e["type"] == "tool_result" and e["name"] == "memory"]
    assert result["is_error"] and "a note holds at most 4 kB" in result["content"]
    claude_bot("c")
    with FakeAnthropic([reply("", tool_calls=[complete()])]) as api:
        assert run_cli("run", "c", "--json", cwd=repo, env=api_env(api)).returncode == 0
        assert len(json.dumps(api.bodies[0])) < 100_000


def test_a_huge_memory_written_earlier_is_capped_in_the_prompt(repo: Path) -> None:
    """A memory.json from before the caps (or edited by hand) still costs at most the memory budget."""
    make_bot("b", [step("", complete())])
    assert run_cli("memory", "b", "set", "small", "keep me", cwd=repo).returncode == 0
    [memory] = paths.bot_home("b").glob("workspaces/*/memory.json")
    memory.write_text(json.dumps({"entries": {"small": "keep me", "big": "y" * 1_200_000, "after": "z"}}))
    assert run_cli("run", "b", cwd=repo).returncode == 0
    [conversation] = paths.bot_home("b").glob("workspaces/*/runs/*/conversation.jsonl")
    records = [json.loads(line) for line in conversation.read_text().splitlines()]
    first = next(r for r in records if "message" in r)  # the iteration prompt, memory in it
    assert "keep me" in json.dumps(first) and "cut at 4 kB" in json.dumps(first)
    assert conversation.stat().st_size < 100_000


def test_skills_install_never_writes_through_a_link_the_bot_planted(repo: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".config").mkdir()
    skills = paths.bot_skills_dir("b")
    plant = f"ln -s {home}/.profile {skills}/helper.md && ln -s {home}/.config {skills}/tool"
    make_bot("b", [step("", shell(plant), complete())])
    assert run_cli("run", "b", cwd=repo).returncode == 0
    assert (skills / "helper.md").is_symlink()
    src = tmp_path / "src"
    (src / "tool").mkdir(parents=True)
    (src / "helper.md").write_text("---\ndescription: helps\n---\nHelp.\n")
    (src / "tool" / "SKILL.md").write_text("Use the tool.\n")
    env = {"HOME": str(home)}
    for args in ([], ["--force"]):
        for source in (src / "helper.md", src / "tool"):
            out = run_cli("skills", "install", str(source), "--bot", "b", *args, cwd=repo, env=env)
            assert not (home / ".profile").exists() and not (home / ".config" / "SKILL.md").exists()
            assert out.returncode == (0 if args else 2), out.stderr
    assert (skills / "helper.md").read_text().endswith("Help.\n") and not (skills / "helper.md").is_symlink()
    assert (skills / "tool" / "SKILL.md").read_text() == "Use the tool.\n"
    assert not (skills / "tool").is_symlink()


def test_a_committed_bot_config_linked_out_of_the_repo_is_refused(repo: Path) -> None:
    """The bot's merged work can commit `.openbot/bots/<bot>/config.md`: its body becomes the prompt."""
    config = repo / ".openbot" / "bots" / "ci" / "config.md"
    config.parent.mkdir(parents=True)
    config.symlink_to("/proc/self/environ")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "bot")
    with FakeAnthropic([reply("", tool_calls=[complete()])]) as api:
        out = run_cli("run", "ci", cwd=repo, env=api_env(api))
        assert api.requests == []
    assert out.returncode == 2 and "Traceback" not in out.stderr
    [line] = out.stderr.strip().splitlines()
    assert f"{config}: refused to read: it is a symlink out of {repo}" in line


@pytest.mark.parametrize(
    "plant",
    [
        "mkfifo .gitignore",  # git reads it by name: a FIFO blocks the read forever
        "mkdir -p docs && mkfifo pipe && ln -s ../pipe docs/.gitignore",  # a link to a FIFO
        "mkdir -p a/b && mkfifo a/b/.gitignore",  # git reads every directory's
    ],
)
def test_an_unreadable_gitignore_does_not_hang_the_wip_commit(repo: Path, plant: str) -> None:
    """The agent plants something git reads by name and then leaves work uncommitted: the run still ends,
    its work is saved in the WIP commit, whose message names what openbot renamed aside. The look at its
    checkout before the completion is taken (`git status`, which blocked on the FIFO until its 60 s ran
    out and then listed nothing) says the untracked files are unknown: the completion is not questioned as
    one that changed nothing."""
    make_bot(
        "plant",
        [step("", shell(f"{plant} && echo kept > notes.txt")), step("", complete())],
    )
    out = run_cli("run", "plant", "--json", cwd=repo, timeout=90)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert not result["nothing_changed"], out.stderr
    (session,) = sessions("plant")
    assert not [e for e in events(session) if e["type"] == "notice" and e["kind"] == "nothing_changed"]
    assert len(result["wip_commits"]) == 1, out.stderr
    wip = result["wip_commits"][0]
    assert git(repo, "show", f"{wip}:notes.txt") == "kept"
    assert ".openbot-unreadable" in git(repo, "log", "-1", "--format=%B", wip)
