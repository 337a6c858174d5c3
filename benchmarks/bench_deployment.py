"""Deployment shapes: what a served env (`rlenvs serve`) costs per step against the same env
in-process, and against the same env inside OpenEnv's own server, in one run.

- Math env, per step: Arithmetic-v1 with a turn budget no episode reaches, stepped with a
  reply that has no answer (each step is a format reminder, so every call is a step of one
  long episode). In rounds, interleaved: `env.step` in-process; `RemoteEnv.step` against
  `rlenvs serve` in another process; OpenEnv's `GenericEnvClient` against `rlenvs serve`;
  the same client against OpenEnv's own server hosting the same env
  (benchmarks/openenv_peer.py). p50 µs per step, and the overhead over in-process.
- Sandboxed env, per episode: HumanEval-v2 (../shared/data), reset and the oracle's reply,
  whose test run is a sandbox start: in-process and through `RemoteEnv`; the overhead as a
  fraction of the in-process episode.
- Sessions held by one core: `rlenvs serve` pinned to one CPU (the client on the other),
  `SESSIONS` sessions opened at once through `EnvPool(url, n)`, then each stepped once per
  batch: the server's memory per session, and steps per second per batch.
- Pool shapes, per step of one env: `EnvPool` on threads, on a server (`EnvPool(url, 1)`)
  and on Ray (one actor on a simulated cluster), against `env.step` itself.
- Ray actors on a simulated cluster (`ray.cluster_utils.Cluster`: a head that hosts nothing,
  four one-CPU worker nodes): steps per second of 64 envs on 1, 2 and 4 actors, for a free
  step and for a step that waits 10 ms (as a sandboxed step waits on its sandbox).
- Node death: a pool whose actors all sit on one node, mid-step (each step waits 30 s) when
  that node is removed: the time until every episode is reported `env_lost`.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import DATA_DIR_VARIABLE, DEFAULT_DATA_DIR, REPO_ROOT, version
from benchmarks.servers import rlenvs_serve, rss_kib, server
from rlenvs.envs.math.arithmetic import ArithmeticEnv

PACKAGES = ("openenv", "fastapi", "uvicorn", "websockets", "ray")
ARITHMETIC = "rlenvs/Arithmetic-v1"
LONG = 1_000_000
"""A turn budget no benchmark episode reaches."""
NO_ANSWER = "I am not sure yet."
STEPS = 400
ROUNDS = 5
EPISODES = 30
SESSIONS = (64, 256, 512, 1024)
BATCHES = 5
POOL_STEPS = 300
RAY_NODES = 4
RAY_ENVS = 64
RAY_ACTORS = (1, 2, 4)
WAIT_S = 0.01


def _timed_steps(step: Any, count: int) -> list[float]:
    times = []
    for _ in range(count):
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return times


def _math_steps() -> list[dict[str, Any]]:
    import gymnasium as gym
    from openenv.core.generic_client import GenericEnvClient

    from rlenvs.remote import RemoteEnv

    serve = rlenvs_serve(ARITHMETIC, "--env-arg", f"max_turns={LONG}")
    peer = [sys.executable, "-m", "benchmarks.openenv_peer", ARITHMETIC, "{port}", str(LONG)]
    with server(serve) as (ours, _), server(peer) as (theirs, _):
        local = gym.make(ARITHMETIC, max_turns=LONG)
        remote = RemoteEnv(ours)
        openenv_ours = GenericEnvClient(base_url=ours).sync()
        openenv_theirs = GenericEnvClient(base_url=theirs).sync()
        shapes = {
            "in-process env.step": (local.reset, lambda: local.step(NO_ANSWER)),
            "RemoteEnv.step, rlenvs serve": (remote.reset, lambda: remote.step(NO_ANSWER)),
            "OpenEnv GenericEnvClient.step, rlenvs serve": (
                openenv_ours.reset,
                lambda: openenv_ours.step({"message": NO_ANSWER}),
            ),
            "OpenEnv GenericEnvClient.step, OpenEnv's server (same env)": (
                openenv_theirs.reset,
                lambda: openenv_theirs.step({"message": NO_ANSWER}),
            ),
        }
        times: dict[str, list[float]] = {name: [] for name in shapes}
        with openenv_ours, openenv_theirs:
            for reset, _ in shapes.values():
                reset(seed=0)
            for _ in range(ROUNDS):
                for name, (_, step) in shapes.items():
                    times[name] += _timed_steps(step, STEPS)
        remote.close()
    base = statistics.median(times["in-process env.step"])
    rows = []
    for name, values in times.items():
        p50 = statistics.median(values)
        rows.append(
            {
                "measure": f"Arithmetic-v1, one step: {name}",
                "p50 µs": round(p50 * 1e6, 1),
                "p99 µs": round(sorted(values)[int(0.99 * (len(values) - 1))] * 1e6, 1),
                "overhead µs": round((p50 - base) * 1e6, 1) if name != "in-process env.step" else "",
            }
        )
    rows[-1]["vs rlenvs serve (same client)"] = round(
        statistics.median(times[list(times)[3]]) / statistics.median(times[list(times)[2]]), 2
    )
    return rows


def _sandboxed_episodes() -> list[dict[str, Any]]:
    import gymnasium as gym

    from rlenvs.remote import RemoteEnv

    data = Path(os.environ.get(DATA_DIR_VARIABLE) or DEFAULT_DATA_DIR)
    kwargs = {"data_files": str(data / "humaneval" / "HumanEval.jsonl.gz")}
    serve = rlenvs_serve("rlenvs/HumanEval-v2", "--env-arg", f"data_files={kwargs['data_files']}", "--oracle")
    with server(serve) as (url, _):
        local, remote = gym.make("rlenvs/HumanEval-v2", **kwargs), RemoteEnv(url)
        times: dict[str, list[float]] = {"in-process": [], "RemoteEnv, rlenvs serve": []}
        for episode in range(EPISODES):
            for name, env in (("in-process", local), ("RemoteEnv, rlenvs serve", remote)):
                start = time.perf_counter()
                env.reset(seed=episode)
                reply = env.unwrapped.oracle_action() if env is local else remote.oracle_action()
                _, reward, *_ = env.step(reply)
                times[name].append(time.perf_counter() - start)
                assert reward == 1.0, (name, episode, reward)
        local.close()
        remote.close()
    base = statistics.median(times["in-process"])
    served = statistics.median(times["RemoteEnv, rlenvs serve"])
    return [
        {
            "measure": f"HumanEval-v2, one episode (reset, oracle reply, sandboxed test run): {name}",
            "p50 ms": round(statistics.median(values) * 1e3, 2),
            "overhead µs": round((served - base) * 1e6, 1) if name != "in-process" else "",
            "overhead share of the episode": round((served - base) / base, 4) if name != "in-process" else "",
        }
        for name, values in times.items()
    ]


def _sessions_per_core() -> list[dict[str, Any]]:
    from rlenvs.vector import EnvPool

    rows = []
    for sessions in SESSIONS:
        serve = rlenvs_serve(ARITHMETIC, "--env-arg", f"max_turns={LONG}", "--max-sessions", str(sessions))
        with server(serve, cpu=0) as (url, pid):
            idle = rss_kib(pid)
            os.sched_setaffinity(0, {1})
            try:
                start = time.perf_counter()
                lost: set[int] = set()
                reasons: dict[str, int] = {}
                with EnvPool(url, sessions) as pool:
                    pool.reset(seed=0)
                    opened = time.perf_counter() - start
                    held = rss_kib(pid)
                    batch_times, failed = [], 0
                    for _ in range(BATCHES):
                        live = [index for index in range(sessions) if index not in lost]
                        tic = time.perf_counter()
                        results = pool.step(dict.fromkeys(live, NO_ANSWER))
                        batch_times.append(time.perf_counter() - tic)
                        for result in results:
                            if result.error is not None:
                                failed += 1
                                lost.add(result.index)
                                reasons[result.error.split(" (")[0][:80]] = (
                                    reasons.get(result.error.split(" (")[0][:80], 0) + 1
                                )
            finally:
                os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
        batch = statistics.median(batch_times)
        rows.append(
            {
                "measure": f"{sessions} sessions held by rlenvs serve on one core (Arithmetic-v1)",
                "open and reset all s": round(opened, 2),
                "server MiB per session": round((held - idle) / 1024 / sessions, 3),
                "batch of one step each, p50 ms": round(batch * 1e3, 1),
                "steps/s": round((sessions - len(lost)) / batch),
                "steps failed": failed,
            }
        )
        if reasons:
            rows[-1]["why"] = "; ".join(f"{count}x {why}" for why, count in reasons.items())
    return rows


class WaitingArithmeticEnv(ArithmeticEnv):
    """Arithmetic-v1 whose step first waits `wait_s` (a step that waits on its sandbox), or,
    for a reply starting "#wait S", S seconds."""

    def __init__(self, wait_s: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.wait_s = wait_s

    def step(self, action: str) -> Any:
        if action.startswith("#wait "):
            head, _, action = action.partition("\n")
            time.sleep(float(head.split()[1]))
        elif self.wait_s:
            time.sleep(self.wait_s)
        return super().step(action)


def _pool_steps(pool: Any, count: int) -> float:
    """p50 seconds of `pool.step` of env 0, one long episode."""
    pool.reset([0], seeds=[0])
    return statistics.median(_timed_steps(lambda: pool.step({0: NO_ANSWER}), count))


def _pool_shapes() -> list[dict[str, Any]]:
    import gymnasium as gym

    from rlenvs.vector import EnvPool

    local = gym.make(ARITHMETIC, max_turns=LONG)
    local.reset(seed=0)
    base = statistics.median(_timed_steps(lambda: local.step(NO_ANSWER), POOL_STEPS))
    serve = rlenvs_serve(ARITHMETIC, "--env-arg", f"max_turns={LONG}")
    kwargs = {"max_turns": LONG}
    with (
        server(serve) as (url, _),
        EnvPool(ARITHMETIC, 1, make_kwargs=kwargs) as threads,
        EnvPool(url, 1) as served,
        EnvPool(ARITHMETIC, 1, make_kwargs=kwargs, executor="ray") as actors,
    ):
        shapes = {
            "threads (in-process)": threads,
            "a server (EnvPool(url, 1))": served,
            "Ray (one actor)": actors,
        }
        times = {name: [] for name in shapes}
        for _ in range(ROUNDS):
            for name, pool in shapes.items():
                times[name].append(_pool_steps(pool, POOL_STEPS // ROUNDS))
    rows = []
    for name, values in times.items():
        p50 = statistics.median(values)
        rows.append(
            {
                "measure": f"Arithmetic-v1, EnvPool.step of one env on {name}",
                "p50 µs": round(p50 * 1e6, 1),
                "overhead µs": round((p50 - base) * 1e6, 1),
            }
        )
    return rows


def _ray_cluster() -> Any:
    import ray
    from ray.cluster_utils import Cluster

    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), os.environ.get("PYTHONPATH")]))
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    nodes = [cluster.add_node(num_cpus=1, resources={"victim": 2} if i == 0 else {}) for i in range(RAY_NODES)]
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, log_to_driver=False)
    return cluster, nodes


def _ray_scaling() -> list[dict[str, Any]]:
    from rlenvs.vector import EnvPool

    rows = []
    for label, wait in (("free step", 0.0), (f"step waiting {WAIT_S * 1e3:g} ms", WAIT_S)):
        rates = {}
        for actors in RAY_ACTORS:
            kwargs = {"wait_s": wait, "max_turns": LONG}
            with EnvPool(
                WaitingArithmeticEnv, RAY_ENVS, make_kwargs=kwargs, executor="ray", max_workers=actors
            ) as pool:
                pool.reset(seed=0)
                pool.step(dict.fromkeys(range(RAY_ENVS), NO_ANSWER))  # warm
                batches = _timed_steps(lambda: pool.step(dict.fromkeys(range(RAY_ENVS), NO_ANSWER)), BATCHES)
            rates[actors] = RAY_ENVS / statistics.median(batches)
        for actors, rate in rates.items():
            rows.append(
                {
                    "measure": f"Ray: {RAY_ENVS} envs on {actors} actor(s) ({actors} node(s)), {label}",
                    "steps/s": round(rate),
                    "vs 1 actor": round(rate / rates[1], 2),
                }
            )
    return rows


def _node_death(cluster: Any, victim: Any) -> list[dict[str, Any]]:
    import threading

    from rlenvs.vector import EnvPool

    options = {"num_cpus": 0, "resources": {"victim": 1}}
    with EnvPool(
        WaitingArithmeticEnv,
        8,
        make_kwargs={"max_turns": LONG},
        executor="ray",
        max_workers=2,
        ray_actor_options=options,
    ) as pool:
        assert set(pool.actor_nodes()) == {victim.node_id}
        pool.reset(seed=0)
        done: dict[str, Any] = {}

        def batch() -> None:
            done["results"] = pool.step(dict.fromkeys(range(8), "#wait 30\n" + NO_ANSWER))
            done["at"] = time.monotonic()

        stepping = threading.Thread(target=batch)
        stepping.start()
        time.sleep(1.0)
        removed = time.monotonic()
        cluster.remove_node(victim, allow_graceful=False)
        stepping.join(timeout=60)
    lost = sum(r.stop_reason == "env_lost" for r in done["results"])
    return [
        {
            "measure": f"Ray: node removed mid-step, until its episodes are reported ({lost} of 8 env_lost)",
            "seconds": round(done["at"] - removed, 2),
        }
    ]


def _ray_rows() -> list[dict[str, Any]]:
    import ray

    cluster, nodes = _ray_cluster()
    try:
        return _pool_shapes() + _ray_scaling() + _node_death(cluster, nodes[0])
    finally:
        ray.shutdown()
        cluster.shutdown()


def run() -> dict[str, Any]:
    math_rows = _math_steps()
    sandbox_rows = _sandboxed_episodes()
    session_rows = _sessions_per_core()
    ray_rows = _ray_rows()
    ours, theirs = math_rows[2]["p50 µs"], math_rows[3]["p50 µs"]
    notes = [
        f"Same client (OpenEnv's GenericEnvClient), same env, same machine: a step through OpenEnv's server "
        f"takes {theirs} µs, through rlenvs serve {ours} µs ({math_rows[3]['vs rlenvs serve (same client)']}x).",
        f"rlenvs {version('rlenvs')}, openenv {version('openenv')}, uvicorn {version('uvicorn')}, "
        f"websockets {version('websockets')}; servers in their own processes, loopback; the machine's "
        f"{os.cpu_count()} cores shared by client and server except in the sessions rows (server on CPU 0, "
        "client on CPU 1: the client's threads, one per session, are part of what is measured).",
        "HumanEval is MIT (../shared/data/humaneval).",
    ]
    return {
        "title": "Deployment shapes: in-process, rlenvs serve (and OpenEnv's own server), Ray actors",
        "rows": math_rows + sandbox_rows + session_rows + ray_rows,
        "notes": notes,
    }
