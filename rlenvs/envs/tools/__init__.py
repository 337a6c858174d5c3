"""Tools envs can give the model: the calculator (GSM8K-Tool-v0) and the Python interpreter."""
