"""Generated tests for HumanEval and MBPP, the way EvalPlus made HumanEval+ and MBPP+.

A data set's own tests are a handful of asserts; a policy under RL finds the programs they
cannot tell from a solution (a constant the prompt shows, the input echoed back, an
off-by-one). So each task gets tests computed once from its own (`build`): type-aware
mutations of the inputs its tests use (`inputs`), answered by the reference solution in the
sandbox (`runner`), chosen to catch the reference's near-miss mutants (`mutants`) and
do-nothing programs that the task's tests let through. The results are committed as data
(`rlenvs/envs/code/generated_tests/`), keyed by task id and checked against a fingerprint
of the task, and the envs run them after the task's own tests (`generated`).
"""
