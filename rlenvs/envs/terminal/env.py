"""rlenvs/Terminal-v2: shell tasks in a sandboxed workspace, judged by the final state.

Task source → prompt → action → transition → reward:

- Tasks: the procedural families (`families=`, `level=`; see `families/`), a user's own task
  row (`options={"task": {...}}`, see `tasks.task_from_row`), or Terminal-Bench-style task
  folders (`task_dir=`, see `folders`).
- Each episode gets a fresh workspace built from the task (files, folders, modes, times,
  then its setup script), in a sandbox of its own (`rlenvs.sandbox.ShellSession`) that the
  env keeps across episodes and empties on every reset.
- Action: one shell command per turn, the content of the last fenced ```bash (sh, shell,
  console, any case) block or else the bare reply; or `submit` / `submit <answer>` to finish
  (also `SUBMIT`, `submit: <answer>`), as the command or as the line closing the reply (see
  `parse_action`).
- Transition: the command runs in the episode's persistent shell (cwd, variables,
  functions carry over) under a per-command time limit; the observation is its output
  (stdout and stderr together, long output cut in the middle with a marker) and exit code.
- Reward, once the episode ends (submit, or the last turn): 1.0 when every expectation of
  the task holds for the workspace (and the submitted answer), read from the host with
  `rlenvs.envs.terminal.workspace` (no symlink followed, no tool of the agent's used); task
  folders add their own tests, run after the agent's processes are gone, from nothing the
  agent wrote but the workspace (fresh /tmp and HOME, clean environment, a folder of their
  own: `rlenvs.sandbox.shells.verdict`); a `run_tests_in_same_shell` folder's tests start where the
  agent's shell was and see some of its exported variables (`rlenvs.sandbox.shells.verdict_shell`).
"""

from __future__ import annotations

import os
import re
import shlex
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gymnasium.error import ResetNeeded

from rlenvs.core.checks import check_flag, check_int
from rlenvs.core.env import Judgement, TextEnv
from rlenvs.core.procedural import ProceduralEnv
from rlenvs.core.task import DatasetSource, TaskSource, content_task_id
from rlenvs.envs.terminal.families import FAMILIES
from rlenvs.envs.terminal.links import forbidden_links, redirecting_entries, workspace_links
from rlenvs.envs.terminal.oracle import (
    Mark,
    OracleError,
    Tree,
    block,
    read_tree,
    replay_command,
    restore_script,
    start_lines,
    start_state,
    submit_line,
    umask_of,
    unchanged,
)
from rlenvs.envs.terminal.results import results_problem
from rlenvs.envs.terminal.snapshot import Snapshot
from rlenvs.envs.terminal.tasks import TerminalTask, family_task, task_from_row
from rlenvs.envs.terminal.tmp_answers import discarded, named_paths
from rlenvs.envs.terminal.tree import MAX_TREE_ENTRIES, walk
from rlenvs.envs.terminal.workspace import Check, Verdict, WorkspaceUnreadable, check_all, read_workspace
from rlenvs.sandbox import ExecResult, Limits
from rlenvs.sandbox.launch import find_bwrap
from rlenvs.sandbox.shells.session import SessionError, ShellSession
from rlenvs.sandbox.shells.verdict import SCRATCH_FOLDERS, VERDICT_OUTPUT_BYTES, run_tests
from rlenvs.sandbox.shells.verdict_shell import SameShell, parse_shell_state, real_folder_inside, same_shell

DEFAULT_SYSTEM_PROMPT = (
    "You are working in a Linux shell (bash) inside a sandbox with no network. Each reply runs one "
    "shell command: put it in a ```bash block. You will see its output and exit code. The working "
    "directory, variables and functions carry over between commands. When the task is done, reply "
    "with just `submit`, or `submit <answer>` when the task asks for an answer."
)
DEFAULT_MAX_OUTPUT_CHARS = 4000
_FENCE = re.compile(r"```[ \t]*((?i:bash|sh|shell|console|zsh))?[ \t]*\n(.*?)```", re.DOTALL)
"""A fenced block, untagged or tagged as shell (the tag in any case: ```Bash)."""
_SUBMIT = re.compile(r"submit(?:\s*:|(?=\s)|$)\s*(?P<answer>.*)", re.DOTALL | re.IGNORECASE)
"""`submit`, `SUBMIT`, `submit: 42`, `Submit:42`: the word in any case, then the answer after
a space or a colon. `submitted` or `./submit.sh` is a command."""
_COMMENT = re.compile(r"\s+#(?:\s.*)?$", re.DOTALL)
"""A shell comment after the answer (`submit 42  # the total`): a `#` after a space, then a
space or nothing. `C#` or `#3` stay the answer."""
_CLOSING = re.compile(r"`?(?:submit|SUBMIT)(?:\s|:|`?$)|`?Submit(?:\s*:|`?$)")
"""How a `submit` line closing a reply begins: `submit` or `SUBMIT`, or `Submit:`, not
"Submit it when ready." as a sentence of prose would."""
_PROMPT_PREFIX = re.compile(r"^\$ ", re.MULTILINE)


@dataclass(frozen=True)
class Action:
    command: str
    """The shell command to run ("" when the reply held none); with `submitted`, the one to
    run before the episode ends."""
    submitted: bool = False
    answer: str | None = None


def parse_action(reply: str) -> Action:
    """What a reply does. Its command is the last fenced shell block (or untagged block), else
    the whole reply. It submits (ends the episode) when that command is `submit [answer]`
    (any case, `submit:` too, or in one pair of backticks as the prompt writes it), or when
    a `submit [answer]` line closes the reply (`submit` or `SUBMIT`, or `Submit:`; not a
    sentence such as "Submit it when ready."): after the last fenced block (whose command
    then runs first), or as the last line of a reply without one (the text before it is
    prose, not run). A shell comment after the answer is not part of it."""
    blocks = list(_FENCE.finditer(reply))
    command = blocks[-1].group(2) if blocks else reply
    command = _PROMPT_PREFIX.sub("", command.strip()) if command.lstrip().startswith("$ ") else command.strip()
    answer = _submitted(command)
    if answer is not None:
        return Action("", submitted=True, answer=answer or None)
    rest = reply[blocks[-1].end() :] if blocks else reply
    lines = [line.strip() for line in rest.strip().splitlines() if line.strip()]
    closing = _submitted(lines[-1]) if lines and (blocks or len(lines) > 1) and _CLOSING.match(lines[-1]) else None
    if closing is not None:
        return Action(command if blocks else "", submitted=True, answer=closing or None)
    return Action(command)


def _submitted(command: str) -> str | None:
    """The answer of a `submit` command ("" for none), or None when `command` is no submit."""
    quoted = len(command) > 2 and command[0] == command[-1] == "`" and "`" not in command[1:-1]
    finish = _SUBMIT.fullmatch(command[1:-1].strip() if quoted else command)
    if finish is None:
        return None
    return _COMMENT.sub("", finish.group("answer")).strip()


class TerminalEnv(ProceduralEnv, TextEnv[TerminalTask]):
    """Multi-turn shell tasks; see the module docstring.

    `families`: a family name, a list of them, or None for all (`rlenvs info
    rlenvs/Terminal-v2` lists them); `level`: 1 or 2. `task_dir`: a folder of task folders
    instead (then `families` and `level` are unused). `timeout_s`, `memory_mb`, `disk_mb`:
    the limits of each command and of the workspace. `unsafe_sandbox=True` runs without
    bubblewrap (rlimits only: never for an agent you do not trust). `backend`: how a task
    folder's machine is made (rlenvs.envs.terminal.folders.BACKENDS): "host" (the host's
    /usr, no image), "bwrap" (its Dockerfile built into an image, rlenvs.images, episodes on
    a copy-on-write view of it), "docker" (built by a Docker daemon, an episode per
    container), "auto" (for a Dockerfile with RUN lines: docker where a daemon answers,
    else bwrap); reported as `info["backend"]` at reset. `network=True` (docker and podman
    only) gives a task folder's episodes the engine's network (load_task_folders).
    """

    env_name = "Terminal-v2"
    task_families = FAMILIES

    @classmethod
    def task_of(cls, family: str, level: int, index: int) -> TerminalTask:
        return _task_at(family, level, index)

    def __init__(
        self,
        families: str | Sequence[str] | None = None,
        level: int = 1,
        task_dir: str | None = None,
        max_turns: int = 20,
        timeout_s: float = 10.0,
        memory_mb: int = 1024,
        disk_mb: int = 64,
        max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
        unsafe_sandbox: bool = False,
        system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
        render_mode: str | None = None,
        backend: str = "host",
        network: bool = False,
    ) -> None:
        source: TaskSource[TerminalTask]
        if task_dir is not None:
            from rlenvs.envs.terminal.folders import load_task_folders

            tasks = load_task_folders(task_dir, backend=backend, network=network)
            source = DatasetSource(tasks, name=str(task_dir))
        elif backend != "host" or network:
            raise ValueError(f"backend={backend!r} and network={network!r} are for task folders: they need task_dir")
        else:
            source = self.family_mix("terminal", families, level, _task_at)
        check_int("max_output_chars", max_output_chars, at_least=200)
        check_flag("unsafe_sandbox", unsafe_sandbox)
        if not unsafe_sandbox:
            find_bwrap()  # at make time, with how to install it, not in the first reset
        super().__init__(source, max_turns=max_turns, system_prompt=system_prompt, render_mode=render_mode)
        self.limits = Limits(timeout_s=timeout_s, memory_mb=memory_mb, disk_mb=disk_mb)
        self.max_output_chars = max_output_chars
        self.unsafe_sandbox = unsafe_sandbox
        self.session: ShellSession | None = None
        self._restore: Snapshot | str | None = None
        """A copy's workspace to rebuild when it next steps, or why it could not be copied."""
        self._oracle_start: Tree | None = None
        """The workspace as the episode started (`oracle.read_tree`), for the oracle to put back."""
        self._oracle_mark: Mark | None = None
        """Where the reference plan stands (see `oracle_action`)."""
        self._oracle_pending: tuple[int, str] | None = None
        """(turn, reply) of the reference command the oracle last gave, to count it once it ran."""

    # --- task source -----------------------------------------------------------------------

    def task_from_row(self, row: Mapping[str, Any]) -> TerminalTask:
        return task_from_row(row, content_task_id("terminal", row))

    # --- episode start ---------------------------------------------------------------------

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        observation, info = super().reset(seed=seed, options=options)
        task = self.current_task
        self._restore = None
        environment = "".join(f"builtin declare -x {name}={shlex.quote(value)}\n" for name, value in task.environment)
        session = self._session_for(task)
        setup = session.reset(task.files, task.setup_script, environment)
        if setup is not None and not setup.ok:
            raise RuntimeError(
                f"task {task.task_id}: its setup script failed ({setup.status}, exit code "
                f"{setup.exit_code}): {setup.stdout[-500:]}{setup.detail}"
            )
        self._oracle_start = read_tree(session)
        self._oracle_mark, self._oracle_pending = Mark(0, 0, self._oracle_start, None), None
        info["backend"] = task.image.backend if task.image is not None else "unsafe" if self.unsafe_sandbox else "host"
        if task.image is not None and task.image.stood_in:
            info["stood_in"] = task.image.stood_in
        return observation, info

    def _session_for(self, task: TerminalTask) -> ShellSession:
        """The env's sandbox, started on first use and again when a task wants its workspace
        elsewhere (a task folder's /app). Raises SessionError for a copy whose workspace
        could not be copied or rebuilt: its episode cannot go on."""
        if isinstance(self._restore, str):
            raise SessionError(self._restore)
        if self.session is None or (self.session.workdir, self.session.image) != (task.workdir, task.image):
            if self.session is not None:
                self.session.close()
            self.session = ShellSession(
                limits=self.limits, unsafe=self.unsafe_sandbox, workdir=task.workdir, image=task.image
            )
            if self._restore is not None:  # this env is a copy, made mid-episode
                snapshot, self._restore = self._restore, None
                try:
                    snapshot.restore(self.session)
                except SessionError as error:
                    self._restore = f"this env is a copy made mid-episode; its workspace could not be rebuilt: {error}"
                    raise SessionError(self._restore) from None
        return self.session

    def __getstate__(self) -> dict[str, Any]:
        """A copy (deepcopy, pickle: vector workers, checkpoints, tree search) gets no share
        of this env's sandbox: it takes a `Snapshot` of the workspace (files of any size,
        folders, hard links, symlinks; not /tmp) and the shell state, and starts its own sandbox from it
        when it next steps. A workspace that cannot be copied whole does not make the copy
        fail: the copy's next step ends its episode with the reason (reward 0)."""
        state = self.__dict__.copy()
        state["session"] = None
        if self.session is not None and self.task is not None and not self.episode_over:
            try:
                state["_restore"] = Snapshot.take(self.session, self.limits.disk_mb << 20)
            except (SessionError, WorkspaceUnreadable, OSError) as error:
                state["_restore"] = (
                    f"this env is a copy made mid-episode, and its workspace could not be copied: {error}"
                )
        return state

    # --- one turn ----------------------------------------------------------------------------

    def judge(self, task: TerminalTask, reply: str) -> Judgement:
        action = parse_action(reply)
        last_turn = self.turn >= self.max_turns
        try:
            session = self._session_for(task)
        except SessionError as error:  # a copy whose workspace could not be carried over
            return Judgement(
                0.0,
                resolved=True,
                correct=False,
                stop_reason="sandbox_error",
                info={"command_status": "sandbox_error", "detail": str(error)},
            )
        if action.submitted:
            if action.command:  # a block before the closing `submit` line runs first
                session.run(action.command, timeout_s=self.command_timeout(task))
            return self._final(task, action.answer, stop_reason="submitted", resolved=True)
        if not action.command:
            result, observation = None, "[no command: reply with one shell command in a ```bash block, or `submit`]"
        else:
            result = session.run(action.command, timeout_s=self.command_timeout(task))
            if result.status == "sandbox_error":
                return Judgement(
                    0.0,
                    resolved=True,
                    correct=False,
                    stop_reason="sandbox_error",
                    info={"command_status": result.status, "detail": result.detail},
                )
            observation = self.command_output(result)
        info = {"command_status": None if result is None else result.status,
                "exit_code": None if result is None else result.exit_code}  # fmt: skip
        if last_turn:
            final = self._final(task, None, stop_reason="max_turns", resolved=False)
            return Judgement(final.reward, resolved=False, correct=final.correct, info={**final.info, **info})
        return Judgement(0.0, resolved=False, feedback=observation, info=info)

    def command_timeout(self, task: TerminalTask) -> float:
        """The task's own per-command limit, else the env's."""
        return self.limits.timeout_s if task.timeout_s is None else task.timeout_s

    def command_output(self, result: ExecResult) -> str:
        """What the agent sees of one command: its output, cut in the middle when long, and
        how it ended."""
        text = cut_middle(result.stdout + result.stderr, self.max_output_chars)
        if result.status == "timeout":
            limit = self.command_timeout(self.current_task)
            ending = f"[the command timed out after {limit:g} s and was killed; the shell is as it was before it]"
        elif result.status == "output_limit":
            ending = f"[the command wrote more than {self.limits.output_bytes} bytes and was stopped]"
        elif result.exit_code is None and result.signal is not None:
            ending = f"[killed by signal {result.signal}]"
        elif result.detail and result.exit_code is None:
            ending = f"[not run: {result.detail}]"
        else:
            ending = f"[exit code {result.exit_code}]"
        return f"{text}\n{ending}" if text else ending

    # --- reward --------------------------------------------------------------------------------

    def verify(self, task: TerminalTask, answer: str | None) -> Verdict:
        """Judge the workspace as it is now (and the answer), from the host; then a task
        folder's tests, with the agent's /tmp entries that are no answer removed first
        (`rlenvs.envs.terminal.tmp_answers`: those the instruction does not name), unless a
        link the agent left would hand them their own files, or an entry of its /tmp would
        redirect what they write there (`rlenvs.envs.terminal.links`):
        a link into /proc, into /dev/shm, which is emptied before the tests run and then
        holds only the verdict's folders, or into /tmp, where tests write their own scratch (a
        reference output); a link or a second name of a file in /tmp. A task with tests and no
        expectations reads only the agent's links, at any depth: its tests decide, not the
        reader's caps."""
        try:
            session = self._session_for(task)
            if task.expect or not task.test_command:
                verdict = check_all(task.expect, read_workspace(session.workspace_path), answer)
            else:
                verdict = Verdict()
            if not task.test_command:
                return verdict
            elsewhere, in_tmp = _agent_entries_outside(session)
            discard = discarded((path for path, _ in in_tmp), named_paths(task.prompt), task.workdir)
            elsewhere = {path: target for path, target in elsewhere.items() if not _below(path, discard)}
            in_tmp = [(path, info) for path, info in in_tmp if not _below(path, discard)]
            links = forbidden_links(workspace_links(session.workspace_path), task.workdir, SCRATCH_FOLDERS, elsewhere)
        except (SessionError, WorkspaceUnreadable, OSError) as error:
            return Verdict(unreadable=str(error))
        detail = ""
        if links:
            shown = ", ".join(f"{path} -> {target}" for path, target in links[:3])
            detail = (
                f"a link of the agent's leads into the files of the process that reads it, or into /tmp or "
                f"/dev/shm, where the tests' and the verdict's own files are when they run ({shown}): the tests "
                "would read their own files through it, so they are not run; write the answer as a file"
            )
        elif redirecting := redirecting_entries(in_tmp):
            shown = ", ".join(redirecting[:3]) + (f" and {len(redirecting) - 3} more" if len(redirecting) > 3 else "")
            detail = (
                f"/tmp holds links or files with a second name that the agent left ({shown}): a test writing its own "
                "scratch there would write through them, so the tests are not run; leave plain files in /tmp"
            )
        if detail:
            return Verdict((*verdict.checks, Check("the task's tests pass", False, detail)), verdict.unreadable)
        try:  # out of the agent's reach: see rlenvs.sandbox.shells.verdict
            run = run_tests(
                session,
                task.tests,
                task.test_command,
                environment=task.test_environment,
                timeout_s=task.test_timeout_s or self.limits.timeout_s,
                shell=self._same_shell(task, session) if task.same_shell else None,
                discard=discard,
            )
        except SessionError as error:  # the sandbox could not be set up for them: the tests cannot pass
            passed, detail = False, str(error)
        else:
            passed, detail = _tests_passed(run, task.test_parser)
        return Verdict((*verdict.checks, Check("the task's tests pass", passed, detail)), verdict.unreadable)

    def _same_shell(self, task: TerminalTask, session: ShellSession) -> SameShell:
        """What a same-shell task's tests take from the shell the agent left, read by the host
        from its saved state (`rlenvs.sandbox.shells.verdict_shell`): the working folder where it is
        a real folder of the workspace, the exported variables the task's own variables or the
        tests' text name (none of the harness's test variables: TEST_DIR, ...), the PATH."""
        state = parse_shell_state(session.shell_state)
        cwd_ok = False
        if state is not None and state.cwd is not None and not session.unsafe:
            try:
                cwd_ok = real_folder_inside(session.workspace_path, session.workdir, state.cwd)
            except SessionError:
                cwd_ok = False
        own = {name for name, _ in task.environment}
        harness = {name for name, _ in task.test_environment} - own
        return same_shell(state, workdir=session.workdir, cwd_ok=cwd_ok, named=own | task.test_words, protected=harness)

    def _final(self, task: TerminalTask, answer: str | None, *, stop_reason: str, resolved: bool) -> Judgement:
        verdict = self.verify(task, answer)
        info = {
            "submitted_answer": answer,
            "reward_breakdown": {check.expectation: check.passed for check in verdict.checks},
            "failed_checks": [check.detail for check in verdict.failures()] + ([verdict.unreadable] if verdict.unreadable else []),
        }  # fmt: skip
        return Judgement(verdict.reward, resolved=resolved, correct=verdict.passed, stop_reason=stop_reason, info=info)

    def oracle_reply(self, task: TerminalTask, turn: int) -> str:
        """A reply that earns the maximum reward from the current state: the reference
        solution's next command, or one reply that re-plans and submits.

        The reference commands are written for the workspace and the shell the task starts
        with, so the oracle counts those that have run and compares the workspace (kinds,
        modes, mtimes, contents; /tmp and /dev/shm too) and the shell (working directory,
        variables, functions, aliases, umask) with what they left:

        - both unchanged (the agent only read: `ls -la`, `cat`, `grep`): the next reference
          command, one per turn, then `submit [answer]` (folded into the last command's
          reply, or all of them into one reply, when the turns left are fewer);
        - either changed: when the workspace already passes the task's checks (a task
          without tests), `submit [answer]`; else one reply whose command starts a bash
          with nothing of the agent's shell, puts the workspace back as the task started
          (the entries that differ, or all of it and the setup script again, where a changed
          entry was the setup script's), runs the reference commands as the session would
          and submits (see `rlenvs.envs.terminal.oracle`).

        Raises OracleError, with the reason, where no reply can earn the maximum: a task
        without a reference solution (and no answer to submit), or a workspace to put back
        that does not fit in one command (100,000 bytes): the oracle then works from the
        start, or after commands that change neither the workspace nor the shell. Once the
        episode has ended: `submit` (a vector env asks every sub-env for a reply and resets
        an ended one at its next step, ignoring it)."""
        if self.episode_over:  # a vector env asks every sub-env, and resets this one at its next step
            return submit_line(task)
        if not task.solution and task.answer is None:
            raise OracleError(
                f"task {task.task_id} has no reference solution (a row's 'solution', a folder's solution.sh or "
                "solution/solve.sh) and no answer to submit: the oracle has nothing to run"
            )
        session = self._session_for(task)
        mark, pending, self._oracle_pending = self._reference_mark, self._oracle_pending, None
        last = next((m["content"] for m in reversed(self.transcript) if m["role"] == "assistant"), None)
        tree = None
        if pending is not None and pending == (turn - 1, last):  # the reference command ran from `mark`
            mark = Mark(mark.index + 1, turn, read_tree(session), session.shell_state)
            same_tree = same_shell = True
        elif mark.turn == turn:
            same_tree = same_shell = True
        else:
            tree = read_tree(session)
            start = start_state(session, self._workdir(session), task.environment) if mark.shell is None else ""
            same_tree, same_shell = unchanged(mark, tree, session.shell_state, start)
            if same_tree and same_shell:
                mark = replace(mark, turn=turn)
        self._oracle_mark = mark
        remaining = task.solution[mark.index :]
        if same_tree and (same_shell or not remaining):
            if not remaining:
                return submit_line(task)
            if len(remaining) < self.max_turns - turn:
                reply = block(remaining[0])
                self._oracle_pending = (turn, reply)
                return reply
            if len(remaining) == 1:
                return block(remaining[0], then_submit=task)
        elif self._passes_now(task, session):
            return submit_line(task)
        if not task.solution:
            raise OracleError(
                f"task {task.task_id}: the workspace changed and no longer passes, and the task has no reference "
                "solution to run again: the oracle can only submit its answer, which would not earn the maximum"
            )
        if same_tree:  # the shell changed (or there are fewer turns than commands): run them from the mark's shell
            shell = mark.shell if mark.shell is not None else start_lines(task.environment)
            return block(self._replay(session, "", shell, remaining), then_submit=task)
        restore = restore_script(task, self._oracle_start, tree, session.unsafe)
        return block(self._replay(session, restore, start_lines(task.environment), task.solution), then_submit=task)

    @property
    def _reference_mark(self) -> Mark:
        """Where the reference plan stands (`_oracle_mark`); gymnasium's `ResetNeeded` before
        the first `reset()` (as `current_task`)."""
        if self._oracle_mark is None:
            raise ResetNeeded(f"{type(self).__name__}: call reset() first; the reference plan has not started")
        return self._oracle_mark

    def _workdir(self, session: ShellSession) -> str:
        """The workspace as the shell sees it (in unsafe mode, a host folder)."""
        return session.workspace_path if session.unsafe else session.workdir

    def _replay(self, session: ShellSession, restore: str, shell: str, commands: tuple[str, ...]) -> str:
        """The re-planning command. A same-shell task's tests read the shell too, and the replay
        runs the reference commands in a bash of its own: its last step saves the state they
        left, which the agent's shell then takes on (its exported variables replaced by it)."""
        task = self.current_task
        umask = umask_of(start_state(session, self._workdir(session), task.environment))
        if not task.same_shell:
            return replay_command(task, self._workdir(session), umask, restore, shell, commands)
        command = replay_command(task, self._workdir(session), umask, restore, shell, (*commands, _SAVE_SHELL))
        return f"{command}\n{_ADOPT_SHELL}"

    def _passes_now(self, task: TerminalTask, session: ShellSession) -> bool:
        """Whether the workspace already meets the task's expectations with its answer (a task
        judged by expectations alone: tests would have to run to tell)."""
        if task.test_command or not task.expect:
            return False
        try:
            return check_all(task.expect, read_workspace(session.workspace_path), task.answer).passed
        except (SessionError, WorkspaceUnreadable):
            return False

    def close(self) -> None:
        if self.session is not None:
            self.session.close()
            self.session = None
        super().close()


_REPLAY_SHELL = "/tmp/rlenvs-oracle-shell"
_SAVE_SHELL = f"__rlenvs_save 3>{_REPLAY_SHELL}"
"""The replay's last step: the session program's own saving of the state, to a file."""
_ADOPT_SHELL = (
    f"if [ -s {_REPLAY_SHELL} ]; then for __rlenvs_name in $(builtin compgen -e); do builtin unset -v "
    f'"$__rlenvs_name" 2>/dev/null; done; builtin source {_REPLAY_SHELL} 2>/dev/null; /bin/rm -f {_REPLAY_SHELL}; fi'
)
"""The agent's shell taking on the state the replay left (its exported variables dropped first)."""


def _tests_passed(run: ExecResult, parser: str) -> tuple[bool, str]:
    """Whether a task folder's test run passed, and if not why: its exit status, and for
    `parser` "pytest" the results it printed (`rlenvs.envs.terminal.results`)."""
    shown = cut_middle(run.stdout, 1000)
    if run.status == "output_limit":
        return False, f"the tests printed more than {VERDICT_OUTPUT_BYTES} bytes and were stopped: {shown}"
    if run.status != "ok":
        return False, f"the task's tests failed ({run.status}): {shown}"
    problem = results_problem(run.stdout) if parser == "pytest" else ""
    if problem:
        return False, f"the test script exited 0, but {problem}: {shown}"
    return True, ""


def cut_middle(text: str, limit: int) -> str:
    """`text` if it fits in `limit` characters, else its start and end around a marker."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - 2 * half} characters cut ...]\n{text[-half:]}"


def _task_at(name: str, level: int, index: int) -> TerminalTask:
    return family_task(FAMILIES[name], level, index)


def _below(path: str, folders: Sequence[str]) -> bool:
    return any(path == folder or path.startswith(folder + "/") for folder in folders)


def _agent_entries_outside(session: ShellSession) -> tuple[dict[str, str], list[tuple[str, os.stat_result]]]:
    """What the agent left outside the workspace that a verdict reads, from the host without
    following a link: its links (path: target), and its entries in /tmp (path, lstat). On an
    image, where the agent is root, whatever the episode changed; elsewhere /tmp is all it
    could write. (Where an image's changes are too many to read whole, `run_tests` runs no
    tests, and says so.)"""
    if session.image is not None:
        paths: Sequence[str] = session.image_changes(skip=(session.workdir.rstrip("/"),)).changed
    else:
        paths = [f"/tmp/{found.path}" for found in walk(session.host_path("/tmp"), max_entries=MAX_TREE_ENTRIES)]
    links, in_tmp = {}, []
    for path in paths:
        try:
            info = os.lstat(session.host_path(path))
        except FileNotFoundError:  # deleted: the image's entry is gone
            continue
        if stat.S_ISLNK(info.st_mode):
            links[path] = os.readlink(session.host_path(path))
        if path.startswith("/tmp/"):
            in_tmp.append((path, info))
    return links, in_tmp
