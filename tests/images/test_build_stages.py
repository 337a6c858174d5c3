"""The Dockerfile subset real task corpora use beyond one stage, built by rlenvs without Docker
(rlenvs.images): multi-stage builds with `COPY --from` a stage or a mapped image, RUN and COPY
heredocs as BuildKit's dockerfile:1 syntax reads them; a Harbor folder with a multi-stage
Dockerfile loads and its reference scores 1 on bubblewrap and on Docker's own build."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from rlenvs.envs.terminal.env import TerminalEnv
from rlenvs.envs.terminal.folders import TaskFolderError, load_task_folders
from rlenvs.images.build import ImageBuildError, build_image
from rlenvs.images.dockerfile import instructions
from rlenvs.images.layers import lookup

DATA = Path(__file__).parents[1] / "data" / "images"
HEREDOC_BUILD = DATA / "heredoc-build" / "Dockerfile"
"""Two stages: RUN heredocs of each form in the first, COPY --from (a stage by name and by
index, a mapped image) and a COPY of two heredocs in the second."""
MULTISTAGE_TASK = DATA / "multistage-task"
"""A Harbor folder whose image takes files from two stages and skips a third."""
BASE = "ghcr.io/laude-institute/t-bench/ubuntu-24-04:20250624"

pytestmark = pytest.mark.images


def _read(image, path: str) -> tuple[bytes, os.stat_result]:
    found = lookup(image.layers, path)
    assert found is not None, f"{path} is not in the image"
    return (found[0].diff / path.lstrip("/")).read_bytes(), found[1]


# --- reading: no build -----------------------------------------------------------------------------


def test_heredoc_bodies_are_not_instructions_and_every_line_number_stays() -> None:
    text = (
        "FROM x\n"
        "RUN <<EOF\nRUN not-an-instruction\nEOF\n"
        "RUN cat > /a << 'ONE' && python3 <<-TWO\n$kept\nONE\n\tprint(1)\n\tTWO\n"
        'RUN ["sh", "-c", "cat <<EOF"]\n'
        "COPY <<EOF /x\nbody\nEOF\n"
        "ENV A=1\n"
    )
    _, found = instructions(text)
    assert [(ins.line, ins.keyword) for ins in found] == [
        (1, "FROM"),
        (2, "RUN"),
        (5, "RUN"),
        (10, "RUN"),
        (11, "COPY"),
        (14, "ENV"),
    ]
    plain, two, json_form, copy = found[1], found[2], found[3], found[4]
    assert [(doc.name, doc.content) for doc in plain.heredocs] == [("EOF", "RUN not-an-instruction\n")]
    assert [(doc.name, doc.expand, doc.chomp) for doc in two.heredocs] == [("ONE", False, False), ("TWO", True, True)]
    assert two.heredocs[1].text() == "print(1)\n"  # <<-: leading tabs stripped
    assert json_form.heredocs == () and copy.heredocs[0].content == "body\n"


# --- building --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def heredoc_image(image_store):
    lines: list[str] = []
    return build_image(HEREDOC_BUILD, store=image_store, progress=lines.append), lines


def test_run_heredocs_run_as_buildkit_runs_them(heredoc_image) -> None:
    image, _ = heredoc_image
    assert _read(image, "/srv/out/plain.txt")[0] == b"plain heredoc by builder\n"  # the shell expands $WHO
    assert _read(image, "/srv/out/python.txt")[0] == b"python heredoc\n"  # `python3 <<'PY'`: the command reads it
    assert _read(image, "/srv/out/quoted.txt")[0] == b"kept: $WHO\n"  # a quoted delimiter: no expansion
    assert _read(image, "/srv/out/shebang.txt")[0] == b"/dev/pipes/EOF\n"  # `#!`: run as a script of its own
    assert lookup(image.layers, "/dev/pipes") is None


def test_copy_from_a_stage_takes_its_files_and_nothing_else(heredoc_image) -> None:
    image, _ = heredoc_image
    data, info = _read(image, "/srv/owned.txt")  # --from=0 with --chown and --chmod
    assert data == b"plain heredoc by builder\n" and stat.S_IMODE(info.st_mode) == 0o600
    top = image.layers[0].diff.stat()  # the root folder: owned by the image's root
    assert (info.st_uid - top.st_uid, info.st_gid - top.st_gid) == ((65534, 65534) if os.geteuid() == 0 else (0, 0))
    assert lookup(image.layers, "/build") is None  # the builder's WORKDIR stays in the builder
    assert image.base == BASE and image.workdir == "/app"


def test_copy_from_a_mapped_image_follows_its_links(heredoc_image) -> None:
    image, _ = heredoc_image
    data, info = _read(image, "/srv/from-image/os-release")  # a link in the image: its file is copied
    assert stat.S_ISREG(info.st_mode) and b"VERSION_ID=" in data


def test_copy_heredocs_expand_unless_quoted(heredoc_image) -> None:
    image, _ = heredoc_image
    made, info = _read(image, "/srv/notes/EOF")
    assert made == b"made for final\n" and stat.S_IMODE(info.st_mode) == 0o644  # the final stage's own ARG
    assert _read(image, "/srv/notes/RAW")[0] == b"left as ${WHO}\n"


def test_a_stage_nothing_copies_from_is_skipped(image_store, tmp_path: Path) -> None:
    (tmp_path / "Dockerfile").write_text(
        f"FROM {BASE} AS broken\nRUN exit 7\nFROM {BASE} AS used\nRUN echo used > /used\n"
        f"FROM {BASE}\nCOPY --from=used /used /copied\n"
    )
    lines: list[str] = []
    image = build_image(tmp_path / "Dockerfile", store=image_store, progress=lines.append)
    assert _read(image, "/copied")[0] == b"used\n"
    assert "stage 0 (broken): skipped, the image takes nothing from it" in lines


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            f"FROM {BASE}\nCOPY --from=quay.io/nobody/tool:1 /tool /tool\n",
            r"line 2: `COPY --from=quay.io/nobody/tool:1 .*`\) copies from quay.io/nobody/tool:1, which no stage .* "
            r"is neither mapped .*\$RLENVS_BASE_IMAGES.*or make what it holds with a RUN step",
        ),
        (
            f"FROM {BASE} AS a\nCOPY --from=a /etc/hostname /x\n",
            r"line 2: .*copies from stage 0 \(a\), which is this stage",
        ),
        (f"FROM {BASE}\nCOPY --from=3 /etc/hostname /x\n", r"line 2: .*has stages 0 to 0"),
        (
            f"FROM {BASE} AS a\nFROM {BASE}\nCOPY --from=a /missing /x\n",
            r"line 3: .*copies /missing, which the root of a",
        ),
    ],
)
def test_what_a_multi_stage_build_cannot_do_is_refused_by_line(image_store, tmp_path: Path, text, reason) -> None:
    (tmp_path / "Dockerfile").write_text(text)
    with pytest.raises(ImageBuildError, match=reason):
        build_image(tmp_path / "Dockerfile", store=image_store, progress=lambda line: None)


# --- a Harbor folder ---------------------------------------------------------------------------


def test_the_host_backend_says_to_build_a_multi_stage_folder() -> None:
    with pytest.raises(TaskFolderError, match=r"the first at line 8\): the host backend .*backend=\"bwrap\""):
        load_task_folders(MULTISTAGE_TASK, backend="host")


@pytest.mark.parametrize("backend", ["bwrap", pytest.param("docker", marks=pytest.mark.docker)])
def test_a_multi_stage_harbor_folder_loads_and_its_reference_scores_one(image_store, backend: str) -> None:
    env = TerminalEnv(task_dir=str(MULTISTAGE_TASK), backend=backend, max_turns=4, timeout_s=30)
    try:
        env.reset(options={"task_index": 0})
        assert env.tasks.tasks[0].workdir == "/app"
        for replies, expected in (([env.oracle_action(), "submit"], 1.0), (["```bash\nsubmit\n```"], 0.0)):
            env.reset(options={"task_index": 0})
            for reply in replies:
                _, reward, terminated, truncated, info = env.step(reply)
                if terminated or truncated:
                    break
            assert reward == expected, info
        env.reset(options={"task_index": 0})
        seen = env.step("```bash\nwc -l < /app/numbers.txt; ls /build /unused.txt 2>/dev/null || echo none\n```")[0]
        assert "5\nnone" in seen, seen  # the builder's numbers; neither its other files nor the unused stage's
    finally:
        env.close()
