"""Checks the shell the agent left: the tests run in it (run_tests_in_same_shell)."""

import os

assert os.environ.get("BUILD_MODE") == "release", f"BUILD_MODE is {os.environ.get('BUILD_MODE')!r}"
assert os.getcwd() == "/app/build", f"the shell was left in {os.getcwd()}"
print("the shell is as asked")
