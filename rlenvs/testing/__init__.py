"""Property checks for text envs and reward functions: the contract rlenvs tests itself with.

- `check_text_env` (`rlenvs.testing.envs`): the env contract on any text `gymnasium.Env`.
- `check_reward` and `check_<property>` (`rlenvs.testing.properties`): range, totality,
  determinism, invariance, sensitivity, anti-hedging and time budget on any reward
  function; `rlenvs.testing.strategies` holds the hypothesis strategies they draw from.

Names load on first use, so `import rlenvs.testing` is cheap and each half needs only its
own dependencies: the reward-function half needs hypothesis (`pip install "rlenvs[testing]"`)
and says so when it is missing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_ENVS = "rlenvs.testing.envs"
_PROPERTIES = "rlenvs.testing.properties"
_STRATEGIES = "rlenvs.testing.strategies"

_EXPORTS = {
    "CheckReport": _ENVS,
    "EnvReport": _ENVS,
    "check_text_env": _ENVS,
    "PROPERTY_NAMES": _PROPERTIES,
    "PropertyReport": _PROPERTIES,
    "RewardReport": _PROPERTIES,
    "check_reward": _PROPERTIES,
    "check_range": _PROPERTIES,
    "check_totality": _PROPERTIES,
    "check_determinism": _PROPERTIES,
    "check_invariance": _PROPERTIES,
    "check_sensitivity": _PROPERTIES,
    "check_anti_hedging": _PROPERTIES,
    "check_time_budget": _PROPERTIES,
    "Case": _STRATEGIES,
    "Truth": _STRATEGIES,
    "Rendering": _STRATEGIES,
}

__all__ = [
    "PROPERTY_NAMES",
    "Case",
    "CheckReport",
    "EnvReport",
    "PropertyReport",
    "Rendering",
    "RewardReport",
    "Truth",
    "check_anti_hedging",
    "check_determinism",
    "check_invariance",
    "check_range",
    "check_reward",
    "check_sensitivity",
    "check_text_env",
    "check_time_budget",
    "check_totality",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rlenvs.testing' has no attribute {name!r}; it exports {__all__}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:
    from rlenvs.testing.envs import CheckReport, EnvReport, check_text_env
    from rlenvs.testing.properties import (
        PROPERTY_NAMES,
        PropertyReport,
        RewardReport,
        check_anti_hedging,
        check_determinism,
        check_invariance,
        check_range,
        check_reward,
        check_sensitivity,
        check_time_budget,
        check_totality,
    )
    from rlenvs.testing.strategies import Case, Rendering, Truth
