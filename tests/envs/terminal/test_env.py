"""rlenvs/Terminal-v2 end to end: real bubblewrap sessions, the real families, the host-side
verifier. (tests/envs/terminal/test_families_files.py and test_families_text.py check that each family's
typical careless work fails, with the host's bash; the contract suite covers the gymnasium
side.)"""

from __future__ import annotations

import copy
import json
import os
import pickle
import threading

import gymnasium as gym
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import rlenvs  # noqa: F401 - registers the ids
from rlenvs.envs.terminal.env import TerminalEnv, cut_middle, parse_action
from rlenvs.envs.terminal.families import FAMILIES
from rlenvs.envs.terminal.tasks import Entry, family_task, task_from_row

SEEDS = range(20)
ROW = {
    "instruction": "Write the number of lines of data.txt into count.txt, then reply `submit`.",
    "files": [{"path": "data.txt", "content": "a\nb\nc\n"}],
    "solution": ["wc -l < data.txt > count.txt"],
    "expect": [{"kind": "file_text", "path": "count.txt", "text": "3"}],
}
QUESTION = {
    "instruction": "How many lines does data.txt have? Reply `submit <number>`.",
    "files": [{"path": "data.txt", "content": "a\nb\nc\n"}],
    "expect": [{"kind": "answer", "answer": "3", "numeric": True}],
    "answer": "3",
}


@pytest.fixture(scope="module")
def env():
    made = gym.make("rlenvs/Terminal-v2", max_turns=6, timeout_s=2.0).unwrapped
    yield made
    made.close()


def play_oracle(env: TerminalEnv, options: dict) -> tuple[float, dict, int]:
    env.reset(options=options)
    for turn in range(1, env.max_turns + 1):
        _, reward, terminated, truncated, info = env.step(env.oracle_action())
        if terminated or truncated:
            return reward, info, turn
    raise AssertionError("the episode did not end")


@pytest.mark.sandbox
@pytest.mark.parametrize(
    ("family", "level"), [(name, level) for name, family in FAMILIES.items() for level in family.levels]
)
def test_every_family_and_level_the_reference_scores_one_and_submitting_at_once_zero(family, level):
    env = TerminalEnv(families=family, level=level, max_turns=12)
    try:
        for index in SEEDS:
            reward, info, _ = play_oracle(env, {"task_index": index})
            assert reward == 1.0, f"{family} L{level} #{index}: {info.get('failed_checks')}"
            assert info["stop_reason"] == "submitted" and info["correct"] is True
            env.reset(options={"task_index": index})
            _, reward, terminated, _, info = env.step("submit")
            assert (reward, terminated) == (0.0, True), f"{family} L{level} #{index} passes untouched"
    finally:
        env.close()


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_generation_is_deterministic_varies_with_the_seed_and_stays_small(family):
    for level in FAMILIES[family].levels:
        tasks = [family_task(FAMILIES[family], level, index) for index in SEEDS]
        assert tasks == [family_task(FAMILIES[family], level, index) for index in SEEDS]
        assert len({(t.prompt, t.files, t.expect) for t in tasks}) == len(tasks)
        assert max(sum(len(entry.data) for entry in t.files) for t in tasks) < 200_000
    with pytest.raises(ValueError, match="has no level 9"):
        family_task(FAMILIES[family], 9, 0)


def test_at_least_ten_families_with_two_levels_each():
    assert len(FAMILIES) >= 10
    assert all(len(family.levels) >= 2 for family in FAMILIES.values())


@pytest.mark.sandbox
def test_the_families_are_interleaved_and_ids_find_their_task(env):
    names = [env.reset(options={"task_index": i})[1]["task_id"].split("/")[1] for i in range(len(FAMILIES))]
    assert sorted(names) == sorted(FAMILIES)
    _, info = env.reset(options={"task_index": 5})
    prompt, again = env.reset(options={"task_id": info["task_id"]})
    assert again["task_id"] == info["task_id"] and prompt == env.task.prompt


@pytest.mark.sandbox
def test_a_users_own_task_row(env):
    reward, info, turns = play_oracle(env, {"task": ROW})
    assert (reward, turns) == (1.0, 2)
    obs, info = env.reset(options={"task": ROW})
    assert obs == ROW["instruction"] and info["messages"][0]["role"] == "system"
    obs, reward, *_ = env.step("```bash\ncat data.txt\n```")
    assert (obs, reward) == ("a\nb\nc\n\n[exit code 0]", 0.0)


@pytest.mark.sandbox
def test_a_family_task_round_trips_through_its_json_row(env):
    for index in range(len(FAMILIES) * 2):
        task = env.tasks.get(index)
        row = json.loads(task.ground_truth())
        assert task_from_row(row, row["id"]) == task
    binary = next(e for i in range(200) for e in env.tasks.get(i).files if isinstance(e.content, bytes))
    assert Entry.from_dict(json.loads(json.dumps(binary.to_dict()))) == binary


@pytest.mark.sandbox
def test_a_question_task_takes_the_answer_from_submit(env):
    env.reset(options={"task": QUESTION})
    _, reward, terminated, _, info = env.step("submit 4")
    assert (reward, terminated, info["submitted_answer"]) == (0.0, True, "4")
    assert info["failed_checks"] == ["the submitted answer is wrong"]
    env.reset(options={"task": QUESTION})
    assert env.step("I counted them.\n```bash\nsubmit 3\n```")[1] == 1.0


@pytest.mark.sandbox
def test_the_workspace_is_judged_at_the_last_turn_without_a_submit(env):
    env.reset(options={"task": ROW})
    for _ in range(env.max_turns - 1):
        assert env.step("echo working")[2:4] == (False, False)
    _, reward, terminated, truncated, info = env.step("wc -l < data.txt > count.txt")
    assert (reward, terminated, truncated, info["stop_reason"]) == (1.0, False, True, "max_turns")


@pytest.mark.sandbox
def test_timeouts_output_floods_and_empty_replies_get_an_observation_and_the_episode_goes_on(env):
    env.reset(options={"task": ROW})
    obs, *_ = env.step("```bash\ncd /tmp && sleep 30\n```")
    assert obs == "[the command timed out after 2 s and was killed; the shell is as it was before it]"
    obs, *_ = env.step("yes 0123456789")
    assert "characters cut" in obs and obs.endswith("bytes and was stopped]") and len(obs) < 4200
    assert env.step("")[0].startswith("[no command")
    assert env.step("pwd; false")[0] == "/workspace\n\n[exit code 1]"


@pytest.mark.sandbox
def test_the_verifier_ignores_fake_tools_on_the_agents_path(env):
    env.reset(options={"task": ROW})
    fake = "mkdir -p bin; for t in cat ls python3 wc head; do printf '#!/bin/sh\\necho 3\\n' > bin/$t; chmod +x bin/$t; done"
    env.step(fake)
    env.step('export PATH="$PWD/bin:$PATH"; echo 2 > count.txt; cat count.txt')
    _, reward, *_, info = env.step("submit")
    assert reward == 0.0 and info["failed_checks"] == ["count.txt does not hold the expected text"]


@pytest.mark.sandbox
def test_the_verifier_does_not_follow_a_symlink_to_a_host_file(env):
    host_file = "/etc/hostname" if os.path.isfile("/etc/hostname") else "/etc/passwd"
    with open(host_file) as handle:
        host_text = handle.read()
    row = {"instruction": "copy", "expect": [{"kind": "file_text", "path": "copy.txt", "text": host_text}]}
    env.reset(options={"task": row})
    env.step(f"ln -s {host_file} copy.txt")
    _, reward, *_, info = env.step("submit")
    assert reward == 0.0 and "is a symlink" in info["failed_checks"][0]


@pytest.mark.sandbox
def test_two_concurrent_episodes_do_not_see_each_others_workspace():
    envs = [TerminalEnv(max_turns=30) for _ in range(2)]
    results = {}
    barrier = threading.Barrier(2)

    def play(number: int) -> None:
        env = envs[number]
        env.reset(options={"task": ROW})
        barrier.wait()
        for _step in range(10):
            env.step(f"echo {number} >> trace-{number}.txt; ls")
        results[number] = env.step("ls")[0]

    threads = [threading.Thread(target=play, args=(n,)) for n in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for env in envs:
        env.close()
    assert results == {0: "data.txt\ntrace-0.txt\n\n[exit code 0]", 1: "data.txt\ntrace-1.txt\n\n[exit code 0]"}


@pytest.mark.sandbox
def test_a_copy_made_mid_episode_carries_the_workspace_and_the_shell_on_its_own_sandbox(env):
    env.reset(options={"task": ROW})
    env.step("mkdir -p out && cd out && echo 3 > ../count.txt && export STEP=two")
    clone = copy.deepcopy(env)
    revived = pickle.loads(pickle.dumps(env))
    env.step("rm ../count.txt")  # the original goes on alone
    try:
        for other in (clone, revived):
            assert (
                other.step("pwd; echo $STEP; ls ..")[0]
                == "/workspace/out\ntwo\ncount.txt\ndata.txt\nout\n\n[exit code 0]"
            )
            assert other.step("submit")[1] == 1.0
            assert other.session is not env.session
    finally:
        clone.close()
        revived.close()
    assert env.step("submit")[1] == 0.0


@pytest.mark.sandbox
def test_a_copy_carries_big_files_symlinks_odd_names_and_wide_trees(env):
    """What the host reader's caps for expectations would drop (files over 1 MiB, more than
    20,000 entries) and what it reports but cannot write (symlinks, FIFOs, in folders the
    agent closed too) all reach the copy."""
    env.reset(options={"task": ROW})
    env.step(
        "head -c 2097152 /dev/urandom > big.bin && sha256sum big.bin > big.sum && ln -s big.bin latest && "
        "mkdir -p ro many shut && ln -s ../data.txt ro/data && chmod 555 ro && ln -s /nowhere dangling && "
        "ln -s loop shut/loop && mkfifo -m 640 shut/pipe && chmod 000 shut && "
        "touch \"$(printf 'odd\\nname\\xff')\" && (cd many && seq 1 25000 | xargs touch)"
    )
    clone = copy.deepcopy(env)
    try:
        check = (
            "sha256sum -c --quiet big.sum && readlink latest ro/data dangling && stat -c %a ro shut && "
            "chmod 700 shut && readlink shut/loop && stat -c '%F %a' shut/pipe && "
            "ls many | wc -l && ls | grep -c odd"
        )
        observation, *_ = clone.step(check)
        assert observation == "big.bin\n../data.txt\n/nowhere\n555\n0\nloop\nfifo 640\n25000\n1\n\n[exit code 0]"
        assert clone.step("ls /tmp")[0] == "[exit code 0]"  # the restore leaves nothing in /tmp
    finally:
        clone.close()


@pytest.mark.sandbox
def test_a_copy_keeps_hard_links_one_file(env):
    """Two (or three) names of one file are one file in the copy too: a write through one
    name shows through the others, and the names keep their one inode, mode and mtime, also
    in a folder the agent closed."""
    env.reset(options={"task": ROW})
    env.step(
        "mkdir -p logs shut && echo started > logs/app.log && chmod 640 logs/app.log && touch -d @1000000 logs/app.log "
        "&& ln logs/app.log current.log && ln logs/app.log shut/third.log && chmod 555 shut && cp data.txt copy.txt"
    )
    clone = copy.deepcopy(env)
    try:
        check = (
            "stat -c '%i %h %a %Y' logs/app.log current.log shut/third.log copy.txt | cut -d' ' -f2- && "
            "[ logs/app.log -ef current.log ] && [ current.log -ef shut/third.log ] && echo more >> current.log && "
            "cat shut/third.log && stat -c %a shut"
        )
        observation, *_ = clone.step(check)
        assert observation.splitlines()[:3] == ["3 640 1000000"] * 3 and observation.splitlines()[3].startswith("1 ")
        assert observation.splitlines()[4:] == ["started", "more", "555", "", "[exit code 0]"], observation
    finally:
        clone.close()


@pytest.mark.sandbox
def test_a_copy_of_a_workspace_that_cannot_be_copied_whole_ends_its_episode_with_the_reason(env):
    """Sparse files hold more bytes than the copy's workspace could: the copy is made, and its
    next step ends the episode (reward 0) saying why, instead of crashing a vector worker."""
    env.reset(options={"task": ROW})
    env.step("for i in $(seq 8); do truncate -s 15M sparse$i; done")
    clone = copy.deepcopy(env)
    try:
        _, reward, terminated, _, info = clone.step("ls")
        assert (reward, terminated, info["command_status"]) == (0.0, True, "sandbox_error")
        assert "could not be copied" in info["detail"] and "sparse files" in info["detail"]
        clone.reset(options={"task": ROW})  # a new episode of the copy is fine
        assert clone.step("cat data.txt")[0] == "a\nb\nc\n\n[exit code 0]"
    finally:
        clone.close()
    assert env.step("ls sparse8")[0] == "sparse8\n\n[exit code 0]"  # the original goes on


@pytest.mark.sandbox
def test_a_failing_setup_script_names_the_task(env):
    row = {**ROW, "setup_script": "exit 7"}
    with pytest.raises(RuntimeError, match="setup script failed"):
        env.reset(options={"task": row})


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"families": "no-such"}, "unknown Terminal-v2 task families"),
        ({"families": []}, "unknown Terminal-v2 task families"),
        ({"level": 9}, "no level 9"),
        ({"level": "1"}, "level must be an int"),
        ({"max_output_chars": 10}, "max_output_chars"),
    ],
)
def test_bad_arguments_name_the_problem(kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        TerminalEnv(**kwargs)


def test_parse_action():
    assert parse_action("Let me look.\n```bash\nls -la\n```").command == "ls -la"
    assert parse_action("```sh\necho 1\n```\nthen\n```bash\necho 2\n```").command == "echo 2"
    assert parse_action("$ ls data").command == "ls data"
    assert parse_action("  submit  ").submitted and parse_action("submit").answer is None
    assert parse_action("submit  'B2' ").answer == "'B2'"
    assert not parse_action("submitted it").submitted
    for spelling in ("SUBMIT", "Submit", "submit:", "`submit`", "```bash\nSUBMIT\n```"):
        assert parse_action(spelling).submitted and parse_action(spelling).answer is None, spelling
    for spelling in ("SUBMIT 42", "submit: 42", "Submit:42", "submit :42", "`submit 42`"):
        assert parse_action(spelling).answer == "42", spelling
    assert not parse_action("./submit.sh").submitted and not parse_action("`date`").submitted
    assert parse_action("grep submit notes.txt").command == "grep submit notes.txt"


def test_parse_action_submit_lines_closing_a_reply_comments_and_fence_tags():
    prose = parse_action("The column sums to 12347.79.\n\nsubmit 12347.79")
    assert (prose.command, prose.submitted, prose.answer) == ("", True, "12347.79")  # the prose is not run
    after = parse_action("Check first:\n```bash\nls -la\n```\nThen:\nsubmit 42")
    assert (after.command, after.submitted, after.answer) == ("ls -la", True, "42")  # the block runs, then submits
    assert parse_action("```bash\nls\n```\n`submit`").submitted and parse_action("```sh\nls\n```\nSubmit").submitted
    assert parse_action("```Bash\nsubmit 7\n```").answer == "7" and parse_action("```SH\nls\n```").command == "ls"
    assert parse_action("submit 12347.79  # the exact total").answer == "12347.79"
    assert parse_action("submit C# #3 x#y").answer == "C# #3 x#y" and parse_action("submit 5 #").answer == "5"
    # not a submit: a sentence closing the reply, a submit inside a block of several commands (run as it is)
    for reply in ("```bash\nls\n```\nSubmit it when ready.", "```bash\necho 1 > a\nsubmit\n```"):
        assert not parse_action(reply).submitted, reply
    assert parse_action("```bash\necho 1 > a\nsubmit\n```").command == "echo 1 > a\nsubmit"
    bare = parse_action("ls\nsubmit 1")  # a bare reply's last line: the lines before are prose, not run
    assert (bare.command, bare.submitted, bare.answer) == ("", True, "1")


def test_cut_middle_keeps_both_ends():
    text = "".join(str(i % 10) for i in range(1000))
    cut = cut_middle(text, 200)
    assert cut.startswith(text[:100]) and cut.endswith(text[-100:]) and "[... 800 characters cut ...]" in cut
    assert cut_middle("short", 200) == "short"


ACTIONS = st.one_of(
    st.text(max_size=300),
    st.sampled_from(
        [
            "ls -la",
            "cd ..",
            "cd /",
            "rm -rf ./*",
            "submit",
            "submit 42",
            "exit 1",
            "kill -9 -1",
            "cat /dev/urandom | head -c 3000",
            "```bash\nfind / -maxdepth 2 | head\n```",
            "ulimit -n 3",
            "chmod 000 .",
            "mkfifo p; ln -s p q",
            "echo $'\\xff\\xfe' > bad.txt",
            ":(){ :|:& };:",
        ]
    ),
)


@pytest.mark.sandbox
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(actions=st.lists(ACTIONS, min_size=1, max_size=6), index=st.integers(0, 200))
def test_a_random_agent_never_crashes_the_env(env, actions, index):
    env.reset(options={"task_index": index})
    for action in actions:
        obs, reward, terminated, truncated, info = env.step(action)
        assert isinstance(obs, str) and 0.0 <= reward <= 1.0 and not (terminated and truncated)
        if terminated or truncated:
            assert info["stop_reason"] in ("submitted", "max_turns")
            break


def test_unsafe_mode_runs_the_same_tasks_without_bubblewrap_and_warns():
    env = TerminalEnv(unsafe_sandbox=True, max_turns=12)
    try:
        with pytest.warns(RuntimeWarning, match="UNSAFE"):  # when its sandbox-less session starts
            env.reset()
        for index in range(len(FAMILIES)):
            assert play_oracle(env, {"task_index": index})[0] == 1.0
        assert env.session.workspace_path.startswith("/tmp/rlenvs-unsafe-")
    finally:
        env.close()
