"""rlenvs.core.procedural on its own: the seeding every family relies on, the checks a
family makes of itself, and the errors of the env mixin for families= and level=."""

from __future__ import annotations

import pickle
import zlib

import numpy as np
import pytest

from rlenvs.core.procedural import Family, Level, ProceduralEnv, task_rng


def _pair(rng: np.random.Generator, level: int = 0) -> tuple[int, int]:
    return int(rng.integers(1000)), level


def _one(rng: np.random.Generator) -> int:
    return int(rng.integers(1000))


ALPHA = Family("alpha", "two levels by one generator", {1: "small", 2: "large"}, _pair)
BETA = Family.of_levels("beta", "a generator per level", {2: Level("two", _one), 3: Level("three", _one)}, seed=7)


class Mixed(ProceduralEnv):
    env_name = "Mixed-v0"
    task_families = {"alpha": ALPHA, "beta": BETA}

    @classmethod
    def task_of(cls, family: str, level: int, index: int):
        raise AssertionError("not used here")


def test_the_seeding_is_what_the_envs_have_always_used() -> None:
    """Named families: the CRC-32 of the name; math's: its int seed. The pinned task hashes
    depend on exactly these streams."""
    assert task_rng("csv-column", 2, 5).integers(1 << 30) == np.random.default_rng(
        [zlib.crc32(b"csv-column"), 2, 5]
    ).integers(1 << 30)
    assert task_rng(1, 3, 4).integers(1 << 30) == np.random.default_rng([1, 3, 4]).integers(1 << 30)
    assert BETA.scenario(2, 0) == int(np.random.default_rng([7, 2, 0]).integers(1000))
    assert ALPHA.scenario(1, 0) == _pair(task_rng("alpha", 1, 0), 1)


def test_a_family_knows_its_levels_and_ids() -> None:
    assert BETA.levels == {2: "two", 3: "three"}
    assert ALPHA.task_id(2, 17, prefix="terminal") == "terminal/alpha/L2/17" and BETA.task_id(3, 0) == "beta/L3/0"
    for level in (1, 0, True, "2"):
        with pytest.raises(ValueError, match=r"family beta has no level .*: levels are \[2, 3\]"):
            BETA.scenario(level, 0)
    assert pickle.loads(pickle.dumps(BETA)).scenario(3, 5) == BETA.scenario(3, 5)  # no closures inside


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"name": "Has Space"}, "lower-case letters, digits and '-'"),
        ({"levels": {}}, "levels must map int level numbers"),
        ({"levels": {"1": "one"}}, "levels must map int level numbers"),
        ({"generate": "not a function"}, "generate must be a function"),
    ],
)
def test_a_malformed_family_is_refused_where_it_is_written(kwargs, error) -> None:
    fields = {"name": "gamma", "summary": "s", "levels": {1: "one"}, "generate": _pair, **kwargs}
    with pytest.raises((ValueError, TypeError), match=error):
        Family(**fields)


def test_the_mixin_names_what_is_valid() -> None:
    assert Mixed.choose_families(None) == ("alpha", "beta") and Mixed.choose_families("beta") == ("beta",)
    with pytest.raises(
        ValueError, match=r"unknown Mixed-v0 task families \['gamma'\]: choose from \['alpha', 'beta'\]"
    ):
        Mixed.choose_families(["alpha", "gamma"])
    with pytest.raises(ValueError, match="unknown Mixed-v0 task families"):
        Mixed.choose_families([])
    assert Mixed.check_level(np.int64(2)) == 2 and type(Mixed.check_level(np.int64(2))) is int
    with pytest.raises(ValueError, match=r"no level 3 for families \['alpha'\]: pass level= one of \[1, 2, 3\]"):
        Mixed.check_level(3)
    with pytest.raises(
        ValueError, match=r"Mixed-v0 has no level 1: pass level= one of \[2, 3\] \(2 = two; 3 = three\)"
    ):
        Mixed.check_level(1, ["beta"])
    with pytest.raises(TypeError, match="Mixed-v0 level must be an int, got float 2.0"):
        Mixed.check_level(2.0)
    source = Mixed.family_mix("mixed", None, 2, lambda name, level, index: (name, level, index))
    assert [source.get(i) for i in range(3)] == [("alpha", 2, 0), ("beta", 2, 0), ("alpha", 2, 1)]
    with pytest.raises(TypeError, match="has 2 families: use family_mix"):
        Mixed.level_source(2, lambda level, index: index)
