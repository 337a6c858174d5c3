"""Envs in another process or on another machine, behind OpenEnv's wire protocol.

- `rlenvs serve ID` (`rlenvs.remote.server.EnvServer`): any registered env as an env server
  that OpenEnv's own client, plain WebSocket/HTTP clients and `RemoteEnv` all drive.
- `RemoteEnv(url)`: a served env as a `gymnasium.Env`; `EnvPool(url, n)` steps n sessions.

The client needs only `websockets`; the server needs FastAPI and uvicorn (extra `serve`).
"""

from rlenvs.remote.client import RemoteEnv, RemoteEnvError

__all__ = ["RemoteEnv", "RemoteEnvError"]
