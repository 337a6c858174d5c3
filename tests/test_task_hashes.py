"""Every procedural family and level, pinned byte for byte: a sha256 of its first tasks.

Why: a task id such as `terminal/csv-column/L2/17` names one task forever (GRPO groups, eval
runs, exported data sets and users' notes all rely on it), so a refactor of the generators
or of the seeding must leave every generated task exactly as it was, and a change that does
mean to alter what a generator outputs must say so by bumping the env's `-vN`. The hashes
below are that promise made checkable: each covers the whole content of the first
`TASKS_PER_LEVEL` tasks (id, prompt, answer, solution, files with modes and times,
expectations, sheets, expected cells, perturbation steps, and for a spreadsheet task its
`truth`, both as written and as its values on the verdict's first changed copy of the data).

A failure names the families whose tasks moved. If that was intended, bump the env's version
and print the new table with `python -m tests.test_task_hashes`.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import functools
import hashlib
import importlib
import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import pytest

from rlenvs.core.procedural import ProceduralEnv
from rlenvs.core.task import Task
from rlenvs.envs.catalog import CATALOG

TASKS_PER_LEVEL = 8


def canonical(value: Any) -> Any:
    """`value` as plain JSON data that says exactly what it is: types are named (so 1, 1.0,
    True and "1" differ), floats by `repr` (every bit), bytes in hex, mappings in their own
    order (a workbook's sheet order is content). Callables are named by qualified name, not
    module, so that moving a family's module is not a change of its tasks."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, enum.Enum):
        return {"enum": f"{type(value).__name__}.{value.name}"}
    if isinstance(value, int):
        return {"int": str(value)} if type(value) is not int else value
    if isinstance(value, float):
        return {"float" if type(value) is float else type(value).__name__: repr(float(value))}
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if isinstance(value, (dt.datetime, dt.date, dt.time, dt.timedelta)):
        return {type(value).__name__: str(value)}
    if isinstance(value, (list, tuple)):
        return [canonical(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return {"set": sorted(json.dumps(canonical(item), sort_keys=True) for item in value)}
    if isinstance(value, Mapping):
        return {"map": [[canonical(key), canonical(item)] for key, item in value.items()]}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {field.name: canonical(getattr(value, field.name)) for field in dataclasses.fields(value)}
        return {"type": type(value).__name__, "fields": fields}
    if isinstance(value, functools.partial):
        keywords = {key: canonical(item) for key, item in sorted(value.keywords.items())}
        return {"partial": canonical(value.func), "args": canonical(value.args), "keywords": keywords}
    if callable(value) and hasattr(value, "__qualname__"):
        return {"function": value.__qualname__}
    if type(value).__module__ == "numpy":
        return canonical(value.item())
    raise TypeError(f"no canonical form for {type(value).__name__} {value!r}: teach `canonical` its content")


def task_record(task: Task) -> Any:
    """Everything that defines `task`, plus, for a task that recomputes its targets, what its
    `truth` says on changed data: `truth` is code, and its spelling alone would not show an
    edit of the function it names."""
    record = canonical(task)
    truth = getattr(task, "truth", None)
    if truth is not None:
        from rlenvs.envs.spreadsheet.verdict import changed_data

        changed, rand_seed = changed_data(task, seed=0, round_=0)
        record = {
            "task": record,
            "changed": canonical(changed),
            "rand_seed": rand_seed,
            "truth": canonical(truth(changed)),
        }
    return record


def levels_digest(task_at: Callable[[int], Task]) -> str:
    """The sha256 of the first TASKS_PER_LEVEL tasks of one family at one level."""
    digest = hashlib.sha256()
    for index in range(TASKS_PER_LEVEL):
        digest.update(json.dumps(task_record(task_at(index)), sort_keys=True, ensure_ascii=True).encode())
        digest.update(b"\n")
    return digest.hexdigest()


def procedural_levels() -> Iterator[tuple[str, str, int, Callable[[int], Task]]]:
    """(env id, family, level, index -> task) for every family and level of every catalog
    env that is a `ProceduralEnv`, built as the env builds them (`task_of`): found, not
    listed here, so that a new env, family or level fails
    `test_every_family_and_level_is_pinned` until it is pinned."""
    for entry in CATALOG:
        module, _, name = entry.entry_point.partition(":")
        env = getattr(importlib.import_module(module), name)
        if isinstance(env, type) and issubclass(env, ProceduralEnv):
            for family_name, family in env.task_families.items():
                for level in family.levels:
                    yield entry.id, family_name, level, functools.partial(env.task_of, family_name, level)


def current_hashes() -> dict[str, dict[str, str]]:
    table: dict[str, dict[str, str]] = {}
    for env_id, family, level, task_at in procedural_levels():
        table.setdefault(env_id, {})[f"{family}/L{level}"] = levels_digest(task_at)
    return table


PINNED: dict[str, dict[str, str]] = {
    "rlenvs/Arithmetic-v1": {
        "arithmetic/L1": "3d502b8a7461081ae1b4014617228a6d5ed9ceec19bcb9c349b60f2f613a4893",
        "arithmetic/L2": "667c2b0dc43518bb5052225311b2a09f73cb3d8116439b95d1264d8b4aac158a",
        "arithmetic/L3": "72cd4a0303dc559d0ef247263cba991fa321da3830adaf732b5508b91d8dfc1d",
        "arithmetic/L4": "cfbb6437394a19ff8e9c5dd6edc0497bb4d6629010334cc63224bc4add371506",
        "arithmetic/L5": "e726f2635f6107504c9966ac592d605974dbad6af6c785ebddfb9bb88d9ba2d9",
    },
    "rlenvs/Arithmetic-Tool-v1": {
        "arithmetic/L1": "3d502b8a7461081ae1b4014617228a6d5ed9ceec19bcb9c349b60f2f613a4893",
        "arithmetic/L2": "667c2b0dc43518bb5052225311b2a09f73cb3d8116439b95d1264d8b4aac158a",
        "arithmetic/L3": "72cd4a0303dc559d0ef247263cba991fa321da3830adaf732b5508b91d8dfc1d",
        "arithmetic/L4": "cfbb6437394a19ff8e9c5dd6edc0497bb4d6629010334cc63224bc4add371506",
        "arithmetic/L5": "e726f2635f6107504c9966ac592d605974dbad6af6c785ebddfb9bb88d9ba2d9",
    },
    "rlenvs/Algebra-v1": {
        "algebra/L1": "8d1e558a422ab562549882429bbc8a3ccf679dffd20573d200b3d0368b84b209",
        "algebra/L2": "91a0957fba998a1b7b74615ce9732fb8b86dd1aa19940383a25c4ef370c0a6fa",
        "algebra/L3": "00848fad6af123c5b59a75bdbbb5701c5248ee229767f9bad5d28962ee0a19aa",
        "algebra/L4": "c6c2e1ac0dc347fdddb4a36be4c1d737b011f364757794bc8383dee03e29272b",
        "algebra/L5": "f705dc0152e5faa70c22557caec61adb77d1a73632e3ac9edac687c7c95bf1bb",
    },
    "rlenvs/Terminal-v1": {
        "count-files/L1": "f20fc62010914368e3dbfc8cc49e0e187d984bac24cbe981494701143962e8da",
        "count-files/L2": "2def7722488d710df342efe3125e31e6d70db9be8c5cc473a3a17bceacc32f33",
        "largest-file/L1": "f0dbdca3457c8a7bf0f39a8150f396049ea220142753e268416e1a07596d0622",
        "largest-file/L2": "e2774d5f086dbb8cff93c779f0a9ec4e3aba1cf4eb56baf6ff88cd75662e7cc4",
        "newer-files/L1": "1938e2c58f5d5406694700e89a2be2578f4904d01c9c8ef5e840fbc36e18cdba",
        "newer-files/L2": "155a85d8190d79c6010e156a7a2c6bd43d0a10fe70ebca0e4af94e19e5be38f7",
        "log-summary/L1": "24e7759dcebeb97f9f9248100b0decb2c56b75a201117d7614f8b08b04e6c954",
        "log-summary/L2": "0f62654960e7fa6c05eb40a48550df47914537e3e35226313161c9d0f1772eef",
        "permissions/L1": "abd757d2698d24de3a1b13892b4e8c79806f6632703b341d6eb95e1d2c4e9147",
        "permissions/L2": "94479f47f4d754562e3c3d0c883fde3b86a89d442788e80308527e4a4217c415",
        "archive/L1": "2b7329b868580e560ee2848d576cdf8ccbaacdf4288464614aff669bc2022e74",
        "archive/L2": "a223da630605ec7f48504f55b6622da1940e31f50a4f6d28a7b3dba3c63bb201",
        "archive/L3": "667dc5af3354e5ca4f894097efee7e32e796677dc6e6895d6e1010f3e3acacdf",
        "csv-column/L1": "d9061f0188fca8551f8adb67e2fc6afd0be6d07ad91fe54f5c57be46cfe376db",
        "csv-column/L2": "baf4cde866e03de5f716d640669a3087b2e299a9c14472366041ed09c2a85a92",
        "rename-files/L1": "aa65a5848879dd3972d3f783ef27a745739478615fd081c0dcfee25d5e55826f",
        "rename-files/L2": "9a01804b99b3f9db999f37de33203279d8ea4be5aa238f65c53d0904c9f531a4",
        "fix-config/L1": "b92f6424fdfcef5aa16ab3e0eeed2d1fc7071d4cd369a1d41b7fd96c2e259a78",
        "fix-config/L2": "e64827ca82ec1c57669212a23a37289c265fb006b3fc3042b7ee2995d4cf79b7",
        "make-tree/L1": "00e38e91f90a1824161b21163a619973718a16ebf90706df329037ba8531336e",
        "make-tree/L2": "ccbf8e517e972261a24d885c011a8b52cd89f74fc8233992e093baf58041ee30",
        "dedupe-sort/L1": "92342699d04d91476a10345bdcaae690ab7f6f3fc2198b4875ea32b2907e68b1",
        "dedupe-sort/L2": "12f3e6e0077127dacb64e4eafeb4cd256e710949eb1939920f87e93d88416ff3",
        "replace-text/L1": "401c15891afe5dc4a1afed8ab2ca2dc7c5a955c17313fd819e9ba9bc8ee60011",
        "replace-text/L2": "f4dee9b39328cd9e4fbc075af96c8918d91a10f7a5d6ab1a8c7324f77be55c2f",
    },
    "rlenvs/Spreadsheet-v1": {
        "row-formula/L1": "814cfeb789c649353a85212ef77b7b551aff53fe830ff2b0944b7bd05a6c0521",
        "row-formula/L2": "29e97bb4a558804040b502d6695611af5510296deb26cb6031f4bd74fc91187b",
        "group-totals/L1": "a3d4062eabafcb2eaa56257499b05dd27dbaeed7ac5f7a3e86f3682dff1aa5c8",
        "group-totals/L2": "b58db5c2f6b930d92ed3585ec2b536e3641b5ef81ff28dc258b82e7ebd1f7e22",
        "lookup/L1": "0465d6999106155b1bcf2507413e3f77591f6a6e4088275c0a36af010e7b5567",
        "lookup/L2": "87e242eb8de2fec603c86801a3eeef56a30533350a8c87945c4fcf578a7cb53e",
        "percent-of-total/L1": "2b87a758ff73bd05d17d6bbd4748e304bac18291816b6edac56e871a1a76858f",
        "percent-of-total/L2": "094ac366233200a9d62cbf8fd2630feb2e98e36c73f175abe5bf16b25a4573c6",
        "running-total/L1": "107f2c9eebced811037956da8c472ba913b2019b19dd6f8d243a91d0c4433cab",
        "running-total/L2": "594e1f45d95b4d5f144d76236241a5cca78527c86883e2ce7d2c6fbd829bd255",
        "conditional-label/L1": "4c6a6be04bdd879455a2f2261e73246bc441c593bf5322f027583ef0ef91037a",
        "conditional-label/L2": "010deb312be20e3066d922f8959f611d20c05aa29f33c54d1ea29199ef75ed43",
        "sort-rows/L1": "ebad3ed5a0f321acd9d4deb31e34b94769a7321b93989c2fc235341d4e71b279",
        "sort-rows/L2": "f693948896744f84798960487bf5aa4ff73489c83f5f4685b1c3e3dd1187b5ed",
        "dedupe-rows/L1": "de005d3dc2f604a091a6740681851c2f8628d39d938b91353f47e1f41b12bed5",
        "dedupe-rows/L2": "1a30e0fe6174e2096712ecc1e69ad959ec94fd2fb8f8c9bab26afca7ca0e6717",
        "fill-missing/L1": "a18b1200ece2e4d2659f0ef6fbe3208b85b63d4e8c66acf6dff4da577501cd11",
        "fill-missing/L2": "da880632b035d1f23706a909a5c08afa9075adcb56bba2647f76b429d490bc53",
        "rank/L1": "808c7169ca1d8131e452b30add7e472cec039862ea8c6b6ccb60beeb024d62ff",
        "rank/L2": "721c6fe5e58572832a94fe5d7beb978853ef88cd73f06f84626cb5500f894644",
        "date-diff/L1": "cb4c982bf9970725e181f8e9f81e9b77b0478282f48fbb970f8dc2cc24beb26e",
        "date-diff/L2": "2efd9d0a3df391d8a7a2a0a24969e327bb73f6184cdf3696d6977f231df0dfc4",
        "clean-text/L1": "d71c588079914452b636ff2e437a4bc94c3cb800a5ea8d2a53002689040e855c",
        "clean-text/L2": "73038b1fc08d4ea38657016f26384178db66c0044f9ee566a48027750d7d85c7",
    },
}


def test_every_family_and_level_is_pinned() -> None:
    found = {env_id: sorted(levels) for env_id, levels in current_hashes().items()}
    pinned = {env_id: sorted(levels) for env_id, levels in PINNED.items()}
    assert found == pinned, "families or levels were added or removed: pin them (python -m tests.test_task_hashes)"
    catalog = {entry.id for entry in CATALOG}
    assert set(PINNED) <= catalog, f"pinned envs missing from the catalog: {sorted(set(PINNED) - catalog)}"


@pytest.mark.parametrize("env_id", sorted(PINNED))
def test_generated_tasks_are_unchanged(env_id: str) -> None:
    now = current_hashes().get(env_id, {})
    moved = sorted(key for key, digest in PINNED[env_id].items() if now.get(key) != digest)
    assert not moved, (
        f"{env_id}: the first {TASKS_PER_LEVEL} tasks of {moved} are no longer what they were. If the change is "
        "meant, bump the env's -vN and re-pin (python -m tests.test_task_hashes); if not, the refactor changed behaviour"
    )


def test_canonical_form_tells_apart_what_json_would_merge() -> None:
    """1, 1.0, True and "1" are different cell values; two sheet orders are two workbooks."""
    forms = [canonical(item) for item in (1, 1.0, True, "1", b"1", dt.date(2024, 1, 1), "2024-01-01")]
    assert len({json.dumps(form, sort_keys=True) for form in forms}) == len(forms)
    assert canonical({"A": 1, "B": 2}) != canonical({"B": 2, "A": 1})
    assert canonical(0.1 + 0.2) != canonical(0.3)


if __name__ == "__main__":
    print("PINNED: dict[str, dict[str, str]] = {")
    for env_id, levels in current_hashes().items():
        print(f"    {json.dumps(env_id)}: {{")
        for key, digest in levels.items():
            print(f"        {json.dumps(key)}: {json.dumps(digest)},")
        print("    },")
    print("}")
