"""The checks of the env contract, one module per topic. Importing a module registers its
checks into `CHECKS` (`rlenvs.testing.envs.registry`), so the modules are imported here in
the order a report lists the checks.

- `spaces`: gymnasium_check_env, spaces
- `seeding`: seeding_determinism, seed_variety
- `episodes`: oracle_maximality, garbage_action_totality, episode_length_bound
- `objects`: fresh_objects
- `conventions`: chat_messages, misuse_errors, render_modes
- `vector`: copy_and_pickle, vector_envs
"""

# isort: off
# In report order, not alphabetical: the import order is the order of CHECKS.
from rlenvs.testing.envs.checks import spaces
from rlenvs.testing.envs.checks import seeding
from rlenvs.testing.envs.checks import episodes
from rlenvs.testing.envs.checks import objects
from rlenvs.testing.envs.checks import conventions
from rlenvs.testing.envs.checks import vector

# isort: on

__all__ = ["conventions", "episodes", "objects", "seeding", "spaces", "vector"]
