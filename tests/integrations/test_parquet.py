"""`rlenvs export` and `rlenvs.integrations.parquet`: real Parquet files, read back with pyarrow, and the
round trip a training driver makes (`read_exported` + `rebuild_check`)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import rlenvs
from rlenvs.integrations.parquet import (
    EXPORT_SCHEMA,
    ExportedTask,
    atomic_path,
    export_env,
    read_exported,
    rebuild_check,
)
from tests.conftest import GSM8K_TEST, SHARED_DATA

ARITHMETIC = "rlenvs/Arithmetic-v1"
GSM8K = "rlenvs/GSM8K-v1"
GSM8K_TRAIN = SHARED_DATA / "gsm8k" / "train.jsonl"


def rlenvs_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "rlenvs.cli", *args], check=False, capture_output=True, text=True, timeout=300
    )


def gold_answers(path: Path) -> list[str]:
    return [json.loads(line)["answer"].rsplit("####", 1)[1].strip() for line in path.read_text().splitlines()]


def rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def assert_rows_are_the_env_tasks(path: Path, env_id: str, split: str) -> None:
    """Every row's prompt is what reset on its task_index poses, its ground truth is the
    task's answer, and its extra_info says how to pose it again."""
    table = pq.read_table(path)
    assert table.schema.equals(EXPORT_SCHEMA), table.schema
    envs: dict[str, gym.Env] = {}
    for row in table.to_pylist():
        extra = row["extra_info"]
        assert row["data_source"] == row["env_class"] == extra["env_id"] == env_id
        assert extra["split"] == split and extra["rlenvs_version"] == rlenvs.__version__
        kwargs = json.loads(extra["env_kwargs"])
        env = envs.setdefault(extra["env_kwargs"], gym.make(env_id, **kwargs))
        _, info = env.reset(options={"task_index": extra["task_index"]})
        assert row["prompt"] == info["messages"]
        assert extra["task_id"] == info["task_id"]
        assert row["reward_spec"] == {"method": "rule", "ground_truth": env.unwrapped.task.answer}
        assert row["reward_model"] == {"style": "rule", "ground_truth": env.unwrapped.task.answer}
    for env in envs.values():
        env.close()


# --- a procedural env ---------------------------------------------------------------------------


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
def test_cli_exports_a_procedural_env_with_disjoint_seeded_splits(tmp_path) -> None:
    result = rlenvs_cli(
        "export",
        ARITHMETIC,
        "--output-dir",
        str(tmp_path),
        "--num-train",
        "20",
        "--num-val",
        "5",
        "--seed",
        "1",
        "--env-arg",
        "level=2",
    )
    assert result.returncode == 0, result.stderr
    assert f"train: {tmp_path / 'train.parquet'} (20 rows)" in result.stdout
    assert f"validation: {tmp_path / 'validation.parquet'} (5 rows)" in result.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.parquet", "validation.parquet"]  # no temp files
    train, val = rows(tmp_path / "train.parquet"), rows(tmp_path / "validation.parquet")
    assert len(train) == 20 and len(val) == 5
    assert_rows_are_the_env_tasks(tmp_path / "train.parquet", ARITHMETIC, "train")
    assert_rows_are_the_env_tasks(tmp_path / "validation.parquet", ARITHMETIC, "validation")
    train_ids = {r["extra_info"]["task_id"] for r in train}
    val_ids = {r["extra_info"]["task_id"] for r in val}
    assert len(train_ids) == 20 and len(val_ids) == 5 and not train_ids & val_ids
    assert all(json.loads(r["extra_info"]["env_kwargs"]) == {"level": 2} for r in train + val)
    # Drawn from the whole index range, not 0..24.
    assert max(r["extra_info"]["task_index"] for r in train) > 10**6


def test_api_matches_the_cli_and_is_reproducible(tmp_path) -> None:
    rlenvs_cli(
        "export",
        ARITHMETIC,
        "--output-dir",
        str(tmp_path / "cli"),
        "--num-train",
        "20",
        "--num-val",
        "5",
        "--seed",
        "1",
    )
    paths = export_env(ARITHMETIC, tmp_path / "api", num_train=20, num_val=5, seed=1)
    assert paths == {"train": tmp_path / "api" / "train.parquet", "validation": tmp_path / "api" / "validation.parquet"}
    for name in ("train.parquet", "validation.parquet"):
        assert rows(tmp_path / "cli" / name) == rows(tmp_path / "api" / name)
    # The train draw does not depend on how many validation tasks are drawn after it.
    export_env(ARITHMETIC, tmp_path / "more_val", num_train=20, num_val=50, seed=1)
    assert rows(tmp_path / "more_val" / "train.parquet") == rows(tmp_path / "api" / "train.parquet")
    val_ids = {r["extra_info"]["task_id"] for r in rows(tmp_path / "more_val" / "validation.parquet")}
    train_ids = {r["extra_info"]["task_id"] for r in rows(tmp_path / "api" / "train.parquet")}
    assert len(val_ids) == 50 and not val_ids & train_ids


def test_without_a_seed_tasks_come_in_order_and_validation_follows_train(tmp_path) -> None:
    paths = export_env(ARITHMETIC, tmp_path, num_train=4, num_val=3)
    assert [r["extra_info"]["task_index"] for r in rows(paths["train"])] == [0, 1, 2, 3]
    assert [r["extra_info"]["task_index"] for r in rows(paths["validation"])] == [4, 5, 6]


def test_validation_file_is_written_even_when_empty(tmp_path) -> None:
    paths = export_env(ARITHMETIC, tmp_path, num_train=3)
    table = pq.read_table(paths["validation"])
    assert table.num_rows == 0 and table.schema.equals(EXPORT_SCHEMA)


# --- a data-backed env ----------------------------------------------------------------------------


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
def test_cli_exports_gsm8k_train_and_test_splits(tmp_path) -> None:
    result = rlenvs_cli(
        "export",
        GSM8K,
        "--output-dir",
        str(tmp_path),
        "--train-split",
        "train",
        "--val-split",
        "test",
        "--num-train",
        "50",
        "--num-val",
        "20",
        "--seed",
        "3",
    )
    assert result.returncode == 0, result.stderr
    train, val = rows(tmp_path / "train.parquet"), rows(tmp_path / "validation.parquet")
    assert len(train) == 50 and len(val) == 20
    assert_rows_are_the_env_tasks(tmp_path / "train.parquet", GSM8K, "train")
    assert_rows_are_the_env_tasks(tmp_path / "validation.parquet", GSM8K, "validation")
    assert {json.loads(r["extra_info"]["env_kwargs"])["split"] for r in train} == {"train"}
    assert {json.loads(r["extra_info"]["env_kwargs"])["split"] for r in val} == {"test"}
    # The ground truth is the number after "####" in the data file's row.
    train_gold, test_gold = gold_answers(GSM8K_TRAIN), gold_answers(GSM8K_TEST)
    assert all(r["reward_spec"]["ground_truth"] == train_gold[r["extra_info"]["task_index"]] for r in train)
    assert all(r["reward_spec"]["ground_truth"] == test_gold[r["extra_info"]["task_index"]] for r in val)


def test_api_takes_every_task_of_a_split_by_default(tmp_path) -> None:
    paths = export_env(GSM8K, tmp_path, train_split="train", val_split="test", num_train=50)
    val = rows(paths["validation"])
    test_gold = gold_answers(GSM8K_TEST)
    assert [r["extra_info"]["task_index"] for r in val] == list(range(len(test_gold)))
    assert [r["reward_spec"]["ground_truth"] for r in val] == test_gold
    assert len(rows(paths["train"])) == 50


def test_validation_from_the_train_split_leaves_the_rest_for_training(tmp_path) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text("".join(GSM8K_TEST.read_text().splitlines(keepends=True)[:30]))
    paths = export_env(GSM8K, tmp_path / "out", env_kwargs={"data_files": str(data)}, num_val=10, seed=0)
    train, val = rows(paths["train"]), rows(paths["validation"])
    indices = [r["extra_info"]["task_index"] for r in train + val]
    assert len(train) == 20 and len(val) == 10 and sorted(indices) == list(range(30))


# --- reading back -------------------------------------------------------------------------------


def test_read_exported_and_rebuild_check_round_trip(tmp_path) -> None:
    arithmetic = export_env(ARITHMETIC, tmp_path / "a", num_train=20, num_val=5, seed=1, env_kwargs={"level": 3})
    tasks = read_exported([arithmetic["train"], arithmetic["validation"]], env_id=ARITHMETIC)
    assert len(tasks) == 25 and [t.split for t in tasks] == ["train"] * 20 + ["validation"] * 5
    first = rows(arithmetic["train"])[0]
    assert tasks[0] == ExportedTask(
        env_id=ARITHMETIC,
        env_kwargs={"level": 3},
        task_index=first["extra_info"]["task_index"],
        task_id=first["extra_info"]["task_id"],
        prompt=first["prompt"],
        split="train",
    )
    rebuild_check(tasks)

    gsm8k = export_env(GSM8K, tmp_path / "g", train_split="train", val_split="test", num_train=50, num_val=20, seed=2)
    tasks = read_exported(str(gsm8k["validation"]), env_id="rlenvs:" + GSM8K)  # the module prefix names the same env
    assert len(tasks) == 20 and all(t.env_kwargs == {"split": "test"} for t in tasks)
    rebuild_check(tasks)


def test_rebuild_check_fails_when_the_data_changed_since_export(tmp_path) -> None:
    data = tmp_path / "rows.jsonl"
    lines = GSM8K_TEST.read_text().splitlines(keepends=True)[:10]
    data.write_text("".join(lines))
    paths = export_env(GSM8K, tmp_path / "out", env_kwargs={"data_files": str(data)}, num_train=10)
    tasks = read_exported(paths["train"])
    rebuild_check(tasks)

    data.write_text("".join(lines[1:] + lines[:1]))  # same ids (row numbers), other problems
    with pytest.raises(
        ValueError, match=r"10 of 10 exported rlenvs/GSM8K-v1 tasks .* another prompt now.*run `rlenvs export` again"
    ):
        rebuild_check(tasks)
    data.write_text("".join(lines[:4]))  # rows removed
    with pytest.raises(
        ValueError, match=r"6 of 10 exported .* task_index 4 \(task_id .gsm8k/train/4.\) no longer exists"
    ):
        rebuild_check(tasks)


def test_rebuild_check_names_a_task_id_that_changed(tmp_path) -> None:
    paths = export_env(ARITHMETIC, tmp_path, num_train=2)
    task = read_exported(paths["train"])[1]
    stale = ExportedTask(task.env_id, task.env_kwargs, task.task_index, "arithmetic/L1/999", task.prompt, task.split)
    with pytest.raises(
        ValueError, match=r"task_index 1 was task_id 'arithmetic/L1/999' at export, is 'arithmetic/L1/1' now"
    ):
        rebuild_check([stale])


def test_read_exported_refuses_a_missing_file(tmp_path) -> None:
    missing = tmp_path / "train.parquet"
    with pytest.raises(FileNotFoundError, match=rf"{missing}.*does not exist.*rlenvs export"):
        read_exported(missing)
    with pytest.raises(FileNotFoundError, match="is a folder"):
        read_exported(tmp_path)


def test_read_exported_refuses_a_file_that_is_not_parquet(tmp_path) -> None:
    path = tmp_path / "train.parquet"
    path.write_text('{"prompt": "not parquet"}\n')
    with pytest.raises(ValueError, match=rf"{path}.* is not a Parquet file.*rlenvs export"):
        read_exported(path)


def test_read_exported_names_the_missing_columns(tmp_path) -> None:
    path = tmp_path / "other.parquet"
    pq.write_table(pa.table({"prompt": [[{"role": "user", "content": "2 + 2?"}]], "answer": ["4"]}), path)
    with pytest.raises(
        ValueError, match=rf"{path}.* lacks the column\(s\) extra_info: it must come from `rlenvs export`"
    ):
        read_exported(path)

    # extra_info present, but without the fields that pose the task again.
    partial = tmp_path / "partial.parquet"
    extra = [{"task_index": 0, "task_id": "arithmetic/L1/0", "split": "train"}]
    pq.write_table(pa.table({"prompt": [[{"role": "user", "content": "2 + 2?"}]], "extra_info": extra}), partial)
    with pytest.raises(
        ValueError, match=r"lacks the column\(s\) extra_info.env_id, extra_info.env_kwargs, extra_info.rlenvs_version"
    ):
        read_exported(partial)


def test_read_exported_refuses_another_envs_file(tmp_path) -> None:
    paths = export_env(ARITHMETIC, tmp_path, num_train=3)
    with pytest.raises(ValueError, match=r"holds tasks of rlenvs/Arithmetic-v1 \(3 rows\), not rlenvs/GSM8K-v1"):
        read_exported(paths["train"], env_id=GSM8K)


# --- bad input ------------------------------------------------------------------------------------


@pytest.mark.slow  # among the slowest of the fast suite (docs/benchmarks.md)
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["rlenvs/Nope-v0", "--num-train", "3"], "unknown env id 'rlenvs/Nope-v0'"),
        ([ARITHMETIC], "generates tasks without end: pass --num-train N"),
        ([ARITHMETIC, "--num-train", "3", "--val-split", "test"], "takes no split argument"),
        ([ARITHMETIC, "--num-train", "0"], "num_train must be an int >= 1"),
        ([ARITHMETIC, "--num-train", "3", "--env-arg", "nonsense"], "must look like KEY=VALUE"),
        pytest.param(
            [GSM8K, "--num-train", "8000", "--env-arg", "split=test"],
            "--num-train 8000 but rlenvs/GSM8K-v1 has 1319 tasks",
            marks=pytest.mark.full_data,
        ),
        ([GSM8K, "--env-arg", "split=test", "--train-split", "train"], "both choose a split"),
        ([GSM8K, "--train-split", "nope"], "unknown GSM8K split 'nope'"),
    ],
)
def test_cli_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path, args, message) -> None:
    result = rlenvs_cli("export", *args, "--output-dir", str(tmp_path / "out"))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("rlenvs export: error: ") and message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_a_failed_export_leaves_the_previous_files_alone(tmp_path) -> None:
    paths = export_env(ARITHMETIC, tmp_path, num_train=3)
    before = {split: path.read_bytes() for split, path in paths.items()}
    with pytest.raises(ValueError):
        export_env(ARITHMETIC, tmp_path, num_train=3, env_kwargs={"level": 99})
    assert {split: path.read_bytes() for split, path in paths.items()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.parquet", "validation.parquet"]


def test_atomic_path_keeps_the_old_file_when_writing_fails(tmp_path) -> None:
    path = tmp_path / "train.parquet"
    path.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(path) as temporary:
        temporary.write_text("half")
        raise RuntimeError("interrupted")
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["train.parquet"]


def test_env_kwargs_must_be_json(tmp_path) -> None:
    with pytest.raises(ValueError, match="not JSON"):
        export_env(ARITHMETIC, tmp_path, num_train=3, env_kwargs={"level": object()})
