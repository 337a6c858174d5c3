"""Pure reward functions: (completion, ground truth) -> float, usable without any env."""
