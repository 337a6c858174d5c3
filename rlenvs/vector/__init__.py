"""Step many text envs at once: `EnvPool`.

An LLM rollout engine holds N episodes (GRPO: the same task N times), resets them, then
steps only the ones still going with the model's replies until every one has ended. The
pool runs those calls concurrently and hands results back in submission order:

    from rlenvs.vector import EnvPool

    with EnvPool("rlenvs/HumanEval-v2", 8, step_timeout_s=60) as pool:
        firsts = pool.reset(range(8), seeds=[0] * 8, options={"task_index": 3})
        results = pool.step({r.index: generate(r.info["messages"]) for r in firsts})
        # results[k].stop_reason: the env's own, or env_error / env_timeout / env_lost

Threads (`executor="thread"`, the default) suit steps that wait (the code sandbox);
processes (`executor="process"`) suit CPU-bound verifiers. One env that raises, hangs or
crashes its worker ends only its own episode; the batch completes. No torch here.

For gymnasium's own vector API, `gym.make_vec(id, n, vectorization_mode="async")` also
works with rlenvs envs (with or without shared memory: `UnicodeText` brings its own layout
for it), but it steps every env in lock step and has no per-step timeout.
"""

from rlenvs.vector.pool import EnvPool
from rlenvs.vector.results import ENV_ERROR, ENV_FAILURES, ENV_LOST, ENV_TIMEOUT, ResetResult, StepResult

__all__ = ["ENV_ERROR", "ENV_FAILURES", "ENV_LOST", "ENV_TIMEOUT", "EnvPool", "ResetResult", "StepResult"]
