"""Math envs: word problems and competition math with a verifiable final answer."""
