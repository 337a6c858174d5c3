"""GSM8K-Tool-v1: calculator turns, then GSM8K-v1's scoring, on the real GSM8K test set."""

from __future__ import annotations

import json
import re
from pathlib import Path

import gymnasium as gym
import pytest

from rlenvs.envs.math.gsm8k import worked_solution
from rlenvs.envs.math.gsm8k_tool import DEFAULT_SYSTEM_PROMPT, TOOL_FORMAT_REMINDER, GSM8KToolEnv
from rlenvs.envs.tools.calculator_calls import MAX_CALLS_PER_REPLY, find_calculator_calls
from rlenvs.rewards.math import parse_number
from tests.conftest import GSM8K_TEST

ROWS = [json.loads(line) for line in GSM8K_TEST.read_text().splitlines()]
ANNOTATION = re.compile(r"<<([^<>=]*)=([^<>]*)>>")
RESULT_LINE = re.compile(r"<result>(.*)</result>")
ERROR_LINE = re.compile(r"<error>(.*)</error>")


def gold_number(row: dict) -> str:
    return row["answer"].rsplit("####", 1)[1].strip()


def make(**kwargs) -> GSM8KToolEnv:
    return gym.make("rlenvs/GSM8K-Tool-v1", split="test", **kwargs).unwrapped


@pytest.fixture(scope="module")
def env() -> GSM8KToolEnv:
    return make()


def test_a_tool_call_then_the_right_answer_scores_one(env: GSM8KToolEnv) -> None:
    obs, info = env.reset(options={"task_index": 0})  # Janet's ducks: (16 - 3 - 4) * 2 = 18
    assert info["max_turns"] == 5 and info["messages"][0] == {"role": "system", "content": DEFAULT_SYSTEM_PROMPT}
    obs, reward, terminated, truncated, info = env.step("Eggs left: <calculator>(16 - 3 - 4) * 2</calculator>")
    assert (obs, reward, terminated, truncated) == ("<result>18</result>", 0.0, False, False)
    assert info["messages"] == [{"role": "user", "content": "<result>18</result>"}]
    assert (info["tool_calls"], info["tool_errors"], info["tool_calls_total"]) == (1, 0, 1)
    assert info["stop_reason"] is None and info["correct"] is False
    obs, reward, terminated, truncated, info = env.step("She makes \\boxed{18} dollars a day.")
    assert (obs, reward, terminated, truncated) == ("", 1.0, True, False)
    assert info["correct"] is True and info["stop_reason"] == "answered" and info["parsed_answer"] == "18"
    assert (info["tool_calls"], info["tool_calls_total"]) == (0, 1)
    assert env.turn == 2


def test_a_tool_call_then_a_wrong_answer_scores_zero(env: GSM8KToolEnv) -> None:
    env.reset(options={"task_index": 0})
    env.step("<calculator>16 - 3 - 4</calculator>")
    _, reward, terminated, truncated, info = env.step("\\boxed{9}")
    assert (reward, terminated, truncated, info["correct"]) == (0.0, True, False, False)


def test_several_calls_are_answered_in_order(env: GSM8KToolEnv) -> None:
    env.reset(options={"task_index": 0})
    obs, *_, info = env.step(
        "<calculator>16-3-4</calculator> so <calculator>9 * 2</calculator>, and <calculator>7/2</calculator>"
    )
    assert obs == "<result>9</result>\n<result>18</result>\n<result>3.5</result>"
    assert (info["tool_calls"], info["tool_errors"]) == (3, 0)


def test_calls_past_the_cap_are_skipped_and_said_so(env: GSM8KToolEnv) -> None:
    env.reset(options={"task_index": 0})
    obs, *_, info = env.step("".join(f"<calculator>{n} + 1</calculator>" for n in range(MAX_CALLS_PER_REPLY + 3)))
    lines = obs.splitlines()
    assert lines[:-1] == [f"<result>{n + 1}</result>" for n in range(MAX_CALLS_PER_REPLY)]
    assert (
        lines[-1]
        == f"<error>only the first {MAX_CALLS_PER_REPLY} calculator calls in a reply are run; 3 more were skipped</error>"
    )
    assert info["tool_calls"] == MAX_CALLS_PER_REPLY


def test_a_final_answer_wins_over_calls_in_the_same_reply(env: GSM8KToolEnv) -> None:
    env.reset(options={"task_index": 0})
    obs, reward, terminated, truncated, info = env.step("<calculator>1/0</calculator> The answer is \\boxed{18}.")
    assert (obs, reward, terminated, truncated) == ("", 1.0, True, False)
    assert info["tool_calls"] == 0 and info["tool_errors"] == 0


@pytest.mark.parametrize(
    "reply",
    [
        "\\boxed{18}",
        "#### 18",
        "The answer is 18.",
        "18",
        "$18",
        "\\boxed{17}",
        "17 dollars",
        "\\boxed{18} or maybe \\boxed{19}",
        "The answer is 18. No wait, \\boxed{20}",
        "I am not sure.",
        "",
        ROWS[0]["answer"],
        ROWS[1]["answer"],
        "<result>18</result>",
        "calculator 18",
    ],
)
def test_replies_without_calls_are_judged_as_in_gsm8k_v0(reply: str) -> None:
    tool, plain = make(max_turns=3), gym.make("rlenvs/GSM8K-v1", split="test", max_turns=3).unwrapped
    tool.reset(options={"task_index": 0})
    plain.reset(options={"task_index": 0})
    *tool_step, tool_info = tool.step(reply)
    *plain_step, plain_info = plain.step(reply)
    assert tool_step[1:] == plain_step[1:]  # reward, terminated, truncated
    assert {k: tool_info[k] for k in plain_info if k != "messages"} == {
        k: v for k, v in plain_info.items() if k != "messages"
    }
    if not plain_step[2]:
        assert tool_step[0] == TOOL_FORMAT_REMINDER


def test_a_short_call_is_not_read_as_a_bare_answer(env: GSM8KToolEnv) -> None:
    """GSM8K-v1 reads a short unmarked reply ("18") as the answer; a call is not one."""
    env.reset(options={"task_index": 0})
    obs, reward, terminated, truncated, info = env.step("<calculator>18</calculator>")
    assert (obs, reward, terminated, truncated) == ("<result>18</result>", 0.0, False, False)
    assert info["parsed_answer"] is None


def test_a_reply_with_neither_gets_the_reminder(env: GSM8KToolEnv) -> None:
    env.reset(options={"task_index": 0})
    obs, reward, terminated, truncated, info = env.step("Let me think about the eggs.")
    assert (obs, reward, terminated, truncated) == (TOOL_FORMAT_REMINDER, 0.0, False, False)
    assert info["tool_calls"] == 0
    assert "<calculator>" in TOOL_FORMAT_REMINDER and "\\boxed{N}" in TOOL_FORMAT_REMINDER


@pytest.mark.parametrize(
    "reply,errors",
    [
        ("<calculator>1 + 2", ["<calculator> was not closed"]),
        ("1 + 2</calculator>", ["</calculator> without an opening <calculator>"]),
        ("<calculator></calculator>", ["empty expression"]),
        ("<calculator>  \n </calculator>", ["empty expression"]),
        ("<calculator>garbage!</calculator>", ["unexpected character"]),
        ("<calculator>the total</calculator>", ["could not parse"]),
        ("<calculator>__import__('os').system('x')</calculator>", ["unexpected character"]),
        ("<calculator>(1).__class__.__subclasses__()</calculator>", ["attribute access"]),
        ("<calculator>eggs * 2</calculator>", ["unknown name 'eggs'"]),
        ("<calculator>exec(1)</calculator>", ["unknown function 'exec'"]),
        ("<calculator>1/0</calculator>", ["division by zero"]),
        ("<calculator>9**9**9**9</calculator>", ["more than 1000 digits"]),
        ("<calculator>" + "9" * 100_000 + "</calculator>", ["too long"]),
        ("<calculator>16 - 3 = 13</calculator>", ["without '='"]),
        ("<calculator><calculator>2</calculator>", ["was not closed", None]),
        ("<calculator>1 +</calculator> and <calculator>2*3", ["could not parse", "was not closed"]),
    ],
)
def test_malformed_calls_get_error_observations(env: GSM8KToolEnv, reply: str, errors: list[str | None]) -> None:
    env.reset(options={"task_index": 0})
    obs, reward, terminated, truncated, info = env.step(reply)
    assert (reward, terminated, truncated) == (0.0, False, False)
    lines = obs.splitlines()
    assert len(lines) == len(errors)
    for line, error in zip(lines, errors):
        if error is None:
            assert RESULT_LINE.fullmatch(line)
        else:
            assert ERROR_LINE.fullmatch(line) and error in line, line
    assert info["tool_errors"] == sum(error is not None for error in errors)


def test_code_in_a_call_is_never_run(env: GSM8KToolEnv, tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    env.reset(options={"task_index": 0})
    for expression in (
        f"__import__('pathlib').Path('{marker}').touch()",
        f'open("{marker}", "w")',
        "(1).__class__.__base__.__subclasses__()",
    ):
        obs, reward, *_ = env.step(f"<calculator>{expression}</calculator>")
        assert ERROR_LINE.fullmatch(obs) and reward == 0.0
        env.reset(options={"task_index": 0})
    assert not marker.exists()


def test_running_out_of_turns_truncates() -> None:
    env = make(max_turns=3)
    env.reset(options={"task_index": 0})
    for _ in range(2):
        obs, reward, terminated, truncated, info = env.step("<calculator>16 - 3 - 4</calculator>")
        assert (obs, reward, terminated, truncated) == ("<result>9</result>", 0.0, False, False)
    obs, reward, terminated, truncated, info = env.step("<calculator>9 * 2</calculator>")
    assert (obs, reward, terminated, truncated) == ("", 0.0, False, True)
    assert info["stop_reason"] == "max_turns" and info["correct"] is False
    assert info["messages"] == [] and info["tool_calls_total"] == 3


def test_tool_call_count_restarts_with_the_episode(env: GSM8KToolEnv) -> None:
    env.reset(options={"task_index": 0})
    env.step("<calculator>1</calculator><calculator>2</calculator>")
    env.reset(options={"task_index": 0})
    *_, info = env.step("<calculator>3</calculator>")
    assert info["tool_calls_total"] == 1


def test_the_system_prompt_documents_the_format() -> None:
    for fragment in (
        "<calculator>48 / 2</calculator>",
        "<result>24</result>",
        "<error>",
        "\\boxed{N}",
        f"at most {MAX_CALLS_PER_REPLY} calls",
        "not run",
    ):
        assert fragment in DEFAULT_SYSTEM_PROMPT


def test_find_calculator_calls_stays_linear_on_tag_spam() -> None:
    found = find_calculator_calls("<calculator>" * 50_000 + "1</calculator>")
    assert len(found.calls) == MAX_CALLS_PER_REPLY and found.skipped == 50_000 - MAX_CALLS_PER_REPLY
    assert all(call.expression is None for call in found.calls)


@pytest.mark.full_data
def test_scripted_calculator_episode_on_every_test_problem(env: GSM8KToolEnv) -> None:
    """Every test problem: call the calculator on the gold solution's last `<<expr=result>>`
    (the gold number itself for the 18 problems without one), then answer `\\boxed{gold}`.
    All 1301 last annotations come back equal to their recorded result, and all 1319
    episodes score 1."""
    reproduced, unannotated, failures = 0, 0, []
    for index, row in enumerate(ROWS):
        gold = gold_number(row)
        annotations = ANNOTATION.findall(row["answer"])
        expression, expected = annotations[-1] if annotations else (gold, gold)
        unannotated += not annotations
        env.reset(options={"task_index": index})
        obs, reward, terminated, truncated, _ = env.step(f"Let me compute this.\n<calculator>{expression}</calculator>")
        shown = RESULT_LINE.fullmatch(obs)
        if shown and parse_number(shown.group(1)) == parse_number(expected.strip()):
            reproduced += bool(annotations)
        else:
            failures.append((index, expression, expected, obs))
        obs, reward, terminated, truncated, info = env.step(f"So the answer is \\boxed{{{gold}}}.")
        if (reward, terminated, truncated, info["correct"]) != (1.0, True, False, True):
            failures.append((index, "answer", gold, reward))
    assert failures == []
    assert (reproduced, unannotated) == (1301, 18)


def test_the_calculator_oracle_finishes_every_test_problem_in_two_turns() -> None:
    env = make(oracle_uses_calculator=True)
    failures = []
    for index, row in enumerate(ROWS):
        env.reset(options={"task_index": index})
        steps, total, done = 0, 0.0, False
        while not done:
            obs, reward, terminated, truncated, info = env.step(env.oracle_action())
            steps, total, done = steps + 1, total + reward, terminated or truncated
            if steps == 1 and not done and not RESULT_LINE.fullmatch(obs):
                failures.append((index, obs))
        expected_steps = 2 if ANNOTATION.search(row["answer"]) else 1
        if (total, steps, info["correct"]) != (1.0, expected_steps, True):
            failures.append((index, total, steps))
    assert failures == []


def test_the_calculator_oracle_answers_at_once_with_a_single_turn() -> None:
    env = make(oracle_uses_calculator=True, max_turns=1)
    env.reset(options={"task_index": 0})
    assert env.step(env.oracle_action())[1] == 1.0


def test_default_oracle_answers_in_one_reply(env: GSM8KToolEnv) -> None:
    env.reset(options={"task_index": 0})
    assert env.oracle_action() == worked_solution(ROWS[0]["answer"])  # GSM8K-v1's, in the prompt's format


def test_bad_oracle_flag() -> None:
    with pytest.raises(TypeError, match="oracle_uses_calculator must be True or False, got 'yes'"):
        make(oracle_uses_calculator="yes")
