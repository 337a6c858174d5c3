"""The env_workers section of `rlenvs-train`'s config put to work: `EnvPool`'s keyword arguments
(`pool_kwargs`) and joining the Ray cluster the rollout envs run on (`connect_ray`)."""

from __future__ import annotations

from typing import Any

from rlenvs_train.config.schema import EnvWorkersConfig


def pool_kwargs(workers: EnvWorkersConfig) -> dict[str, Any]:
    """The `EnvPool` keyword arguments of an env_workers section (Ray itself is joined by
    `connect_ray`)."""
    kwargs: dict[str, Any] = {"max_workers": workers.max_workers, "step_timeout_s": workers.step_timeout_s}
    if workers.kind == "ray":
        options: dict[str, Any] = {"num_cpus": workers.ray.num_cpus}
        if workers.ray.resources:
            options["resources"] = dict(workers.ray.resources)
        return kwargs | {"executor": "ray", "ray_actor_options": options}
    return kwargs | {"executor": workers.executor}


def connect_ray(workers: EnvWorkersConfig) -> None:
    """Join the Ray cluster of env_workers.ray.address (kind "ray" only; once per process)."""
    if workers.kind != "ray":
        return
    import ray

    if not ray.is_initialized():
        ray.init(address=workers.ray.address, log_to_driver=False)
