"""work_mode "edits": the turn's second way of acting. The model writes files in its reply (agent/edits.py);
openbot applies them through the `edit` tool (the sandbox's write rule holds), commits them in the run's
checkout, runs the bot's check and sends back what failed — as aider drives a small model.

    reply ──parse──> edits, one ```sh command, DONE
      edits        each through the edit tool (path slips repaired), then one commit: the reply's first line
      command      the first ```sh block, through the shell tool (sandboxed); later ones are not run
      check        after an applied edit, the verify commands through the shell tool: all pass → the
                   session completes (openbot's own verification of the branch then runs, as for
                   session_complete); one fails → its output's tail is the next message
      nothing      told the format once; again → Stuck. After committed work, or with DONE: completed
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache, partial

from openbot.agent import editio
from openbot.agent import editwords as say
from openbot.agent.checkfail import TAIL_CHARS, error_of, explain, kind_of, place, tail
from openbot.agent.editback import Start, message, note
from openbot.agent.edits import Edit, Parsed, commit_message, edited, parse_reply, repair, summary
from openbot.agent.excerpt import Excerpt, around, put_edit
from openbot.agent.focus import Focus, focus
from openbot.agent.repomap import is_test
from openbot.agent.tools.base import Tool, ToolContext, ToolOutput
from openbot.agent.tools.registry import run_tool
from openbot.agent.wholefile import LOST, SPLICED, WholeFiles, lost
from openbot.events import ToolCall
from openbot.stops import Completed, Completion, Stuck


@dataclass
class EditMode:
    """One session's edits: the files its first message showed, the check, what was applied."""

    tools: list[Tool]
    checks: tuple[str, ...] = ()  # the bot's verify commands, run after each applied edit
    check_timeout_secs: float = 600
    in_chat: list[str] = field(default_factory=list)  # the files the first message showed
    files: set[str] = field(default_factory=set)  # the checkout's files, for repairing paths
    new: list[str] = field(default_factory=list)  # files the task names that do not exist yet
    told: bool = False  # the format was explained after a reply with nothing in it
    failing: str = ""  # what the check's last failure said (the error, the line it points at)
    error: str = ""  # the error line of that failure ("" when none names an exception)
    about: Focus | None = None  # the function the check's last failure is about (agent/focus.py)
    place: str = ""  # the file the check's last failure points at
    line: int = 0  # and its line there
    excerpt: Excerpt | None = None  # the lines around that line, shown after an unchanged reply
    narrow: str = ""  # the message a new conversation starts from, when one should (`narrowed`)
    last: str = ""  # the last reply, to know it sent again
    draws: int = 0  # replies sampled differently so far (the seed of the next: agent/models/openai/chat.py)
    task: str = ""  # the task as the first message says it (for `narrowed`)
    base: tuple[str, str, str, int, int] | None = None  # narrowed from: file, text, error kind, lines shown
    same: int = 0  # replies in a row that sent files back unchanged while the check failed
    restart: Callable[[str], str] | None = None  # the first message again, as things are now (editturn.py)
    applied: bool = False  # an edit of this session was committed
    start: Start = field(default_factory=Start)  # the files and the failure before any edit (editback.py)
    whole: WholeFiles = field(default_factory=WholeFiles)

    def __post_init__(self) -> None:
        self.whole.seen.update(self.in_chat)

    def show(self, in_chat: list[str], new: list[str]) -> None:
        """The files the first message showed (chosen after `before`), and the new ones the task names."""
        self.in_chat, self.new = in_chat, new
        self.whole.seen.update(in_chat)

    def failing_in(self) -> list[str]:
        """The code's file the check's failure is about (the function's, or the place's when it is not a
        test's): shown first, instead of the files the task's words point at."""
        if self.about:
            return [self.about.path]
        return [self.place] if self.place and not is_test(self.place) else []

    def act(self, text: str, ctx: ToolContext, step: int, truncated: bool = False) -> str:
        """Apply the reply `text` (`truncated`: it ended at its length limit); the next message for the
        model. Raises Completed when the work is done (the check passed after an edit, or the model said
        so), Stuck after a second empty reply."""
        repeated, self.last = text.strip() == self.last, text.strip()
        parsed = parse_reply(text, [*self.files, *self.new])
        shown = self.excerpt
        if shown and not parsed.edits:  # the lines shown, sent back changed with no path before them
            parsed.edits = [Edit(shown.path, b) for b in parsed.loose if shown.takes(b)]
        if not truncated:  # a block left open by a reply that ended by itself holds the whole file
            parsed.edits = [dataclasses.replace(e, cut=False) for e in parsed.edits]
        if not parsed.edits and not parsed.commands:
            return self._nothing(text, parsed)
        self.told = False
        notes, changed = self._apply(parsed.edits, ctx, step, shown)
        if changed:
            self.same, self.excerpt = 0, None
            notes.append(self._commit(changed, text, ctx, step))
        if parsed.commands:
            notes.append(self._command(parsed.commands, ctx, step))
        before = self._signature(ctx) if changed and self.failing and not self.base else None
        failed = self._check(ctx, step) if changed and self.checks else None
        if failed and self.base and not self._further():
            failed = self._undo(ctx, step)
        elif failed and before and before[1] and self._signature(ctx) == before:
            self._again(ctx)  # the change did not reach it
        elif changed:
            self.base, self.start.undone = None, 0  # passed, or failing the same way further on: kept
        if failed:
            return "\n\n".join([*notes, failed])
        lost = any(LOST in note for note in notes)  # asked first, even when it said DONE or the check passed
        if not lost and (changed and self.checks or parsed.done and not parsed.commands):
            raise Completed(Completion(summary(text, changed, bool(self.checks)), "review"))
        if parsed.edits and not changed and self.applied and not parsed.commands and not self.failing:
            raise Completed(Completion(summary(text, [], False), "review"))  # nothing left to change
        ask = say.AGAIN if lost else say.ASK_DONE if changed else self._unchanged(parsed, notes, ctx)
        if repeated and not changed and not ask:  # sampled differently next (agent/models/openai/chat.py)
            shown = self._again(ctx, shown)
            ask = say.REPEATED + (f"\n{shown.shown()}\n{shown.ask()}" if shown else "")
        return "\n\n".join([*notes, ask] if ask else notes)

    def narrowed(self) -> str | None:
        """After a reply that did not move the failure (`_again`), once: the whole message a new
        conversation starts from — the error, the lines around it, the task. None otherwise. A 1.5B model
        sent `parse_time` back unchanged five times in the conversation that showed it, ~40 s each
        (isodate ad4e50bd7c); asked with only these, a try is ~5 s."""
        narrow, self.narrow = self.narrow, ""
        return narrow or None

    def _again(self, ctx: ToolContext, keep: Excerpt | None = None) -> Excerpt | None:
        """The reply did not move the failure: the next is sampled differently, with a seed not used before
        (the same seed for the same narrowed question gave the same answer: two wrong edits undid each
        other in turn, 20 times), and starts a new conversation from the error, the lines around it (or
        `keep`) and the task — the model's copies of the file, which it copied again even sampled at 1.2,
        left behind. The lines, None when the failing line is not the code's."""
        self.same += 1
        self.draws += 1
        read = cache(partial(editio.current, ctx))  # each file once: the lines and the base read the same
        self.excerpt = shown = around(self.place, read, self.line, self.about) or keep
        if shown and self.task:
            if self.base is None:
                now = read(shown.path) or ""
                self.base = (shown.path, now, kind_of(self.error), shown.start, shown.end)
            name = self.about.name if self.about and self.about.path == shown.path else ""
            self.narrow = shown.narrowed(self.error, name, self.task)
        return shown

    def _further(self) -> bool:
        """The check fails with the narrowed error's kind away from the lines shown (a try is kept for it)."""
        assert self.base is not None
        path, _, kind, start, end = self.base
        here = self.place == path and start <= self.line <= end
        return kind_of(self.error) == kind and not here

    def _undo(self, ctx: ToolContext, step: int) -> str:
        """A narrowed try that fails, not `_further`, is undone by a commit (it stays in the history); the
        next starts from the same lines (at ad4e50bd7c the tries wandered, each from the last, afar)."""
        assert self.base is not None
        path, text = self.base[:2]
        error = self.error or "another failure"
        self._write(path, text, ctx, f"undo_{step}")
        said = self._commit([path], f"Undo a try that failed with {error[:80]}", ctx, step, "undo_commit")
        self._check(ctx, f"{step}_undone")  # the failure as it was, for the next try
        self.start.undone += 1
        if self.start.due(self.place, self.error):
            return self._back(ctx, step)
        self._again(ctx)
        return f"[openbot] That change left the check failing ({error}), so it was undone. {said}"

    def _back(self, ctx: ToolContext, step: int) -> str:
        """Every file put back as the session found it (editback.py), and the next try made from there:
        the lines of its failure narrowed to, or the function it is about, or the first message again."""
        error, undone, self.start.undone, self.base = self.error, self.start.undone, 0, None
        back = self.start.changed({p: editio.current(ctx, p) for p in self.start.texts})
        for n, (path, text) in enumerate(back.items(), 1):
            self._write(path, text, ctx, f"back_{step}_{n}")
        put = self._commit(list(back), say.BACK_COMMIT, ctx, step, "back") if back else ""
        said = note(error, undone, put)
        failed = self._check(ctx, f"{step}_back") or ""
        if self._again(ctx):  # sampled differently either way: `_again` counts the draw
            self.narrow = f"{said}\n\n{self.narrow}"
        else:
            again = self.restart(f"{said}\n\n{failed}") if self.restart else said
            self.narrow = message(said, self.failing, self.about, self.task) if self.about else again
        return said

    def _signature(self, ctx: ToolContext) -> tuple[str, str, str]:
        """The check's last failure: the file, the text of the line it points at, the error."""
        text = editio.current(ctx, self.place) if self.place else None
        return self.place, editio.line_at(text, self.line), self.error

    def _unchanged(self, parsed: Parsed, notes: list[str], ctx: ToolContext) -> str:
        """After files sent back as they are: the check's failure again, and what to do — a 1.5B model
        told only "already so" sent the same unchanged 140-line file five times, each 40 s."""
        if not parsed.edits or parsed.commands or not self.failing or not any(say.SAME in n for n in notes):
            return ""
        shown = self._again(ctx)
        if shown:
            return say.UNCHANGED.format(self.failing) + shown.shown() + "\n" + shown.ask()
        if self.about is None:
            return say.UNCHANGED.format(self.failing) + say.CHANGE_LINES
        direction = say.CHANGE_FUNCTION.format(path=self.about.path, name=self.about.name)
        return say.UNCHANGED.format(self.failing) + self.about.shown() + "\n" + direction

    def _nothing(self, text: str, parsed: Parsed) -> str:
        """A reply with no edit and no command: the end after committed work the check passed (or with
        no check; or a second DONE), else the format, once — with the check's failure when it fails."""
        if self.applied and not self.failing or parsed.done and self.told:
            raise Completed(Completion(summary(text, [], False), "review"))
        if self.told:
            raise Stuck("two replies in a row held no edit and no command")
        self.told = True
        failing = f"\n\nThe check still fails. {self.failing}" if self.failing else ""
        return (say.NOTHING_YET if parsed.done else "[openbot] ") + say.FORMAT + failing

    def _apply(
        self, edits: list[Edit], ctx: ToolContext, step: int, shown: Excerpt | None = None
    ) -> tuple[list[str], list[str]]:
        """Each edit written through the edit tool (`shown`: the lines last shown, which a block may be,
        changed); (what is said of each, the paths that changed)."""
        notes: list[str] = []
        changed: list[str] = []
        for n, edit in enumerate(edits, 1):
            path = repair(edit.path, self.files, self.in_chat, str(ctx.workdir.resolve()), self.new)
            moved = f" (you wrote {edit.path})" if path != edit.path else ""
            before = editio.current(ctx, path)
            put = put_edit(shown, path, before, edit)  # the lines shown, changed: not the whole file seen
            whole, said = (put, "") if put is not None else self.whole.judge(path, before, edit)
            if shown and put is not None and put != before:
                said = say.PUT.format(shown.start, shown.end)
            new, problem = (whole, "") if whole is not None else ("", said) if said else edited(before, edit)
            if problem:
                notes.append(f"{path}{moved}: not changed: {problem}")
                continue
            if new == before:
                notes.append(f"{path}{moved}: {say.SAME}, nothing to change")
                continue
            self.start.texts.setdefault(path, before)
            out = self._write(path, new, ctx, f"edit_{step}_{n}")
            if out.is_error:
                notes.append(f"{path}{moved}: not written: {out.content}")
                continue
            changed.append(path)
            self.files.add(path)
            how = "search/replace" if edit.search is not None else said or "whole file"
            notes.append(f"{path}{moved}: written ({how}){lost(before, new) if edit.search is None else ''}")
            if edit.search is None and put is None and not said.startswith(SPLICED):
                self.whole.seen.add(path)
            if LOST in notes[-1]:
                both = f"{(before or '').rstrip()}\n{new.rstrip()}"  # what an addition would have made
                notes.append(f"If you meant to add to it, send it whole, as:\n{path}\n```\n{both}\n```")
        return notes, changed

    def _commit(self, changed: list[str], text: str, ctx: ToolContext, step: int, id: str = "commit") -> str:
        message = commit_message(text, changed)
        out = self._run("shell", {"command": editio.commit_command(changed, message)}, ctx, f"{id}_{step}")
        if editio.exit_code(out) != 0:
            return f"[openbot] could not commit: {editio.body(out)[-500:]}"
        self.applied = True
        return f"[openbot] committed {editio.body(out).strip()}: {message}"

    def _command(self, commands: list[str], ctx: ToolContext, step: int) -> str:
        return editio.ran(commands, self._run("shell", {"command": commands[0]}, ctx, f"sh_{step}"))

    def before(self, ctx: ToolContext) -> str:
        """The check once before the first reply, for the first message: what fails now and where, so
        that the model's first answer aims at it ("" when it passes, or there is no check)."""
        failed = self._check(ctx, 0, say.BEFORE_TAIL)
        self.start.failure = (self.place, self.error)
        if not failed:
            return ""
        about = f"\n{self.about.shown()}" if self.about else ""
        return failed.removesuffix(say.FIX).replace(say.FAILED, say.NOW, 1).strip() + about

    def _check(self, ctx: ToolContext, step: int | str, limit: int = TAIL_CHARS) -> str | None:
        """The check after an edit: None when every command passed, else what failed."""
        for n, command in enumerate(self.checks, 1):
            input: dict[str, object] = {
                "command": say.NO_PYC + command,
                "timeout_secs": self.check_timeout_secs,
            }
            out = self._run("shell", input, ctx, f"check_{step}_{n}")
            if editio.exit_code(out) != 0:
                spot = place(editio.body(out), ctx.workdir, self.files)
                self.error = error_of(editio.body(out))
                where = explain(self.error, ctx.workdir, spot)
                self.failing = where or f"`{editio.short(command)}` failed ({editio.head(out)})"
                self.about = focus(ctx.workdir, self.files, *spot) if spot else None
                self.place, self.line = spot if spot else ("", 0)
                return (
                    f"{say.FAILED}`{editio.short(command)}` failed ({editio.head(out)}):\n```\n"
                    f"{tail(editio.body(out), limit)}\n```\n{where + chr(10) if where else ''}{say.FIX}"
                )
        self.failing, self.error, self.about, self.place, self.line = "", "", None, "", 0
        return None

    def _write(self, path: str, text: str, ctx: ToolContext, id: str) -> ToolOutput:
        return self._run("edit", {"command": "create", "path": path, "file_text": text}, ctx, id)

    def _run(self, name: str, input: dict[str, object], ctx: ToolContext, id: str) -> ToolOutput:
        ctx.sink.emit(ToolCall(id=id, name=name, input=input))
        return run_tool(self.tools, name, input, ctx, id)
