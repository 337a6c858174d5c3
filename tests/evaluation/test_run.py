"""rlenvs.evaluate on real envs: sample data (GSM8K, MATH) and procedural ones."""

import json
import re
import threading
import time

import gymnasium as gym
import pytest

import rlenvs
from rlenvs.evaluation import PolicyError
from rlenvs.evaluation.policies import Reply


def test_every_task_of_a_split_runs_once_and_the_trajectories_say_so(tmp_path) -> None:
    path = tmp_path / "t.jsonl"
    result = rlenvs.evaluate("rlenvs/GSM8K-v1", "oracle", env_kwargs={"split": "test"}, trajectories=path)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["option"]["task_index"] for line in lines] == list(range(len(lines))) and len(lines) > 1
    assert len({line["task_id"] for line in lines}) == len(lines) == result.tasks
    assert result.success_rate == 1.0 and result.ci[1] == 1.0 and result.infra_failures == 0
    first = lines[0]
    assert [m["role"] for m in first["messages"]] == ["system", "user", "assistant"]
    assert first["rewards"] == [1.0] and first["stop_reason"] == "answered" and first["infos"][0]["correct"] is True
    assert set(first["seconds"]) == {"policy", "env", "total"}


def test_file_policy_rescores_a_run_from_its_trajectories(tmp_path) -> None:
    path = tmp_path / "t.jsonl"
    first = rlenvs.evaluate("rlenvs/Arithmetic-v1", "oracle", episodes=6, samples=2, trajectories=path)
    again = rlenvs.evaluate("rlenvs/Arithmetic-v1", f"file:{path}")
    assert [(t.task_id, t.sample, t.reward) for t in again.trajectories] == [
        (t.task_id, t.sample, t.reward) for t in first.trajectories
    ]
    assert again.success_rate == 1.0 and again.pass_at(1) == 1.0


def test_random_policy_is_the_reward_of_noise_and_pass_at_k_counts_samples() -> None:
    result = rlenvs.evaluate("rlenvs/Arithmetic-v1", "random", episodes=5, samples=3)
    assert len(result.trajectories) == 15 and result.tasks == 5 and result.success_rate == 0.0
    assert result.pass_at(3) == 0.0
    with pytest.raises(ValueError, match="use samples >= 4"):
        result.pass_at(4)


def test_a_callable_policy_is_called_every_turn_with_the_conversation_so_far() -> None:
    seen: list[int] = []

    def policy(messages: list[dict[str, str]]) -> str:
        seen.append(len(messages))
        return "I do not know"

    result = rlenvs.evaluate("rlenvs/GSM8K-v1", policy, episodes=1, env_kwargs={"split": "test", "max_turns": 3})
    assert seen == [2, 4, 6]  # system + user, then each reply and the env's feedback
    (episode,) = result.trajectories
    assert episode.stop_reason == "max_turns" and episode.turns == 3 and episode.success is False


def test_infrastructure_failures_are_counted_apart_from_wrong_answers(tmp_path) -> None:
    calls = iter(range(100))

    def flaky(messages: list[dict[str, str]]) -> str:
        if next(calls) % 2:
            raise PolicyError("http://server/v1/chat/completions failed 4 times")
        return "\\boxed{-1}"

    path = tmp_path / "t.jsonl"
    result = rlenvs.evaluate("rlenvs/GSM8K-v1", flaky, episodes=4, env_kwargs={"split": "test"}, trajectories=path)
    replayed = rlenvs.evaluate("rlenvs/GSM8K-v1", f"file:{path}", env_kwargs={"split": "test"})
    assert [t.success for t in replayed.trajectories] == [
        t.success for t in result.trajectories
    ]  # failures stay failures
    assert result.infra_failures == 2 and len(result.ran) == 2 and result.success_rate == 0.0
    assert result.failures() == {"PolicyError": 2} and result.stop_reasons()["policy_error"] == 2
    assert (
        "infrastructure failures (not counted as wrong, left out of the success rate): PolicyError 2" in result.table()
    )


@pytest.mark.full_data  # 12 MATH test problems of several subjects: the samples hold 10, all Algebra
def test_breakdowns_by_level_and_subject_where_tasks_carry_them() -> None:
    result = rlenvs.evaluate("rlenvs/MATH-v1", "oracle", episodes=12, env_kwargs={"split": "test"})
    levels, subjects = result.breakdown("level"), result.breakdown("subject")
    assert sum(n for n, _ in levels.values()) == len(result.trajectories) == sum(n for n, _ in subjects.values())
    assert len(subjects) > 1 and re.search(r"\| +subject \| episodes \| success rate \|", result.table())
    summary = result.summary()
    assert set(summary["breakdowns"]) >= {"level", "subject"} and summary["ci_method"] == "wilson"


def test_resume_keeps_finished_episodes_and_runs_the_rest(tmp_path) -> None:
    path = tmp_path / "t.jsonl"
    rlenvs.evaluate("rlenvs/Arithmetic-v1", "oracle", episodes=6, trajectories=path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:3]) + "\n" + lines[3][:20])  # cut mid-line, as an interrupted run leaves it
    result = rlenvs.evaluate("rlenvs/Arithmetic-v1", "oracle", episodes=6, trajectories=path, resume=True)
    assert result.resumed == 3 and len(result.trajectories) == 6
    untimed = lambda text: [{**json.loads(line), "seconds": None} for line in text]  # noqa: E731
    assert untimed(path.read_text().splitlines()) == untimed(lines)


def test_resume_after_a_cut_first_line_starts_a_clean_file(tmp_path) -> None:
    """Interrupted while the first episode was written: nothing done, the cut line dropped (it
    was appended to before, and the next --resume then failed on it)."""
    path = tmp_path / "t.jsonl"
    rlenvs.evaluate("rlenvs/Arithmetic-v1", "oracle", episodes=2, trajectories=path)
    path.write_text(path.read_text()[:20])
    result = rlenvs.evaluate("rlenvs/Arithmetic-v1", "oracle", episodes=2, trajectories=path, resume=True)
    assert result.resumed == 0 and len(path.read_text().splitlines()) == 2
    assert rlenvs.evaluate("rlenvs/Arithmetic-v1", "oracle", episodes=2, trajectories=path, resume=True).resumed == 2


class Batched:
    """A policy answering a whole round in one call, as a local model does: the oracle's reply,
    or none (the episode's budget spent) from the second turn on, each cut at "length"."""

    name = "batched"

    def __init__(self) -> None:
        self.batches: list[int] = []

    def reply(self, turn):
        raise AssertionError("a policy with replies() is asked a round at a time")

    def replies(self, turns):
        self.batches.append(len(turns))
        return [Reply(t.env.unwrapped.oracle_action(), "length") for t in turns]


def test_episodes_played_at_once_are_the_episodes_played_one_by_one(tmp_path) -> None:
    """Each episode keeps its own seed and env: the numbers do not depend on concurrency; the
    file holds every episode once, in the order they ended."""
    kwargs = {"level": 2, "max_turns": 2}
    one = rlenvs.evaluate("rlenvs/Arithmetic-Tool-v1", "random", episodes=7, samples=2, env_kwargs=kwargs)
    path = tmp_path / "t.jsonl"
    many = rlenvs.evaluate(
        "rlenvs/Arithmetic-Tool-v1",
        "random",
        episodes=7,
        samples=2,
        env_kwargs=kwargs,
        concurrency=4,
        trajectories=path,
    )
    timeless = lambda t: {**t.to_json(), "seconds": {}}  # noqa: E731
    assert [timeless(t) for t in many.trajectories] == [timeless(t) for t in one.trajectories]
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert sorted(json.dumps({**line, "seconds": {}}) for line in lines) == sorted(
        json.dumps(timeless(t)) for t in one.trajectories
    )
    batched = Batched()
    result = rlenvs.evaluate("rlenvs/Arithmetic-v1", batched, episodes=10, concurrency=4)
    assert batched.batches == [4, 4, 2] and result.success_rate == 1.0
    assert (
        result.finish_reasons() == {"length": 10}
        and "cut at the token cap (finish reason length): 10 of 10" in result.table()
    )
    with pytest.raises(ValueError, match="needs the env's id"):
        rlenvs.evaluate(gym.make("rlenvs/Arithmetic-v1"), "oracle", episodes=2, concurrency=2)


def test_a_server_policy_is_asked_from_several_threads_at_once() -> None:
    class Server:
        name, concurrent = "server", True

        def __init__(self) -> None:
            self.lock, self.in_flight, self.most = threading.Lock(), 0, 0

        def reply(self, turn):
            with self.lock:
                self.in_flight += 1
                self.most = max(self.most, self.in_flight)
            time.sleep(0.05)
            with self.lock:
                self.in_flight -= 1
            return "\\boxed{-1}"

    server = Server()
    result = rlenvs.evaluate("rlenvs/Arithmetic-v1", server, episodes=6, concurrency=3)
    assert server.most == 3 and len(result.trajectories) == 6 and result.success_rate == 0.0


def test_a_policy_ends_an_episode_by_replying_none_with_a_reason_and_max_turns_caps_replies() -> None:
    def budget(turn):
        return Reply(None, "max_episode_tokens") if turn.turn == 1 else "Let me think."

    class Budget:
        name = "budget"
        reply = staticmethod(budget)

    result = rlenvs.evaluate("rlenvs/GSM8K-v1", Budget(), episodes=2, env_kwargs={"split": "test", "max_turns": 3})
    assert [(t.stop_reason, t.turns, t.success) for t in result.trajectories] == [("max_episode_tokens", 1, False)] * 2
    capped = rlenvs.evaluate(
        "rlenvs/GSM8K-v1",
        lambda m: "I do not know",
        episodes=1,
        env_kwargs={"split": "test", "max_turns": 3},
        max_turns=2,
    )
    assert [(t.stop_reason, t.turns) for t in capped.trajectories] == [("max_turns", 2)]
