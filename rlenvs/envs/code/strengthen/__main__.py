"""`python -m rlenvs.envs.code.strengthen humaneval|mbpp`: see `build`."""

import sys

from rlenvs.envs.code.strengthen.build import main

sys.exit(main())
