"""capitals/Capitals-v0: name the capital of a country. The whole env is this one call."""

from rlenvs import dataset_env
from rlenvs.rewards.text import text_answer_score

CapitalsEnv = dataset_env(
    "CapitalsEnv",
    data="capitals.jsonl",  # beside this file, and installed with it (pyproject.toml's package-data)
    prompt="What is the capital of {country}?",
    answer="capital",  # a city's name, or the list of names accepted for it (["Kyiv", "Kiev"])
    reward=text_answer_score,  # the one final answer, as text; a reply that names two cities scores 0
    system_prompt="Answer with the name of the city only, as \\boxed{City}.",
)
