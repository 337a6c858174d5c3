"""rlenvs_train.config: the YAML config of rlenvs-train, its overrides and its errors.

Real YAML files in tmp_path and the real example files; the only thing patched is
`importlib.util.find_spec`, which is the machine check itself ("is vllm installed?").
"""

from __future__ import annotations

import dataclasses
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rlenvs_train.config import (
    ConfigError,
    DataConfig,
    InferenceConfig,
    TrainConfig,
    TrainerConfig,
    check_environment,
    config_from_dict,
    config_to_dict,
    dump_config,
    load_config,
    validate,
)
from rlenvs_train.config.machine import vllm_missing_message
from rlenvs_train.env_workers import pool_kwargs

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
CONFIG_EXAMPLES = [
    "quickstart.yaml",
    # inference.backend: vllm in this process: the machine check asks for vLLM (marked, so that
    # the fast suite leaves them out and a machine without vLLM skips them, naming it)
    pytest.param("gsm8k-grpo.yaml", marks=pytest.mark.vllm),
    "multi-node/gsm8k-grpo-server.yaml",  # vLLM runs on another node: nothing to import here
    pytest.param("ray-envs/humaneval-grpo.yaml", marks=pytest.mark.vllm),
]
WANDB_MISSING = "logger: 'wandb' needs the wandb package: pip install wandb, or set logger=none"


def write(tmp_path: Path, text: str, name: str = "config.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def problems_of(*args, **kwargs) -> list[str]:
    with pytest.raises(ConfigError) as info:
        load_config(*args, **kwargs)
    assert str(info.value).count("\n") == len(info.value.problems)  # a header, then one line each
    return info.value.problems


# --- defaults and examples --------------------------------------------------------------------


def test_defaults_load():
    config = load_config()
    assert config == TrainConfig()
    assert config.data.env == "rlenvs/Arithmetic-v1"
    assert config.data.env_kwargs == {"level": 1, "max_turns": 1}
    assert config.trainer.policy.model.path == "tiny"
    assert config.trainer.learning_rate == 1e-6
    assert config.inference.backend == "vllm"
    assert config.logger == "none"


def test_loading_imports_nothing_heavy():
    code = (
        "import sys; from rlenvs_train.config import load_config; load_config('examples/quickstart.yaml'); "
        "print(sorted(m for m in ('torch', 'transformers', 'trl', 'vllm') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("name", CONFIG_EXAMPLES)
def test_examples_load_and_pass_the_machine_checks(name):
    config = load_config(EXAMPLES / name)
    # What this machine may lack: the hub (a recipe's hub model not in the local cache, offline) and wandb.
    offline = (
        f"trainer.policy.model.path: hub model {config.trainer.policy.model.path!r} is not in the local Hugging Face"
    )
    problems = [p for p in check_environment(config) if not p.startswith(offline)]
    if config.logger == "wandb" and importlib.util.find_spec("wandb") is None:
        assert problems == [WANDB_MISSING]  # the only thing this machine lacks
    else:
        assert problems == []


def test_quickstart_is_offline_and_cpu():
    config = load_config(EXAMPLES / "quickstart.yaml")
    assert config.inference.backend == "hf"
    assert config.trainer.policy.model.path == "tiny"
    assert config.trainer.bf16 is False and config.trainer.sft_warmup.episodes > 0
    assert config.trainer.output_dir == "runs/quickstart"
    validate(config)  # nothing the quickstart needs is missing here


def test_gsm8k_examples():
    single = load_config(EXAMPLES / "gsm8k-grpo.yaml")
    assert single.data.env == "rlenvs/GSM8K-v1" and single.data.num_train_tasks is None
    assert single.trainer.policy.model.path == "Qwen/Qwen2.5-1.5B-Instruct"
    assert single.trainer.placement.colocate_all and single.trainer.placement.policy_num_gpus_per_node == 4
    assert (single.trainer.strategy, single.trainer.bf16, single.inference.backend) == ("fsdp2", True, "vllm")
    multi = load_config(EXAMPLES / "multi-node/gsm8k-grpo-server.yaml")
    assert multi.inference.backend == "vllm-server" and not multi.trainer.placement.colocate_all
    assert (multi.trainer.placement.num_nodes, multi.trainer.placement.policy_num_gpus_per_node) == (2, 8)


def test_accelerate_config_is_read_by_accelerate():
    from accelerate.commands.config.config_args import ClusterConfig

    config = ClusterConfig.from_yaml_file(str(EXAMPLES / "multi-node/accelerate-node.yaml"))
    assert config.num_machines == 2 and config.num_processes == 16
    assert config.fsdp_config["fsdp_version"] == 2
    assert config.main_process_ip and config.mixed_precision == "bf16"
    server = load_config(EXAMPLES / "multi-node/gsm8k-grpo-server.yaml").trainer.placement
    assert config.num_machines == server.num_nodes
    assert config.num_processes == server.num_nodes * server.policy_num_gpus_per_node


# --- overrides ----------------------------------------------------------------------------------


def test_overrides_on_top_of_a_file(tmp_path):
    path = write(tmp_path, "trainer:\n  epochs: 2\n  max_steps: 10\ninference:\n  backend: hf\n")
    config = load_config(
        path,
        [
            "trainer.epochs=5",  # int
            "trainer.learning_rate=1e-6",  # YAML 1.1 reads this as a string
            "trainer.max_steps=null",
            "data.train_data=['~/data/gsm8k/train.parquet', /abs/b.parquet]",
            "data.val_data=~/val.parquet",  # one string: a one-element tuple
            "trainer.policy.model.path=Qwen/Qwen2.5-0.5B-Instruct",
            "trainer.placement.num_nodes=3",
            "trainer.bf16=true",
            "data.env_kwargs.level=3",  # edits the default kwargs
        ],
    )
    home = os.path.expanduser("~")
    assert config.trainer.epochs == 5
    assert config.trainer.learning_rate == 1e-6 and isinstance(config.trainer.learning_rate, float)
    assert config.trainer.max_steps is None
    assert config.data.train_data == (f"{home}/data/gsm8k/train.parquet", "/abs/b.parquet")
    assert config.data.val_data == (f"{home}/val.parquet",)
    assert config.trainer.policy.model.path == "Qwen/Qwen2.5-0.5B-Instruct"
    assert config.trainer.placement.num_nodes == 3 and config.trainer.bf16 is True
    assert config.data.env_kwargs == {"level": 3, "max_turns": 1}
    assert config.inference.backend == "hf"  # the file's value, untouched


def test_float_strings_in_a_file(tmp_path):
    path = write(tmp_path, "trainer:\n  learning_rate: 1e-6\n  sft_warmup:\n    learning_rate: 3e-3\n")
    assert yaml.safe_load(path.read_text())["trainer"]["learning_rate"] == "1e-6"  # why it matters
    config = load_config(path)
    assert config.trainer.learning_rate == 1e-6 and config.trainer.sft_warmup.learning_rate == 3e-3


def test_env_kwargs_from_a_file_replace_the_default(tmp_path):
    config = load_config(write(tmp_path, "data:\n  env: rlenvs/GSM8K-v1\n  env_kwargs: {split: test}\n"))
    assert config.data.env_kwargs == {"split": "test"}


def test_override_without_equals_or_key():
    problems = problems_of(None, ["trainer.epochs 5", "=3", "trainer..epochs=2"])
    assert problems[0] == "override 'trainer.epochs 5' has no '=': write dotted.key=value, e.g. trainer.epochs=5"
    assert problems[1].startswith("override '=3' has an empty key")
    assert problems[2].startswith("override 'trainer..epochs=2' has an empty key")


def test_override_into_a_value_that_is_not_a_mapping(tmp_path):
    problems = problems_of(write(tmp_path, "trainer: 5\n"), ["trainer.epochs=2"])
    assert "override 'trainer.epochs=2': trainer is an integer 5, not a mapping, so it has no key 'epochs'" in problems
    assert any(p.startswith("trainer: expected a mapping with keys algorithm, policy") for p in problems)


def test_override_value_that_is_not_yaml():
    (problem,) = problems_of(None, ["data.train_data=[a, b"])
    assert problem.startswith("override 'data.train_data=[a, b': the value is not valid YAML")


# --- errors -------------------------------------------------------------------------------------


def test_every_mistake_in_a_file_is_reported_at_once(tmp_path):
    path = write(
        tmp_path,
        """
data:
  env: 5
  train_data: [a.parquet, 3]
  num_train_tasks: 0
trainer:
  epocs: 3
  epochs: "5"
  save_steps: 2.5
  learning_rate: fast
  temperature: 0
  bf16: "yes"
  strategy: deepspeed
  policy: Qwen/Qwen2.5-0.5B
  algorithm:
    loss_type: ppo
inference:
  gpu_memory_utilization: 1.5
  server_port: null
logger: mlflow
""",
    )
    problems = problems_of(path)
    expected = [
        "data.env: expected a string, got an integer 5; quote it if it is meant as text",
        "data.train_data: expected a list of strings (or one string), got a list ['a.parquet', 3]",
        "data.num_train_tasks: must be >= 1, got 0 (null takes every task of a data-backed env)",
        "trainer.epocs: unknown key (did you mean trainer.epochs?); valid keys in trainer: algorithm, policy,",
        "trainer.algorithm.loss_type: 'ppo' is not one of: grpo, dapo, dr_grpo, bnpo",
        "trainer.policy: expected a mapping with keys model; got a string 'Qwen/Qwen2.5-0.5B'",
        "trainer.strategy: 'deepspeed' is not one of: ddp, fsdp2",
        "trainer.epochs: expected an integer, got the string '5'; write a number without quotes",
        "trainer.learning_rate: expected a number, got the string 'fast'",
        "trainer.temperature: must be > 0, got 0.0 (sampling needs a positive temperature)",
        "trainer.save_steps: expected an integer, got a number 2.5",
        "trainer.bf16: expected true or false, got a string 'yes' (write it without quotes)",
        "inference.gpu_memory_utilization: must be <= 1, got 1.5 (it is the share of each GPU's memory vLLM takes)",
        "inference.server_port: null is not allowed here; write a number",
        "logger: 'mlflow' is not one of: none, tensorboard, wandb",
    ]
    assert len(problems) == len(expected), "\n".join(problems)
    for want, got in zip(expected, problems):
        assert got.startswith(want), f"{got!r} does not start with {want!r}"


def test_unknown_keys_suggest_the_close_one(tmp_path):
    problems = problems_of(write(tmp_path, "trainer:\n  learning_rat: 1.0e-5\nlearning_rate: 0.1\ntrainr: {}\n"))
    assert problems[0].startswith(
        "learning_rate: unknown key (did you mean trainer.sft_warmup.learning_rate or trainer.learning_rate?)"
    )
    assert problems[0].endswith("valid keys in the top level: data, trainer, inference, env_workers, logger")
    assert problems[1].startswith("trainr: unknown key (did you mean trainer?)")
    assert problems[2].startswith("trainer.learning_rat: unknown key (did you mean trainer.learning_rate?)")
    assert "max_episode_tokens" in problems[2]  # the valid keys at that level


def test_int_fields_refuse_bools_and_floats_but_floats_take_ints():
    problems = problems_of(None, ["trainer.epochs=true", "trainer.seed=2.0"])
    assert problems == [
        "trainer.epochs: expected an integer, got a boolean True",
        "trainer.seed: expected an integer, got 2.0; write 2",
    ]
    assert load_config(None, ["trainer.learning_rate=1"]).trainer.learning_rate == 1.0
    assert problems_of(None, ["trainer.temperature=.inf"]) == ["trainer.temperature: expected a finite number, got inf"]


def test_a_mapping_where_a_value_goes_and_a_value_where_a_mapping_goes():
    problems = problems_of(None, ["trainer.epochs={a: 1}", "data.env_kwargs=[1]", "inference=hf"])
    assert problems == [
        "data.env_kwargs: expected a mapping (write {} for none), got a list [1]",
        "trainer.epochs: expected an integer, got a mapping {'a': 1}",
        (
            "inference: expected a mapping with keys backend, gpu_memory_utilization, server_host, server_port, "
            "server_timeout_s, schedule; got a string 'hf'"
        ),
    ]


def test_top_level_must_be_a_mapping(tmp_path):
    (problem,) = problems_of(write(tmp_path, "- trainer\n- data\n"))
    assert (
        problem
        == "the top level must be a mapping of sections (data, trainer, inference, env_workers, logger), got a list ['trainer', 'data']"
    )
    assert load_config(write(tmp_path, "# only a comment\n", "empty.yaml")) == TrainConfig()


def test_missing_file_and_bad_yaml(tmp_path):
    assert problems_of(tmp_path / "nope.yaml") == [f"config file not found: {tmp_path / 'nope.yaml'}"]
    (problem,) = problems_of(write(tmp_path, "trainer: [1, 2\n"))
    assert (
        problem
        == "not valid YAML: line 2, column 1: expected ',' or ']', but got '<stream end>' (while parsing a flow sequence)"
    )


def test_a_key_given_twice_and_yaml_11_booleans_are_errors(tmp_path):
    """PyYAML keeps the last of two equal keys (a learning rate written twice became 10.0) and
    reads yes/no/on/off as booleans (`split: no` became False): both are errors, with the fix."""
    (twice,) = problems_of(write(tmp_path, "trainer:\n  learning_rate: 1.0e-6\n  learning_rate: 10.0\n"))
    assert twice == "not valid YAML: line 3, column 3: the key 'learning_rate' is given twice (first on line 2)"
    (word,) = problems_of(write(tmp_path, "data:\n  env_kwargs:\n    split: no\n"))
    assert "'no' is a boolean only in YAML 1.1: write true or false for a flag, or quote it ('no')" in word
    (override,) = problems_of(None, ["data.env_kwargs.split=off"])
    assert "'off' is a boolean only in YAML 1.1" in override
    config = load_config(write(tmp_path, "data:\n  env_kwargs:\n    split: 'no'\n    flag: true\n"))
    assert config.data.env_kwargs == {"split": "no", "flag": True}


def test_a_config_that_cannot_be_read_says_why(tmp_path):
    """A folder, bytes that are not UTF-8, nesting too deep to build, a number of more than
    4,300 digits: one line each, not a traceback."""
    assert problems_of(tmp_path) == [f"{tmp_path} is a folder: --config takes a YAML file"]
    binary = tmp_path / "binary.yaml"
    binary.write_bytes(b"trainer:\n  seed: \xff\n")
    assert problems_of(binary) == ["not UTF-8 text (byte 17 is b'\\xff'): save the config as UTF-8"]
    deep = write(tmp_path, "data:\n  env_kwargs: " + "[" * 3000 + "]" * 3000 + "\n", "deep.yaml")
    assert problems_of(deep) == ["not a config rlenvs-train can read: the YAML is nested too deeply to read"]
    (digits,) = problems_of(write(tmp_path, "trainer:\n  seed: " + "9" * 5000 + "\n", "digits.yaml"))
    assert digits == "not a config rlenvs-train can read: a number has more than 4,300 digits; quote it if it is text"
    (override,) = problems_of(None, ["trainer.seed=" + "9" * 5000])
    assert override.endswith("the value cannot be read (a number has more than 4,300 digits; quote it if it is text)")
    assert len(override) < 300


def test_cross_field_rules():
    problems = problems_of(
        None,
        [
            "trainer.train_batch_size=3",
            "trainer.num_generations=4",
            "trainer.micro_batch_size=5",
            "inference.backend=vllm-server",
            "trainer.max_tokens_per_turn=64",
            "trainer.max_episode_tokens=32",
            "trainer.algorithm.name=ppo",
        ],
    )
    assert problems == [
        "trainer.algorithm.name: 'ppo' is not one of: grpo",
        (
            "trainer.micro_batch_size: 5 does not divide the 12 episodes of a step (train_batch_size 3 x "
            "num_generations 4); use one of 1, 2, 3, 4, 6, 12, or change train_batch_size"
        ),
        (
            "trainer.placement.colocate_all: true runs generation inside the training processes, which needs "
            "inference.backend hf or vllm, not 'vllm-server'; set colocate_all=false to use a separate vLLM server"
        ),
        (
            "trainer.max_episode_tokens: 32 is less than max_tokens_per_turn 64, so one turn could overrun the "
            "episode; raise it to >= 64"
        ),
    ]
    (problem,) = problems_of(None, ["trainer.placement.colocate_all=false"])
    assert problem.startswith("trainer.placement.colocate_all: false means generation runs on a separate")
    assert "needs inference.backend vllm-server, not 'vllm'" in problem
    assert problems_of(None, ["inference.backend=hf", "inference.schedule=continuous"]) == [
        "inference.schedule: continuous needs a backend that streams (vllm or vllm-server); the hf backend "
        "generates in rounds: set inference.schedule=auto (or rounds), or inference.backend=vllm"
    ]
    assert load_config(None, ["inference.schedule=continuous"]).inference.schedule == "continuous"
    assert InferenceConfig().schedule == "auto"  # which runs in rounds on the hf backend:
    assert load_config(None, ["inference.backend=hf", "inference.schedule=auto"]).inference.schedule == "auto"
    assert problems_of(None, ["trainer.num_generations=1"]) == [
        "trainer.num_generations: must be >= 2, got 1 (GRPO's advantage compares the episodes of one task with each other)"
    ]


def test_cross_field_rules_skip_fields_that_are_already_wrong():
    # micro_batch_size 5 would not divide the default 64 episodes, but num_generations is the
    # mistake: one message, not a second one about the default that stood in for it.
    assert problems_of(None, ["trainer.num_generations=x", "trainer.micro_batch_size=16"]) == [
        "trainer.num_generations: expected an integer, got the string 'x'; write a number without quotes"
    ]


# --- saving -------------------------------------------------------------------------------------


def test_dump_and_load_give_back_an_equal_config(tmp_path):
    config = load_config(
        EXAMPLES / "quickstart.yaml",
        [
            "data.train_data=[~/a.parquet]",
            "trainer.max_turns=3",
            "trainer.learning_rate=1e-6",
            "data.num_train_tasks=null",
        ],
    )
    path = tmp_path / "run" / "config.yaml"
    dump_config(config, path)
    assert load_config(path) == config
    assert sorted(os.listdir(path.parent)) == ["config.yaml"]  # no temporary file left behind
    data = config_to_dict(config)
    assert yaml.safe_load(yaml.safe_dump(data)) == data  # plain types only
    assert data["data"]["train_data"] == [os.path.expanduser("~/a.parquet")]
    assert config_from_dict(data) == config
    dump_config(TrainConfig(), path)  # replaces the file
    assert load_config(path) == TrainConfig()


def test_config_from_dict_does_not_touch_its_input():
    data = {"data": {"env_kwargs": {"level": 2}}}
    config = config_from_dict(data, ["data.env_kwargs.max_turns=2"])
    assert config.data.env_kwargs == {"level": 2, "max_turns": 2}
    assert data == {"data": {"env_kwargs": {"level": 2}}}


# --- the machine --------------------------------------------------------------------------------


def with_(config: TrainConfig, **data) -> TrainConfig:
    return dataclasses.replace(config, data=dataclasses.replace(config.data, **data))


def test_unregistered_env_id_suggests_close_ones():
    config = with_(load_config(None, ["inference.backend=hf"]), env="rlenvs/GSM8k-v0")
    (problem,) = check_environment(config)
    assert problem.startswith("data.env: unknown env id 'rlenvs/GSM8k-v0'; did you mean rlenvs/GSM8K-v1")
    assert "rlenvs/Arithmetic-v1" in problem  # the list of rlenvs ids
    assert check_environment(with_(config, env="rlenvs:rlenvs/MATH-v1", env_kwargs={})) == []
    (problem,) = check_environment(with_(config, env="no_such_module:Foo-v0"))
    assert problem.startswith(
        "data.env: unknown env id 'no_such_module:Foo-v0': its module 'no_such_module' cannot be imported"
    )


def test_model_path_checks(tmp_path, monkeypatch):
    model = tmp_path / "model"
    model.mkdir()
    base = load_config(None, ["inference.backend=hf"])
    for ok in ("tiny", str(model)):
        assert check_environment(load_config(None, ["inference.backend=hf", f"trainer.policy.model.path={ok}"])) == []
    missing = str(tmp_path / "no-model")
    (problem,) = check_environment(load_config(None, ["inference.backend=hf", f"trainer.policy.model.path={missing}"]))
    assert problem.startswith(f"trainer.policy.model.path: model path {missing!r} does not exist")
    config = dataclasses.replace(
        base,
        trainer=dataclasses.replace(
            base.trainer,
            policy=dataclasses.replace(
                base.trainer.policy, model=dataclasses.replace(base.trainer.policy.model, path="./not-here")
            ),
        ),
    )
    assert check_environment(config)[0].startswith("trainer.policy.model.path: model path './not-here' does not exist")
    config = load_config(None, ["inference.backend=hf", "trainer.policy.model.path=not a model"])
    assert check_environment(config)[0].startswith(
        "trainer.policy.model.path: 'not a model' is neither an existing local folder nor a hub id"
    )
    (tmp_path / "models").mkdir()
    monkeypatch.chdir(tmp_path)  # "models/x" beside a models/ folder is a missing local folder, not a hub id
    config = load_config(None, ["inference.backend=hf", "trainer.policy.model.path=models/x"])
    assert check_environment(config)[0].startswith("trainer.policy.model.path: model path 'models/x' does not exist")


def test_a_hub_model_is_checked_to_be_fetchable(tmp_path, monkeypatch):
    """Offline, a hub id used to cost a minute of the loader's retries and a raw OSError: it
    must be in the local Hugging Face cache, said up front in one line with what to do."""
    from huggingface_hub import constants

    from rlenvs_train.model_path import hub_model_problem

    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    hub_model_problem.cache_clear()
    snapshot = tmp_path / "hub" / "models--gpt2" / "snapshots" / "abc123"  # the layout `hf download` writes
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}")
    (tmp_path / "hub" / "models--gpt2" / "refs").mkdir()
    (tmp_path / "hub" / "models--gpt2" / "refs" / "main").write_text("abc123")
    try:
        assert check_environment(load_config(None, ["inference.backend=hf", "trainer.policy.model.path=gpt2"])) == []
        (problem,) = check_environment(
            load_config(None, ["inference.backend=hf", "trainer.policy.model.path=Qwen/Qwen2.5-0.5B-Instruct"])
        )
        assert problem.startswith(
            "trainer.policy.model.path: hub model 'Qwen/Qwen2.5-0.5B-Instruct' is not in the local Hugging Face "
            "cache and HF_HUB_OFFLINE is set: download it where there is network (`hf download "
            "Qwen/Qwen2.5-0.5B-Instruct`)"
        )
        assert "\n" not in problem
    finally:
        hub_model_problem.cache_clear()


def test_missing_data_files(tmp_path):
    present = tmp_path / "train.parquet"
    present.write_bytes(b"PAR1")
    config = load_config(
        None,
        [
            "inference.backend=hf",
            f"data.train_data=[{present}, {tmp_path / 'gone.parquet'}]",
            "data.val_data=~/no/val.parquet",
        ],
    )
    assert check_environment(config) == [
        f"data.train_data: file {str(tmp_path / 'gone.parquet')!r} does not exist (write it with `rlenvs export`, or fix the path)",
        f"data.val_data: file {os.path.expanduser('~/no/val.parquet')!r} does not exist (write it with `rlenvs export`, or fix the path)",
    ]


def test_missing_packages(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name in ("vllm", "tensorboard") else real(name, *a)
    )
    config = load_config(None, ["logger=tensorboard"])
    assert check_environment(config) == [
        vllm_missing_message(),
        "logger: 'tensorboard' needs the tensorboard package: pip install tensorboard, or set logger=none",
    ]
    assert "or set inference.backend=hf" in vllm_missing_message()
    assert check_environment(load_config(None, ["inference.backend=hf"])) == []


def test_validate_reports_schema_and_machine_problems_together():
    config = dataclasses.replace(
        TrainConfig(),
        data=DataConfig(env="rlenvs/Nope-v0"),
        trainer=TrainerConfig(num_generations=1),
        inference=dataclasses.replace(TrainConfig().inference, backend="hf"),
    )
    with pytest.raises(ConfigError) as info:
        validate(config)
    assert len(info.value.problems) == 2
    assert info.value.problems[0].startswith("trainer.num_generations: must be >= 2, got 1")
    assert info.value.problems[1].startswith("data.env: unknown env id 'rlenvs/Nope-v0'")
    assert isinstance(info.value, ValueError)
    model = dataclasses.replace(config.trainer.policy.model, path=Path("/no/such/model"))  # not a str
    config = dataclasses.replace(
        config, trainer=TrainerConfig(policy=dataclasses.replace(config.trainer.policy, model=model))
    )
    with pytest.raises(ConfigError) as info:
        validate(config)
    assert (
        info.value.problems[0]
        == "trainer.policy.model.path: expected a string, got PosixPath('/no/such/model'); quote it if it is meant as text"
    )
    good = load_config(EXAMPLES / "quickstart.yaml")
    assert validate(good) is good


def test_rlenvs_train_reports_schema_and_machine_problems_in_one_error(tmp_path):
    """An unknown key, a wrongly typed value, an unregistered env id and a missing model folder:
    `rlenvs-train` names all four in one error (before: the schema problems, then, once those
    were fixed, the env id and the model path), and a key that is already wrong is not judged
    again on the default standing in for it."""
    missing_model = tmp_path / "no-model"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "rlenvs_train.cli",
            "trainer.epocs=3",
            "trainer.learning_rate=fast",
            "data.env=rlenvs/Arithmetc-v0",
            f"trainer.policy.model.path={missing_model}",
            "data.val_data=[3]",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = [line.removeprefix("  - ") for line in result.stderr.splitlines()[1:]]
    assert result.stderr.splitlines()[0].endswith("(5 problems):"), result.stderr
    assert [line.split(":", 1)[0] for line in lines] == [
        "data.val_data",
        "trainer.epocs",
        "trainer.learning_rate",
        "data.env",
        "trainer.policy.model.path",
    ]
    assert "did you mean rlenvs/Arithmetic-v1" in lines[3]
    assert f"model path {str(missing_model)!r} does not exist" in lines[4]
    assert not (tmp_path / "runs").exists()  # nothing was started


def test_load_config_checks_the_machine_only_when_asked():
    overrides = ["inference.backend=hf", "data.env=rlenvs/Nope-v0", "trainer.seed=-1"]
    assert [p.split(":")[0] for p in problems_of(None, overrides)] == ["trainer.seed"]
    assert [p.split(":")[0] for p in problems_of(None, overrides, check_machine=True)] == ["trainer.seed", "data.env"]
    assert problems_of(None, ["data.env=5", "inference.backend=hf"], check_machine=True) == [
        "data.env: expected a string, got an integer 5; quote it if it is meant as text"
    ]  # not also "the default is fine" or a second complaint about the same key


def test_a_gym_make_keyword_typo_in_env_kwargs_is_a_config_problem():
    config = load_config(None, ["inference.backend=hf", "data.env_kwargs.levl=2"])
    assert check_environment(config) == [
        "data.env_kwargs: rlenvs/Arithmetic-v1 got an unexpected keyword argument 'levl'; did you mean 'level'? "
        "(its keywords: level, max_turns, system_prompt, render_mode)"
    ]
    assert check_environment(load_config(None, ["inference.backend=hf", "data.env_kwargs.level=2"])) == []


def test_run_folders_are_ignored_by_git():
    """What rlenvs-train writes (runs/<name>/: checkpoints, models, metrics) never shows up as
    files to commit in a checkout."""
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    folders = {TrainConfig().trainer.output_dir, load_config(EXAMPLES / "quickstart.yaml").trainer.output_dir}
    assert all(folder.startswith("runs/") for folder in folders), folders
    for folder in folders:
        result = subprocess.run(["git", "check-ignore", "-q", f"{folder}/final-model/model.safetensors"], cwd=REPO)
        assert result.returncode == 0, f"{folder}/ is not ignored by .gitignore"


# --- env_workers ------------------------------------------------------------------------------


def test_env_workers_become_the_pools_keywords(tmp_path):
    assert pool_kwargs(load_config().env_workers) == {"executor": "thread", "max_workers": None, "step_timeout_s": None}
    text = (
        "env_workers:\n  kind: ray\n  max_workers: 6\n  step_timeout_s: 30\n"
        "  ray: {address: null, num_cpus: 0.5, resources: {sandbox: 1}}\n"
    )
    config = load_config(write(tmp_path, text))
    assert pool_kwargs(config.env_workers) == {
        "executor": "ray",
        "max_workers": 6,
        "step_timeout_s": 30,
        "ray_actor_options": {"num_cpus": 0.5, "resources": {"sandbox": 1}},
    }
    local = load_config(write(tmp_path, "env_workers: {executor: process, max_workers: 2}\n"))
    assert pool_kwargs(local.env_workers)["executor"] == "process"


def test_env_workers_problems_are_reported_together(tmp_path):
    problems = problems_of(write(tmp_path, "env_workers:\n  kind: k8s\n  step_timeout_s: 0\n  ray: {num_cpu: 1}\n"))
    assert len(problems) == 3, problems
    assert "env_workers.kind: 'k8s' is not one of: local, ray" in problems
    assert any("env_workers.step_timeout_s" in p for p in problems)
    assert any("num_cpu" in p and "num_cpus" in p for p in problems)
