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
and print the new table with `python -m tests.project.test_task_hashes`. What a hash covers is
`rlenvs.testing.task_hashes`, the same machinery a user's package pins its envs with (the
`task_hashes` pytest fixture).
"""

from __future__ import annotations

import importlib
import json

import pytest

from rlenvs.core.procedural import ProceduralEnv
from rlenvs.envs.catalog import CATALOG
from rlenvs.testing.task_hashes import TASKS_PER_LEVEL, task_hashes


def procedural_classes() -> dict[str, type[ProceduralEnv]]:
    """Every catalog env that is a `ProceduralEnv`, by id: found, not listed here, so that a new
    env, family or level fails `test_every_family_and_level_is_pinned` until it is pinned."""
    found = {}
    for entry in CATALOG:
        module, _, name = entry.entry_point.partition(":")
        env = getattr(importlib.import_module(module), name)
        if isinstance(env, type) and issubclass(env, ProceduralEnv):
            found[entry.id] = env
    return found


def current_hashes() -> dict[str, dict[str, str]]:
    return {env_id: task_hashes(env) for env_id, env in procedural_classes().items()}


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
    "rlenvs/Terminal-v2": {
        "count-files/L1": "b998746a2f36d6148238af38e26fa38a12574a664dd2fb5251e64750a2043e6d",
        "count-files/L2": "4350783306b1bd8fe30ab4c0ef028dc5182b1494501bb9eed898b6d4b75d8a93",
        "largest-file/L1": "820f29c9fe76a18df9b4ddc3bceaf20a2690294d108980c1dd453ec8aa436e39",
        "largest-file/L2": "066073aec7753c6c537357c79f9f7eef1ff22358a2d549711e838e8420cb5797",
        "newer-files/L1": "b871da85bf4ae6b4cdc5a04240f16196334eddf23b5c68453131934b26b5ee13",
        "newer-files/L2": "bba46e6db1eb485c88b4549a51cb2bc31de043706cf1f0acb259a0473de699fb",
        "log-summary/L1": "5f49da305461bea84659c9a907ed578a8dee37358d0a09663533f1a1f3404a23",
        "log-summary/L2": "25cc04a0f6ffd10b7b60e641f00fe868539637cc0d454c3ab62d28be50abe07f",
        "permissions/L1": "4c1fd5cea3e749851e17de744ed6f9918f27cbb93f507775c2446097994d231a",
        "permissions/L2": "e761212b2f82c2a7b8155482c3aa703a0441bc98329d79de59d74a22e1dbecd5",
        "archive/L1": "be6cf1842cfe73975c29da3b184a18533de084673bd2c0e484b17b386c2f57d6",
        "archive/L2": "c6e53f12b22b074afd4ef718d954b0ac42fe1298a10bfd16df342a3267fc4f44",
        "archive/L3": "770a44cdc5f447476921b808e2c6e4fa6efc111562cfc1a6ca75d9896a9f0382",
        "csv-column/L1": "048154ed54804be20c83e50b12b91c83db800951c4116905d50f3d3ff6249a28",
        "csv-column/L2": "7da31a2cdf2a47947f351937828e78468c516a2a3f630bb15e154b654ec3fa69",
        "rename-files/L1": "31ca41e3be0b743a273c04006574cfc67c34792fa4b949ce354627bc2769ebb8",
        "rename-files/L2": "dcfa4f0f777618cb41897a767eb00a2a4bbfe4114a79210c877c2d5d0dd63a83",
        "fix-config/L1": "a5be54936a12cf9ffb4730538977f678a5b3c4c114bcc5f3cce7218ca830a6b4",
        "fix-config/L2": "9cdbd09fdb910729a0f730810dfdc8a09551f3b8b858bc919edf13bb6cc108f2",
        "make-tree/L1": "1df2076870c05d4a23ec277b68e0846cf81f4f63b4f3db468e08b1f87c8c6f3c",
        "make-tree/L2": "c77ac567a1851f6ca2fa5c3b9f51152dee4d517ed2367316c58c537929eb53e2",
        "dedupe-sort/L1": "222caa96291152d076e5b370f49f6d7ebce73407b2ff5e4aaeb5c96716dfefb1",
        "dedupe-sort/L2": "5ddcc44ec4cf1c729345c0daf18f72e240104de8f051c65608a1a633b174b474",
        "replace-text/L1": "cc869c44e6614aff3f44541c610ad8de8c885cc21f8ff85389df37932fec1ce5",
        "replace-text/L2": "483155680246e883d69c56251960283b577a26cdec413e5e0f37e2456f02dcc3",
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
    assert found == pinned, (
        "families or levels were added or removed: pin them (python -m tests.project.test_task_hashes)"
    )
    catalog = {entry.id for entry in CATALOG}
    assert set(PINNED) <= catalog, f"pinned envs missing from the catalog: {sorted(set(PINNED) - catalog)}"


@pytest.mark.parametrize("env_id", sorted(PINNED))
def test_generated_tasks_are_unchanged(env_id: str) -> None:
    now = current_hashes().get(env_id, {})
    moved = sorted(key for key, digest in PINNED[env_id].items() if now.get(key) != digest)
    assert not moved, (
        f"{env_id}: the first {TASKS_PER_LEVEL} tasks of {moved} are no longer what they were. If the change is "
        "meant, bump the env's -vN and re-pin (python -m tests.project.test_task_hashes); if not, the refactor changed behaviour"
    )


if __name__ == "__main__":
    print("PINNED: dict[str, dict[str, str]] = {")
    for env_id, levels in current_hashes().items():
        print(f"    {json.dumps(env_id)}: {{")
        for key, digest in levels.items():
            print(f"        {json.dumps(key)}: {json.dumps(digest)},")
        print("    },")
    print("}")
