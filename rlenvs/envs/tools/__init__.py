"""Tools envs can give the model: the calculator (GSM8K-Tool-v1) and the Python interpreter."""
