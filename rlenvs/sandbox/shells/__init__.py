"""Shell sessions: a persistent bash for an agent's episode (`session.ShellSession`) on the
host's own tree, on an image's root under bubblewrap (`rootfs`, entered through
`enter_root.py`) or in a Docker or Podman container (`containers`), and the verdict that runs
a task's tests there after the episode, out of the agent's reach (`verdict`, with the agent's
shell state it may take, `verdict_shell`, and the search-path rules of `search_paths`; the
tests' own packages are a layer of the image store, rlenvs.images.verdict_packages). Workers start as the execution pool's do
(rlenvs.sandbox.launch, .worker, .cgroups)."""
