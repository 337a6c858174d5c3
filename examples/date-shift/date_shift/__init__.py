"""Only the records of this package's envs: `import rlenvs` reads them (pyproject's entry point)."""

from rlenvs.core.registration import EnvEntry

ENVS = (
    EnvEntry(
        id="dates/DateShift-v0",
        entry_point="date_shift.env:DateShiftEnv",
        summary="What date is N days after or before a date? 3 procedural levels, exact answers.",
        observes="a date and a number of days, at `level=1..3` (to 40 days; 2 years; 10 years across 1900/2100)",
        acts="reasons, ends with a line `Answer: YYYY-MM-DD`",
        reward="1 iff the one date answered is right; 0 for a wrong date or several",
        turns="1 (`max_turns=k`: a reply with no answer gets a format reminder and another turn)",
    ),
)
