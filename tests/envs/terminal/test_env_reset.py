"""Terminal-v2's reset after an episode that broke its sandbox: the env starts the next
episode on a fresh sandbox instead of raising into the batch (issue 38). Real bubblewrap."""

from __future__ import annotations

import os
import signal

import gymnasium as gym
import pytest

import rlenvs  # noqa: F401 - registers the ids


@pytest.mark.sandbox
def test_reset_after_an_episode_that_hung_the_sandbox_starts_the_next_episode_on_a_fresh_one():
    env = gym.make("rlenvs/Terminal-v2", max_turns=3, timeout_s=0.5).unwrapped
    try:
        env.reset(seed=0)
        broken = env.session._worker
        os.kill(broken.child_pid, signal.SIGSTOP)  # the zygote: the next wipe is never answered
        observation, _ = env.reset(seed=1)
        assert observation and not broken.alive
        _, _, terminated, truncated, _ = env.step("```bash\necho alive > note.txt && cat note.txt\n```")
        assert not (terminated or truncated)
        assert "alive" in env.session.run("cat note.txt").stdout
    finally:
        env.close()
