"""Skills: markdown instructions (optional YAML frontmatter `name`, `description`) added to a bot's prompt.

Layers, least to most specific — on a name clash the more specific one wins, so each name appears once:

    shipped   <project>/skills/               only those named in the bot's `shipped_skills` (["*"] = all)
    global    $OPENBOT_HOME/skills/
    repo      <repo>/.openbot/skills/
    bot       $OPENBOT_HOME/bots/<bot>/skills/, then <repo>/.openbot/bots/<bot>/skills/ for a committed bot

A run reads the repository's two layers once, when it is planned, from the user's checkout: what trust
hashed (state/trust.py), not the run's own checkout (HEAD's tree, or the agent's branch on a resume).
A directory holds `<name>.md` files and/or Agent Skills folders `<name>/SKILL.md` (with any extra files).
A file that does not load (bad frontmatter, a clashing name) is left out and reported, never fatal: a bot
may write skills for itself, and one bad file must not stop every later run or block its own removal.
Nor may a planted one make openbot leak or hang: skill files are read with `files.read_user_text` (no
symlink out of the layer's root, regular files only, at most SKILL_FILE_LIMIT bytes), and the skills a
prompt gets may total SKILLS_BUDGET bytes — past that they are left out and reported like invalid ones.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openbot import paths
from openbot.config.plain_yaml import plain_mapping
from openbot.errors import ConfigError, NotFoundError
from openbot.files import read_user_text

SKILL_FILE = "SKILL.md"
_FENCE = re.compile(r"^-{3}[ \t]*\r?$", re.MULTILINE)
# Files that document a skills collection rather than being a skill themselves.
_NOT_SKILLS = {"readme.md", "license.md", "changelog.md", "contributing.md"}
SKILL_FILE_LIMIT = 128 * 1024  # bytes of one skill file
SKILLS_BUDGET = 256 * 1024  # bytes of all skill bodies in one prompt


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    body: str
    path: Path  # the .md file, or the SKILL.md of a skill folder
    source: str  # "shipped" | "global" | "repo" | "bot"

    @property
    def root(self) -> Path:
        """What install/remove copies or deletes: the folder of a SKILL.md, else the file itself."""
        return self.path.parent if self.path.name == SKILL_FILE else self.path


def check_skill_name(name: str, where: Path | str) -> str:
    if not paths.NAME_RE.match(name) or f"{name.lower()}.md" in _NOT_SKILLS:
        raise ConfigError(
            f"{where}: skill name {name!r} is not a safe file name",
            hint="use letters, digits, '.', '_' or '-' (up to 64, no '/')",
        )
    return name


def _frontmatter(text: str, path: Path) -> tuple[dict[str, Any], str]:
    head = text.lstrip()
    if not _FENCE.match(head):
        return {}, text
    parts = _FENCE.split(head, 2)
    if len(parts) < 3:
        raise ConfigError(f"{path}: the --- frontmatter is not closed", hint="end it with a line '---'")
    meta: object = plain_mapping(parts[1])  # PyYAML only for frontmatter that is not plain key: value
    if meta is None:
        meta = _yaml(parts[1], path)
    if not isinstance(meta, dict):
        raise ConfigError(
            f"{path}: the frontmatter must be key: value lines", hint="use name: and description:"
        )
    return meta, parts[2]


def _yaml(text: str, path: Path) -> object:
    import yaml

    try:
        meta = yaml.safe_load(text)
    except yaml.YAMLError as e:
        where = getattr(e, "problem_mark", None)
        line = f" (line {where.line + 1} of the frontmatter)" if where is not None else ""
        raise ConfigError(
            f"{path}: invalid YAML frontmatter{line}: {getattr(e, 'problem', None) or e}",
            hint='quote values that contain ":" or "#", e.g. description: "Use it: always"',
        ) from e
    return {} if meta is None else meta


def load_skill(
    path: Path, source: str, *, root: Path | None = None, default_name: str | None = None
) -> Skill:
    """Read one skill file; no `name` in the frontmatter → the file stem (the folder's name for SKILL.md).

    `root` (default: the file's directory) is where symlinks may lead; a link out of it is refused."""
    text = read_user_text(path, root=root or path.parent, limit=SKILL_FILE_LIMIT, what="skill file")
    meta, body = _frontmatter(text, path)
    default = default_name or (path.parent.name if path.name == SKILL_FILE else path.stem)
    name = meta.get("name", default)
    description = meta.get("description", "")
    for key, value in (("name", name), ("description", description)):
        if not isinstance(value, str):
            raise ConfigError(
                f"{path}: skill {key} must be a string, got {value!r}", hint=f'quote it: {key}: "{value}"'
            )
    check_skill_name(name, path)
    return Skill(name, " ".join(description.split()), body.strip(), path, source)


@dataclass(frozen=True)
class InvalidSkill:
    """A skill file that does not load: skipped from prompts, listed, and removable by its file name."""

    name: str  # the file stem or folder name: what `skills remove` takes, since the frontmatter is unreadable
    path: Path  # the .md file, or the SKILL.md of a skill folder
    source: str
    reason: str  # one line naming the file and the problem

    @property
    def root(self) -> Path:
        return self.path.parent if self.path.name == SKILL_FILE else self.path

    def warning(self, bot: str | None = None) -> str:
        """One line for the user: what is wrong and how to fix or remove it."""
        if self.source == "global":
            fix = f"openbot skills remove {self.name} --global"
        elif bot is not None and self.root.parent == paths.bot_skills_dir(bot):
            fix = f"openbot skills remove {self.name} --bot {bot}"
        else:
            return f"skipped invalid skill: {self.reason}; fix or delete {self.root}"
        return f"skipped invalid skill: {self.reason}; fix the file, or remove it with `{fix}`"


def skill_entries(directory: Path) -> list[tuple[str, Path]]:
    """(file stem or folder name, skill file) of every skill candidate directly in `directory`, unparsed.

    Any `*.md` that is not a directory is a candidate — a FIFO or a link too — so that loading it reports
    why it is refused rather than it silently vanishing. Nothing is opened here, only stat'ed."""
    if not directory.is_dir():
        return []
    found = []
    for entry in sorted(directory.iterdir()):
        if entry.name.startswith("."):
            continue
        if entry.is_dir():
            if os.path.lexists(entry / SKILL_FILE):
                found.append((entry.name, entry / SKILL_FILE))
        elif entry.suffix == ".md" and entry.name.lower() not in _NOT_SKILLS:
            found.append((entry.stem, entry))
    return found


def scan(directory: Path, source: str, root: Path | None = None) -> tuple[list[Skill], list[InvalidSkill]]:
    """The skills directly in `directory` sorted by name, and the files that do not load (never raises).

    `root` (default: `directory`) is where symlinks may lead: the repository for a repo's skills."""
    found: dict[str, Skill] = {}
    invalid: list[InvalidSkill] = []
    for stem, path in skill_entries(directory):
        try:
            skill = load_skill(path, source, root=root or directory)
            if skill.name in found:
                raise ConfigError(
                    f"{directory}: two skills named '{skill.name}': {found[skill.name].path} and {path}",
                    hint="rename or remove one of them",
                )
        except ConfigError as e:
            invalid.append(InvalidSkill(stem, path, source, e.one_line()))
            continue
        found[skill.name] = skill
    return sorted(found.values(), key=lambda s: s.name), invalid


def discover(directory: Path, source: str, root: Path | None = None) -> list[Skill]:
    """The skills directly in `directory`: `*.md` files and `<dir>/SKILL.md` folders, sorted by name.

    Strict: the first file that does not load raises ConfigError (right for a source being installed)."""
    skills, invalid = scan(directory, source, root)
    if invalid:
        raise ConfigError(invalid[0].reason)
    return skills


def shipped_skills(names: list[str]) -> list[Skill]:
    """The shipped skills a bot's `shipped_skills` names (["*"] = all); an unknown name is an error."""
    return _shipped(names)[0]


def _shipped(names: list[str]) -> tuple[list[Skill], list[InvalidSkill]]:
    """The shipped skills `shipped_skills` names (["*"] = all) and those of them that do not load."""
    skills, invalid = scan(paths.SHIPPED_SKILLS, "shipped")
    available = {s.name: s for s in skills}
    if "*" in names:
        return list(available.values()), invalid
    broken = {i.name for i in invalid}
    for name in names:
        if name not in available and name not in broken:
            hint = f"shipped skills: {', '.join(available)}" if available else "no skills are shipped"
            raise NotFoundError(f"shipped_skills: no shipped skill named '{name}'", hint=hint)
    return [available[n] for n in dict.fromkeys(names) if n in available], [
        i for i in invalid if i.name in names
    ]


Layer = tuple[list[Skill], list[InvalidSkill]]


def repo_layers(
    bot: str, repo_root: Path | None, *, repo_skills: bool, committed: bool
) -> list[Layer | None]:
    """The repository's two layers, `.openbot/skills/` and the committed bot's `skills/` (None: not used)."""
    if repo_root is None:
        return [None, None]
    mine = paths.repo_bots_dir(repo_root) / bot / "skills"
    return [
        scan(paths.repo_skills_dir(repo_root), "repo", repo_root) if repo_skills else None,
        scan(mine, "bot", repo_root) if committed else None,
    ]


def check_skills(
    bot: str,
    repo_root: Path | None,
    shipped: list[str],
    *,
    repo_skills: bool = True,
    committed: bool | None = None,
    fixed: list[Layer | None] | None = None,
) -> tuple[list[Skill], list[InvalidSkill]]:
    """The skills a bot's prompt gets (one per name, the most specific layer winning), and skipped files.

    A run passes `fixed`: the repository's layers read once, where and when trust checked them
    (`repo_layers`); by default both are read now wherever they exist (for listing)."""
    if committed is None:
        committed = repo_root is not None and (paths.repo_bots_dir(repo_root) / bot / "config.md").is_file()
    repo, mine = fixed or repo_layers(bot, repo_root, repo_skills=repo_skills, committed=committed)
    home = scan(paths.bot_skills_dir(bot), "bot")
    layers = [_shipped(shipped), scan(paths.global_skills_dir(), "global"), repo, home, mine]
    merged: dict[str, Skill] = {}
    invalid: list[InvalidSkill] = []
    for skills, bad in (layer for layer in layers if layer is not None):
        invalid += bad
        for skill in skills:
            merged.pop(skill.name, None)  # re-insert so the order shows the layer that won
            merged[skill.name] = skill
    return _within_budget(list(merged.values()), invalid)


def _within_budget(
    skills: list[Skill], invalid: list[InvalidSkill]
) -> tuple[list[Skill], list[InvalidSkill]]:
    """The skills whose bodies fit SKILLS_BUDGET together, in order; the rest are reported as left out."""
    kept: list[Skill] = []
    used = 0
    for skill in skills:
        size = len(skill.body.encode("utf-8"))
        if used + size > SKILLS_BUDGET:
            reason = (
                f"{skill.path}: left out of the prompt: it would take the skills past "
                f"{SKILLS_BUDGET // 1024} kB in all ({size // 1024} kB, {used // 1024} kB already used)"
            )
            stem = skill.root.name.removesuffix(".md")
            invalid.append(InvalidSkill(stem, skill.path, skill.source, reason))
            continue
        kept.append(skill)
        used += size
    return kept, invalid


def load_skills_checked(
    bot: str, repo_root: Path | None, shipped: list[str], fixed: list[Layer | None] | None = None
) -> tuple[list[Skill], list[str]]:
    """The bot's prompt skills, and one warning line per skill file skipped because it does not load.

    A bad file (maybe one the bot wrote itself) must not stop every later run: it is left out and reported.
    """
    skills, invalid = check_skills(bot, repo_root, shipped, fixed=fixed)
    return skills, [i.warning(bot) for i in invalid]


def load_skills(bot: str, repo_root: Path | None, shipped: list[str]) -> list[Skill]:
    """Exactly the skills a bot's prompt gets; files that do not load are left out (load_skills_checked)."""
    return check_skills(bot, repo_root, shipped)[0]
