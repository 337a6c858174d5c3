"""The execution pool: warm bubblewrap workers that run one untrusted program or test run per
call (`pool.Sandbox`), admitted least-served tenant first (`slots`), one pool per process
shared by every env that runs code (`shared`). What a call is given and reports is
rlenvs.sandbox.requests and .results; how a worker starts, rlenvs.sandbox.launch and .worker."""
