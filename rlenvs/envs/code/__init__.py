"""Code envs: write Python functions, verified by running tests in the sandbox."""
