"""The clock of the families that set file times or write logs (newer-files, log-summary)."""

from __future__ import annotations

BASE_TIME = 1_704_067_200
"""2024-01-01T00:00:00Z: file times and log timestamps are drawn within the year after it."""
DAY = 86_400
