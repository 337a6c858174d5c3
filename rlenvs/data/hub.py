"""Whether the Hugging Face hub can be reached from here, found out in seconds.

`datasets.load_dataset` on a machine without network retries for about 24 s before it gives
up (five tries with back-off), and then says only that it could not reach the hub. The
loaders ask `hub_status` first: one TCP connection to the hub's endpoint (or to the proxy
the environment names for it), bounded by a thread join, so that a hanging DNS lookup is
bounded too (a socket timeout does not cover name resolution). An unreachable hub is then a
`DataNotFoundError` within `PROBE_TIMEOUT_S`, saying how to work offline.

Nothing here imports `datasets` or `huggingface_hub`: `rlenvs data` reports on machines
that have neither.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

DEFAULT_ENDPOINT = "https://huggingface.co"
ENDPOINT_VARIABLE = "HF_ENDPOINT"
OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
"""Set to 1, huggingface_hub and datasets use only the local cache (and so do the loaders)."""
PROBE_TIMEOUT_S = 3.0
"""Long enough for a slow but working link (a TCP handshake takes well under a second even
across continents), short enough that an offline machine is told at once."""
_STATUS_TTL_S = 30.0
"""A vector of 64 envs makes 64 loaders in a row: the answer is kept this long, so they
share one probe, and a machine that comes back online is seen again soon."""
_TRUE = {"1", "ON", "YES", "TRUE"}  # huggingface_hub's reading of its boolean variables


@dataclass(frozen=True)
class HubStatus:
    """What the probe found. `detail` says how, for messages ("connected to huggingface.co:443
    in 42 ms", "no answer from 10.255.255.1:9 within 3 s", "HF_HUB_OFFLINE=1 is set")."""

    reachable: bool
    endpoint: str
    detail: str
    offline_variable: str | None = None
    """The HF_*_OFFLINE variable that is set, if any: the hub is then not asked at all."""


def endpoint() -> str:
    """The hub's base URL: `$HF_ENDPOINT` (a mirror, a private hub) or huggingface.co."""
    return (os.environ.get(ENDPOINT_VARIABLE) or DEFAULT_ENDPOINT).rstrip("/")


def offline_variable() -> str | None:
    """The name of the HF_*_OFFLINE variable set to a true value, or None."""
    for name in OFFLINE_VARIABLES:
        if os.environ.get(name, "").strip().upper() in _TRUE:
            return name
    return None


_cache: dict[tuple[str, str | None], tuple[float, HubStatus]] = {}
_cache_lock = threading.Lock()


def hub_status(timeout_s: float = PROBE_TIMEOUT_S) -> HubStatus:
    """Whether the hub (or the proxy in front of it) accepts a connection within `timeout_s`."""
    url = endpoint()
    offline = offline_variable()
    if offline is not None:
        return HubStatus(False, url, f"{offline}={os.environ[offline]} is set", offline)
    target, via = _target(url)
    key = (url, via)
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None and time.monotonic() - cached[0] < _STATUS_TTL_S:
            return cached[1]
    status = _probe(url, target, via, timeout_s)
    with _cache_lock:
        _cache[key] = (time.monotonic(), status)
    return status


def _target(url: str) -> tuple[tuple[str, int], str | None]:
    """(host, port) to connect to for `url`, and the proxy's URL when the connection goes
    through one (HTTPS_PROXY and friends, unless NO_PROXY exempts the host): probing the hub
    directly behind a proxy would report a working machine as offline."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme or "https"
    host = parts.hostname or ""
    port = parts.port or (443 if scheme == "https" else 80)
    proxy = urllib.request.getproxies().get(scheme)
    if proxy and not urllib.request.proxy_bypass(host):
        proxy_parts = urllib.parse.urlsplit(proxy if "://" in proxy else f"http://{proxy}")
        if proxy_parts.hostname:
            default = 443 if proxy_parts.scheme == "https" else 80
            return (proxy_parts.hostname, proxy_parts.port or default), proxy
    return (host, port), None


def _probe(url: str, target: tuple[str, int], via: str | None, timeout_s: float) -> HubStatus:
    host, port = target
    where = f"{host}:{port}" + (f" (the proxy {via})" if via else "")
    outcome: list[BaseException | float] = []

    def connect() -> None:
        started = time.monotonic()
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                outcome.append(time.monotonic() - started)
        except BaseException as error:
            outcome.append(error)

    thread = threading.Thread(target=connect, name="rlenvs-hub-probe", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if not outcome:
        return HubStatus(False, url, f"no answer from {where} within {timeout_s:g} s")
    result = outcome[0]
    if isinstance(result, BaseException):
        if isinstance(result, TimeoutError):  # socket.timeout is TimeoutError
            return HubStatus(False, url, f"no answer from {where} within {timeout_s:g} s")
        reason = (result.strerror if isinstance(result, OSError) else None) or str(result) or type(result).__name__
        return HubStatus(False, url, f"cannot connect to {where}: {reason}")
    return HubStatus(True, url, f"connected to {where} in {result * 1000:.0f} ms")


def hub_cache_copy(path: str) -> Path | None:
    """Where this machine's Hugging Face caches hold the hub data set `path` ("openai/gsm8k"),
    if they do: the hub's download cache (`datasets--openai--gsm8k`) or the `datasets`
    library's prepared copy (`openai___gsm8k`). A folder being there is what HF_HUB_OFFLINE=1
    needs to have a chance; whether it holds the wanted split is for `datasets` to say."""
    home = Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface").expanduser()
    hub_cache = Path(os.environ.get("HF_HUB_CACHE") or os.environ.get("HUGGINGFACE_HUB_CACHE") or home / "hub")
    datasets_cache = Path(os.environ.get("HF_DATASETS_CACHE") or home / "datasets")
    for candidate in (
        hub_cache.expanduser() / f"datasets--{path.replace('/', '--')}",
        datasets_cache.expanduser() / path.replace("/", "___"),
    ):
        if candidate.is_dir():
            return candidate
    return None
