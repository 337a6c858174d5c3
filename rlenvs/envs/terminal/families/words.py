"""Word pools the file-chore families (count-files, largest-file, newer-files, log-summary,
permissions, archive) draw from: people, file stems, code modules, packages, the components
of a service's logs, and the prose that fills a text file."""

from __future__ import annotations

USERS = ("alice", "bob", "carol", "dmitri", "emma", "farah", "george", "hiro", "ines", "jamal", "kate", "luis", "mei",
         "nora", "omar", "priya")  # fmt: skip
WORDS = ("report", "summary", "invoice", "budget", "roadmap", "minutes", "forecast", "inventory", "customers", "orders",
         "sales", "payroll", "audit", "metrics", "backlog", "survey", "contacts", "schedule", "pricing", "expenses")  # fmt: skip
MODULES = ("models", "views", "utils", "parser", "config", "client", "server", "auth", "cache", "storage", "api", "cli",
           "schema", "tasks", "events", "render", "loader", "metrics", "errors", "session", "routes", "billing")  # fmt: skip
PACKAGES = ("shop", "ledger", "atlas", "orbit", "harbor", "pixel", "tracker", "relay")
COMPONENTS = ("auth", "billing", "cache", "db", "gateway", "inventory", "mailer", "payments", "reports", "scheduler",
              "search", "storage", "users", "webhooks")  # fmt: skip
PROSE = ("the", "team", "agreed", "to", "review", "numbers", "weekly", "before", "release", "customer", "feedback", "was",
         "mostly", "positive", "please", "check", "figures", "in", "appendix", "next", "steps", "are", "listed", "below",
         "owner", "due", "date", "budget", "approved", "for", "q3", "migration", "plan")  # fmt: skip
