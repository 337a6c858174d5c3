"""Tools envs can give the model (the calculator lives with the math envs)."""
