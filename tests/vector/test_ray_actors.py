"""`EnvPool(..., executor="ray")` on a real multi-node Ray cluster on this machine
(`ray.cluster_utils.Cluster`: a head that hosts nothing and three worker nodes), Ray 2.60
from PyPI: episodes across the nodes, placement by resources, sandboxed episodes, a step that
overruns, an env that raises, and a worker node removed in the middle of a batch.

Misbehaviour comes from tests.vector.test_pool's ScriptedArithmeticEnv (the workers import it:
the cluster's processes get this checkout on PYTHONPATH).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the Ray pool's tests need Ray: pip install 'rlenvs[ray]' (.ci/run does)")

from ray.cluster_utils import Cluster  # noqa: E402

import rlenvs  # noqa: E402, F401 - registers the ids
from rlenvs.vector import ENV_ERROR, ENV_LOST, ENV_TIMEOUT, EnvPool  # noqa: E402
from tests.vector.test_pool import ScriptedArithmeticEnv  # noqa: E402

pytestmark = pytest.mark.slow  # a cluster of four Ray nodes starts in about 10 s

REPO = Path(__file__).resolve().parents[2]
ARITHMETIC = "rlenvs/Arithmetic-v1"
HUMANEVAL_SAMPLE = REPO / "tests" / "data" / "samples" / "humaneval" / "HumanEval.jsonl.gz"
NODES = 3
CPUS_PER_NODE = 2


@pytest.fixture(scope="module")
def cluster():
    previous = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), previous]))
    cluster = Cluster(
        initialize_head=True,
        head_node_args={"num_cpus": 0, "include_dashboard": False},  # the head hosts no env
    )
    workers = [
        cluster.add_node(num_cpus=CPUS_PER_NODE, resources={"sandbox": 2} if index == 0 else {})
        for index in range(NODES)
    ]
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    try:
        yield cluster, workers
    finally:
        ray.shutdown()
        cluster.shutdown()
        if previous is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = previous


def test_a_thousand_episodes_across_three_nodes(cluster):
    with EnvPool(ARITHMETIC, 32, executor="ray") as pool:
        assert pool.max_workers == NODES * CPUS_PER_NODE  # one actor per CPU of the cluster
        assert len(set(pool.actor_nodes())) == NODES
        rewards = []
        for batch in range(32):
            firsts = pool.reset(seed=32 * batch)
            assert [r.index for r in firsts] == list(range(32))
            results = pool.step(dict(enumerate(pool.oracle_actions())))
            rewards += [r.reward for r in results]
        assert len(rewards) == 1024 and set(rewards) == {1.0}


def test_placement_by_resources_puts_sandboxed_envs_on_their_node(cluster):
    _, workers = cluster
    options = {"num_cpus": 1, "resources": {"sandbox": 1}}
    with EnvPool(ARITHMETIC, 4, executor="ray", max_workers=2, ray_actor_options=options) as pool:
        assert set(pool.actor_nodes()) == {workers[0].node_id}


@pytest.mark.sandbox
def test_a_hundred_sandboxed_episodes(cluster):
    """HumanEval-v2 (the sample of tests/data, MIT): each episode runs the oracle's code
    against the task's tests in the sandbox of the node its actor is on."""
    kwargs = {"data_files": str(HUMANEVAL_SAMPLE)}
    with EnvPool("rlenvs/HumanEval-v2", 20, make_kwargs=kwargs, executor="ray", step_timeout_s=120) as pool:
        rewards = []
        for batch in range(5):
            pool.reset(options=[{"task_index": 20 * batch + k} for k in range(20)])
            results = pool.step(dict(enumerate(pool.oracle_actions())))
            assert all(r.error is None for r in results), [r.error for r in results if r.error]
            rewards += [r.reward for r in results]
        assert len(rewards) == 100 and set(rewards) == {1.0}


def test_a_step_that_overruns_or_raises_ends_only_its_episode(cluster):
    # Three actors: env i on actor i % 3, so actor 0 hosts envs 0, 3 and 6.
    with EnvPool(ScriptedArithmeticEnv, 9, executor="ray", max_workers=3, step_timeout_s=2) as pool:
        pool.reset(seed=0)
        start = time.monotonic()
        results = pool.step({0: "#hang\n", 1: "#raise\n", 2: "\\boxed{1}", 3: "\\boxed{1}", 4: "\\boxed{1}"})
        assert time.monotonic() - start < 30
        assert results[0].stop_reason == ENV_TIMEOUT and results[1].stop_reason == ENV_ERROR
        assert "scripted failure in step" in results[1].error
        assert results[3].stop_reason == ENV_LOST  # queued behind env 0 on the actor that was killed
        assert results[2].error is None and results[4].error is None
        # Env 6 was mid-episode on that actor too: its next step reports the loss.
        assert pool.step({6: "\\boxed{1}"})[0].stop_reason == ENV_LOST
        assert pool.step({7: "\\boxed{1}"})[0].error is None  # another actor's env goes on
        assert len(pool.reset(seed=1)) == 9  # the replacement serves the next batch whole
        assert all(r.error is None for r in pool.step(dict.fromkeys(range(9), "\\boxed{1}")))


def test_a_reset_whose_actor_dies_runs_again_on_its_replacement(cluster, tmp_path):
    with EnvPool(ScriptedArithmeticEnv, 4, executor="ray", max_workers=2) as pool:
        before = pool.actor_nodes()
        crash = str(tmp_path / "crashed-once")  # the first reset ends its actor's process; the next one succeeds
        firsts = pool.reset([0, 1], options=[{"crash": crash}, None])
        assert [r.index for r in firsts] == [0, 1] and os.path.exists(crash)
        assert all(r.error is None for r in pool.step({0: "\\boxed{1}", 1: "\\boxed{1}"}))
        with pytest.raises(ConnectionError, match="reset failed for env") as raised:
            pool.reset([2], options=[{"crash": "always"}])
        assert "died during its reset" in str(raised.value)
        assert len(pool.actor_nodes()) == len(before)


def test_a_node_removed_mid_batch_loses_only_its_episodes(cluster):
    ray_cluster, workers = cluster
    victim = workers[-1]
    with EnvPool(ScriptedArithmeticEnv, 12, executor="ray", step_timeout_s=60) as pool:
        nodes = pool.actor_nodes()
        on_victim = {index for index in range(12) if nodes[index % pool.max_workers] == victim.node_id}
        assert on_victim and len(on_victim) < 12
        pool.reset(seed=0)
        outcome: dict = {}

        def batch() -> None:
            outcome["results"] = pool.step(dict.fromkeys(range(12), "#sleep 3\n\\boxed{1}"))
            outcome["done"] = time.monotonic()

        stepping = threading.Thread(target=batch)
        stepping.start()
        time.sleep(1.0)  # every step is in its sleep now
        removed = time.monotonic()
        ray_cluster.remove_node(victim, allow_graceful=False)
        stepping.join(timeout=60)
        assert not stepping.is_alive(), "the batch did not complete"
        results = outcome["results"]
        assert {r.index for r in results if r.stop_reason == ENV_LOST} == on_victim
        assert all(r.error is None for r in results if r.index not in on_victim)
        assert outcome["done"] - removed < 30
        # The next batch is whole: the lost envs' actors were replaced on the remaining nodes.
        assert len(pool.reset(seed=1)) == 12
        assert victim.node_id not in pool.actor_nodes()
        assert all(r.error is None for r in pool.step(dict.fromkeys(range(12), "\\boxed{1}")))


def test_grpo_rollouts_with_envs_in_ray_actors(cluster, tmp_path):
    """make_rollout_func unchanged but for its pool's executor: two GRPO steps of TRL's real
    trainer (the HF backend, a tiny model) whose episodes' envs live in the cluster's actors."""
    pytest.importorskip("trl", reason="needs the train extra: pip install -e '.[train]'")
    from rlenvs_train.tiny import build_tiny_model
    from tests.rlenvs_train.test_grpo import check_run, reset_accelerate, train

    tiny = build_tiny_model(tmp_path / "tiny")
    _, rollout, record = train(tiny, tmp_path / "run", "hf", pool_kwargs={"executor": "ray", "max_workers": 4})
    try:
        check_run(record)
        assert rollout._pool.executor == "ray" and len(set(rollout._pool.actor_nodes())) > 1
    finally:
        rollout.close()
        reset_accelerate()
