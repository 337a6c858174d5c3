import pytest

from rlenvs.evaluation.tasks import choose_task_indices


def test_a_sized_split_runs_every_task_once_in_order() -> None:
    assert choose_task_indices(5, None, 0, "x") == [0, 1, 2, 3, 4]


def test_episodes_draws_distinct_tasks_the_same_for_a_seed() -> None:
    drawn = choose_task_indices(164, 100, 7, "x")
    assert len(set(drawn)) == 100 and drawn == sorted(drawn) and all(0 <= i < 164 for i in drawn)
    assert drawn == choose_task_indices(164, 100, 7, "x") != choose_task_indices(164, 100, 8, "x")


def test_a_procedural_source_draws_distinct_indices_and_needs_episodes() -> None:
    assert len(set(choose_task_indices(None, 50, 0, "x"))) == 50
    with pytest.raises(ValueError, match="rlenvs/Arithmetic-v1 is procedural.*pass --episodes N"):
        choose_task_indices(None, None, 0, "rlenvs/Arithmetic-v1")


def test_more_episodes_than_tasks_is_an_error_naming_the_split() -> None:
    with pytest.raises(ValueError, match="--episodes 165 is more than the 164 tasks of H split=test.*--samples"):
        choose_task_indices(164, 165, 0, "H split=test")
