"""What a sandboxed command runs with: its environment and a shell session's program.

Constants only, importing nothing: the guest imports this module by its bare name (`roles`),
and the host imports it as `rlenvs.sandbox.guest.shell` (the terminal oracle's
re-planning reply runs commands exactly as the session does), so both read one definition.
"""

SAFE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "TMPDIR": "/tmp"}


SHELL_SESSION = "; ".join(
    (
        # stderr joins stdout, as on a terminal (first: `exec` is no function of the agent's yet);
        # then the state the last command left, from stdin, which leaves stdin at its end, like a
        # terminal nobody types into. The state is `declare -p` whole (one builtin, where a
        # filtered loop costs a fork and a millisecond): what bash keeps read-only fails to
        # restore, quietly, and RANDOM, which an assignment would re-seed, is re-seeded at random.
        # All on one line, so that bash's messages about the command say "line 1", not the
        # wrapper's line.
        "exec 2>&1",
        "builtin source /dev/stdin 2>/dev/null",
        "RANDOM=$SRANDOM",
        "builtin shopt -s expand_aliases",
        "__rlenvs_save() { { builtin printf 'builtin cd -- %q\\n' \"$PWD\"; builtin umask -p; builtin declare -p; "
        "builtin declare -f; builtin alias -p; } >&3 2>/dev/null; }",
        "builtin trap __rlenvs_save EXIT",
        # The command without the wrapper's arguments ($1 is the command itself).
        "__rlenvs_command=$1",
        "builtin set --",
        'builtin eval "$__rlenvs_command"',
    )
)
"""The program of one command of a persistent shell session: each command runs in a fresh
bash that first restores what the previous one left and, on exit, writes its own state to
fd 3. A command killed for its time limit leaves no state behind, so the shell is as it was
before it, and a runaway command never takes the session down with it."""
