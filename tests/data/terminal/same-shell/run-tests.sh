#!/bin/bash
# Runs in the agent's shell (run_tests_in_same_shell): its folder, BUILD_MODE and PATH.
[ "$(greet)" = "Hello, world!" ] || { echo "greet is not on PATH or prints the wrong line"; exit 1; }
python3 $TEST_DIR/test_outputs.py
