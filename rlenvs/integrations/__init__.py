"""rlenvs envs and tasks for other ecosystems' trainers, none of them needing TRL:

- `skyrl`: every rlenvs id as a SkyRL env class (`skyrl_gym`), in-process or on a server;
- `parquet`: an env's tasks as Parquet rows in the layout verl's and SkyRL's data loaders
  read (`rlenvs export`), and those rows read back;
- `sft`: oracle episodes as chat JSON Lines for supervised fine-tuning (`rlenvs sft-data`).

Two adapters live where they run, and are named there: OpenEnv's wire protocol is the env
server's own (rlenvs.remote: `wire` the protocol, `server` and `client` its two ends), and Ray
is one of `EnvPool`'s executors (rlenvs.vector.ray_actors).
"""
