"""Only the records of this package's envs: `import rlenvs` reads them (pyproject's entry point)."""

from rlenvs.core.registration import EnvEntry

ENVS = (
    EnvEntry(
        id="orgchart/ManagerChain-v0",
        entry_point="org_chart.env:ManagerChainEnv",
        summary="Who is 2 or 3 levels above a person in a hidden company chart? Found with a directory lookup tool.",
        observes="a person's name at `level=1..2`, then the records the agent looked up (`<record>…</record>`)",
        acts="calls `<lookup>Full Name</lookup>`, one hop a reply, then ends with a line `Answer: Full Name`",
        reward="1 iff the one name answered is the right person; 0 otherwise, for several names and on tool turns",
        turns="up to 6 (`max_turns`); an answer ends the episode, otherwise truncated",
    ),
)
