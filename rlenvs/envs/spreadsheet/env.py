"""rlenvs/Spreadsheet-v1: workbook tasks, judged by values and by recomputation.

Task source → prompt → action → transition → reward:

- Tasks: the procedural families (`families=`, `level=`; see `families/`) or
  SpreadsheetBench-style folders (`task_dir=`, see `folders`).
- Prompt: the instruction, then every sheet as a grid with column letters and row numbers
  (`render`); long sheets are cut with a note on how to READ the rest.
- Action: one or more lines of the action language (`actions`): SET, FILL, READ, INSERT
  ROWS, DELETE ROWS, SORT, SUBMIT. A reply with a malformed line changes nothing and gets
  the error back; the episode goes on.
- Transition: the actions run on the episode's workbook (`workbook.Workbook`, our own
  formula engine), each reporting its result; that report is the next observation.
- Reward, at SUBMIT or the last turn (`verdict`): 1.0 when every target cell's value
  matches the expected one (SpreadsheetBench's comparison, `rlenvs.rewards.spreadsheet`,
  with no more decimals than the task asks where it asks to round), computed on the task's
  own input data (the agent's edits to the inputs are written over), and, where the task
  asks for formulas, each of those cells holds a formula that reads the task's data and
  still gives the right value after the env changes the input data and recalculates
  (numbers scaled, dates shifted, text shuffled within its column, and what a hard-coded
  formula would rely on: rows moved, keys and groups reassigned, values put on the task's
  thresholds; see `perturb`): typed-in values and hand-done lookups score 0. A judged cell
  whose value was computed from RAND, RANDBETWEEN, NOW or TODAY on any of these
  recalculations scores 0 (it changes at every recalculation: a lucky draw must not pass;
  see `formulas.functions.volatile`). The changed copies and every RAND are seeded from
  the episode's seed: an episode replays with its verdict.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gymnasium.error import ResetNeeded

from rlenvs.core.checks import check_int
from rlenvs.core.env import Judgement, TextEnv
from rlenvs.core.procedural import ProceduralEnv
from rlenvs.core.task import DatasetSource, TaskSource
from rlenvs.envs.spreadsheet.families import FAMILIES
from rlenvs.envs.spreadsheet.operations import run_reply
from rlenvs.envs.spreadsheet.oracle import Contents, OracleError, contents, gold_states, rewrite
from rlenvs.envs.spreadsheet.tasks import SpreadsheetTask, family_task
from rlenvs.envs.spreadsheet.verdict import judge, refers_to_cells
from rlenvs.workbook.workbook import Workbook
from rlenvs.workbook.xlsx import write_xlsx

DEFAULT_SYSTEM_PROMPT = (
    "You are editing a spreadsheet through actions, one per line, in a ``` block:\n"
    'SET B2 =SUM(C2:C9) | SET A1 "text" | SET C3 42 | FILL D2 D3:D20 (copy D2 down, references move) | '
    "READ A1:D20 | INSERT ROWS 5 2 | DELETE ROWS 7:9 | SORT A2:D20 BY C DESC | SUBMIT\n"
    "Cells without a sheet name are on the first sheet; write Data!B2 for another. You see each action's "
    "result. Reply SUBMIT when the task is done."
)


class SpreadsheetEnv(ProceduralEnv, TextEnv[SpreadsheetTask]):
    """Spreadsheet tasks; see the module docstring.

    `families`: a family name, a list, or None for all; `level`: 1 or 2. `task_dir`: a
    folder of SpreadsheetBench-style task folders instead. `perturbations`: how many
    changed copies of the input data a formula answer must also get right.
    """

    env_name = "Spreadsheet-v1"
    task_families = FAMILIES

    @classmethod
    def task_of(cls, family: str, level: int, index: int) -> SpreadsheetTask:
        return _task_at(family, level, index)

    def __init__(
        self,
        families: str | Sequence[str] | None = None,
        level: int = 1,
        task_dir: str | None = None,
        max_turns: int = 10,
        perturbations: int = 2,
        system_prompt: str | None = DEFAULT_SYSTEM_PROMPT,
        render_mode: str | None = None,
    ) -> None:
        source: TaskSource[SpreadsheetTask]
        if task_dir is not None:
            from rlenvs.envs.spreadsheet.folders import load_task_folders

            source = DatasetSource(load_task_folders(task_dir), name=str(task_dir))
        else:
            source = self.family_mix("spreadsheet", families, level, _task_at)
        check_int("perturbations", perturbations, at_least=1, at_most=10)
        super().__init__(source, max_turns=max_turns, system_prompt=system_prompt, render_mode=render_mode)
        self.perturbations = perturbations
        self.workbook: Workbook | None = None
        self.seed_of_episode = 0
        self._gold: list[Contents] | None = None
        """The workbook's contents at the start and after each reference reply (`oracle_action`)."""

    # --- task source -----------------------------------------------------------------------

    def task_from_row(self, row: Mapping[str, Any]) -> SpreadsheetTask:
        raise ValueError(
            "Spreadsheet-v1 poses tasks from its families or from task folders (task_dir=...); a task row cannot "
            "carry its recomputation rule: write a family (see rlenvs/envs/spreadsheet/families) or a task folder"
        )

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        observation, info = super().reset(seed=seed, options=options)
        self.workbook = Workbook.from_rows(self.current_task.sheets)
        self.seed_of_episode = int(self.np_random.integers(2**63))
        self.workbook.seed(self.seed_of_episode)  # RAND replays with the episode's seed, and so does the verdict
        self._gold = None
        return observation, info

    @property
    def _episode_workbook(self) -> Workbook:
        """The current episode's workbook; gymnasium's `ResetNeeded` before the first `reset()`
        (as `current_task`)."""
        if self.workbook is None:
            raise ResetNeeded(f"{type(self).__name__}: call reset() first; there is no workbook yet")
        return self.workbook

    # --- one turn ----------------------------------------------------------------------------

    def judge(self, task: SpreadsheetTask, reply: str) -> Judgement:
        last_turn = self.turn >= self.max_turns
        workbook = self._episode_workbook
        report, submitted = run_reply(workbook, reply)
        if submitted or last_turn:
            reward, info = self.verify(task, workbook)
            stop = "submitted" if submitted else "max_turns"
            return Judgement(reward, resolved=submitted, correct=reward == 1.0, stop_reason=stop, info=info)
        return Judgement(0.0, resolved=False, feedback=report or "(no changes)")

    # --- reward --------------------------------------------------------------------------------

    def verify(self, task: SpreadsheetTask, workbook: Workbook) -> tuple[float, dict[str, Any]]:
        """The reward and why (see `verdict`): values on the task's own data, then each
        formula cell's formula, how it follows changed data, and no volatile value on any
        recalculation, all seeded from the episode's seed."""
        return judge(task, workbook, seed=self.seed_of_episode, perturbations=self.perturbations)

    def oracle_reply(self, task: SpreadsheetTask, turn: int) -> str:
        """A reply that earns the maximum reward from the workbook as it is now.

        The oracle does not count turns; it compares what the cells hold with the states
        the reference replies pass through (`oracle.gold_states`). Where the workbook holds
        what the first k of them leave (a READ, or any reply that changed nothing, keeps it
        there): the next reference reply, then SUBMIT. Anything else (a cell set, cleared,
        sorted or moved by a reply that is not the reference's): replies that write every
        cell that differs from the reference's final workbook (SET of its constant or
        formula, clearing, a date copied with FILL), the last one ending in SUBMIT; where
        the turns left are fewer than the reference replies still to come, that too. Those
        replies are played on a copy and judged before the first is given.

        Raises OracleError, with the reason, where no reply can earn the maximum: a cell the
        verdict needs that must hold a date or an error value no cell holds any more (no
        SET can type one), or more replies than turns are left. Once the episode has ended:
        SUBMIT (a vector env asks every sub-env for a reply and resets an ended one at its
        next step, ignoring it)."""
        if self.episode_over:  # a vector env asks every sub-env, and resets this one at its next step
            return "SUBMIT"
        if self._gold is None:
            self._gold = gold_states(task, self.seed_of_episode)
        workbook = self._episode_workbook
        now, count, left = contents(workbook), len(task.solution), self.max_turns - turn
        done = max((k for k in range(min(turn, count) + 1) if self._gold[k] == now), default=None)
        if done == count:
            return "SUBMIT"
        if done is not None and count - done <= left:
            return task.solution[done]
        replies, lost = rewrite(task, workbook, self._gold[count])
        if len(replies) > left:
            raise OracleError(
                f"task {task.task_id}: the workbook needs {len(replies)} more replies to become the reference's "
                f"({sum(r.count(chr(10)) for r in replies)} cell writes), and {left} turn(s) are left"
            )
        trial = workbook.copy()  # the verdict decides, not the oracle: play them out on a copy
        for reply in replies:
            run_reply(trial, reply)
        if self.verify(task, trial)[0] < 1.0:
            why = (
                f"{', '.join(lost[:5])} must hold the reference's values, which no SET can type (a date, an error "
                "value) and no cell holds any more to copy"
                if lost
                else "the workbook written back to the reference's does not pass the verdict"
            )
            raise OracleError(
                f"task {task.task_id}: no reply earns the maximum from here: {why}. The oracle works from the "
                "start, and after replies that keep such cells"
            )
        return replies[0]

    def save_workbook(self, path: str) -> None:
        """The episode's workbook as .xlsx, to open in a spreadsheet program."""
        if self.workbook is None:
            raise RuntimeError("SpreadsheetEnv.save_workbook: call reset() first; there is no workbook yet")
        write_xlsx(self.workbook, path)


def _task_at(name: str, level: int, index: int) -> SpreadsheetTask:
    return family_task(FAMILIES[name], level, index)


__all__ = ["DEFAULT_SYSTEM_PROMPT", "SpreadsheetEnv", "refers_to_cells"]
