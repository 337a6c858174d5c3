"""How an instruction ends when the workspace, not a submitted answer, is judged: the agent
replies `submit` once it is done."""

from __future__ import annotations

DONE = "When you are done, reply with `submit`."
