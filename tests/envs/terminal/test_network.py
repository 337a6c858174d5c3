"""Tests that reach for the network (rlenvs.envs.terminal.network): refused at load by file,
line and host, while tests that talk to the agent's own machine load; and, in `rlenvs tasks
check`, a folder whose tests met the sandbox's missing network when played counted apart from a
failed reference (rlenvs.envs.terminal.coverage)."""

from __future__ import annotations

import textwrap

import pytest

from rlenvs.envs.terminal import coverage
from rlenvs.envs.terminal.folders import load_task_folders
from rlenvs.envs.terminal.network import find_connection
from rlenvs.envs.terminal.network.addresses import is_local
from rlenvs.envs.terminal.network.python_code import python_connections
from rlenvs.envs.terminal.network.shell_code import only_local, shell_connections
from tests.envs.terminal.test_folders import harbor_task, refused, terminal_bench_task, write

JUDGE = """\
import os, requests

BASE = os.environ.get("BASE_URL", "http://203.0.113.9:8081")


def test_external_judge():
    r = requests.post(f"{BASE.rstrip('/')}/submit", files={"code": open("/app/main.cpp", "rb")})
    assert r.json()["verdict"] == "AC"
"""
"""LiveCodeBench Pro's shape: the judge's address a default in the file, used through a name."""


def hosts(source: str) -> list[str]:
    return [connection.host for connection in python_connections(textwrap.dedent(source))]


# --- Python, read as code ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        (JUDGE, ["203.0.113.9"]),
        ("import requests as r\nr.get('https://api.example.com/v1/items')\n", ["api.example.com"]),
        ("from urllib.request import urlopen\nurlopen('http://data.example.org/x.csv')\n", ["data.example.org"]),
        ("import socket\nsocket.create_connection(('198.51.100.4', 443))\n", ["198.51.100.4"]),
        ("import socket\ns = socket.socket()\ns.connect(('db.example.net', 5432))\n", ["db.example.net"]),
        (
            "import httpx\nwith httpx.Client() as c:\n    c.post('https://judge.example.com/run')\n",
            ["judge.example.com"],
        ),
        ("import smtplib\nsmtplib.SMTP('smtp.example.com')\n", ["smtp.example.com"]),
        ("import grpc\ngrpc.insecure_channel('svc.example.com:50051')\n", ["svc.example.com"]),
        (  # a loop over literal addresses: each is where it connects
            "import requests\nfor url in ['http://localhost/a', 'http://mirror.example.org/b']:\n    requests.head(url)\n",
            ["mirror.example.org"],
        ),
        (  # an address from a setting the file does not hold, and a remote URL written in it
            "import os, requests\nDOCS = 'see https://judge.example.com'\nrequests.get(os.environ['JUDGE_URL'])\n",
            ["judge.example.com"],
        ),
    ],
)
def test_connections_to_remote_hosts_are_found(source, expected):
    assert hosts(source) == expected


@pytest.mark.parametrize(
    "source",
    [
        "import requests\nrequests.get('http://localhost:8080/health')\n",
        "import requests\nrequests.get('http://127.0.0.1:5000/api')\nrequests.get('http://[::1]:80/')\n",
        "import requests\nBASE = 'http://0.0.0.0:8000'\nrequests.post(BASE + '/x')\n",
        "import os, requests\nrequests.get(f'http://localhost:{os.environ[\"PORT\"]}/items')\n",
        "import socket\ns = socket.socket(socket.AF_UNIX)\ns.connect('/tmp/app.sock')\n",
        "import socket\nsocket.create_connection(('', 8080))\n",
        # comments, docstrings and strings that are only data are not connections
        '"""Fetches https://judge.example.com."""\nimport requests\n# requests.get("https://x.example.com")\n',
        "import requests\ndef test_page():\n    assert 'https://cdn.example.com/app.js' in open('/app/index.html').read()\n"
        "    requests.get('http://localhost:5000/')\n",
        # an address read from the agent's answer is data of the run, whatever URLs the file names
        "import json, requests\nTARGET = 'https://malicious.example.com'\n"
        "def test_redirect():\n    url = json.load(open('/app/solution.json'))['exploit_url']\n"
        "    assert requests.get(url, allow_redirects=False).headers['Location'].startswith(TARGET)\n",
        # names are scoped: another test's `url` is not this one's
        "import requests\ndef test_a():\n    url = 'https://docs.example.com'\n    assert url\n"
        "def test_b():\n    url = 'http://localhost:1/'\n    requests.get(url)\n",
        # a helper called with local addresses, and a pytest fixture that gives one
        "import pytest, requests\ndef fetch(url):\n    return requests.get(url)\n@pytest.fixture\n"
        "def base_url():\n    return 'http://127.0.0.1:9000'\ndef test_x(base_url):\n    fetch('http://localhost/x')\n"
        "    fetch(base_url + '/y')\n",
        "print 'python 2 is no test of ours'\n",  # not Python 3: not scanned
        "import compose\nimport requests\nrequests.get('http://db:5432/')\n",  # a one-label name: a service
    ],
)
def test_local_addresses_comments_and_data_are_not_connections(source):
    assert hosts(source) == []


def test_what_counts_as_local():
    for host in ("localhost", "api.localhost", "127.0.0.2", "::1", "[::1]", "0.0.0.0", "::", "", "/run/x.sock", "db"):
        assert is_local(host), host
    for host in ("203.0.113.9", "10.0.0.5", "example.com", "host.docker.internal", "2001:db8::1"):
        assert not is_local(host), host


# --- shell -----------------------------------------------------------------------------------------


def test_shell_commands_to_remote_hosts_are_found_and_local_ones_are_not():
    script = (
        "#!/bin/bash\n"
        "curl -s -o /dev/null -w '%{http_code}' http://localhost:8080/health  # the agent's server\n"
        "nc -z localhost 5432 && ssh -p 2222 tester@127.0.0.1 true\n"
        "nc -l 9000 &\n"
        "git clone /srv/repo.git /tmp/checkout\n"
        "curl -fsS https://judge.example.com/submit -d @answer.txt\n"
        "echo hi | nc \\\n  198.51.100.7 80\n"
        "git clone git@github.com:example/tools.git\n"
        "curl $JUDGE_URL\n"  # left to the loader's command check
    )
    assert [(c.line, c.host, c.call) for c in shell_connections(script)] == [
        (6, "judge.example.com", "curl"),
        (7, "198.51.100.7", "nc"),
        (9, "github.com", "git clone"),
    ]
    assert only_local("curl -s http://localhost:8080/x | grep ok", ("curl", "wget"))
    assert not only_local("curl -s http://localhost:8080/x && curl https://example.com", ("curl", "wget"))
    assert not only_local("curl $URL", ("curl", "wget"))


def test_only_the_scripts_and_modules_that_run_are_read(tmp_path):
    tests = tmp_path / "tests"
    write(tests / "test.sh", "#!/bin/bash\n# make_fixtures.py is how the fixtures were made\nbash $TEST_DIR/check.sh\n")
    write(tests / "check.sh", "python3 -m pytest $TEST_DIR/test_outputs.py\n")
    write(tests / "test_outputs.py", "from helpers import fetch\n\ndef test_it():\n    fetch()\n")
    write(tests / "helpers.py", "import requests\n\ndef fetch():\n    return requests.get('https://example.org/x')\n")
    write(tests / "make_fixtures.py", "import urllib.request\nurllib.request.urlretrieve('https://example.net/f')\n")
    found = find_connection(tests, tests / "test.sh")
    assert found is not None
    connection, places = found
    assert (connection.path, connection.line, connection.host, places) == (tests / "helpers.py", 4, "example.org", 1)
    (tests / "helpers.py").unlink()
    assert find_connection(tests, tests / "test.sh") is None  # make_fixtures.py: nothing runs it


# --- at load ---------------------------------------------------------------------------------------


def test_a_folder_whose_tests_post_to_a_remote_judge_is_refused_by_file_line_and_host(tmp_path):
    folder = terminal_bench_task(tmp_path)
    write(folder / "tests" / "test_outputs.py", JUDGE)
    message = refused(folder)
    assert "tests/test_outputs.py (line 7) calls requests.post with the address in `BASE`" in message
    assert "it connects to 203.0.113.9, written on line 3" in message
    assert "the sandbox has none when the tests run" in message and "network=True" in message
    assert coverage.reason_class(message) == "tests need the network"


def test_a_harbor_task_that_forbids_the_internet_is_told_no_backend_helps(tmp_path):
    folder = harbor_task(tmp_path)
    write(folder / "task.toml", (folder / "task.toml").read_text() + "allow_internet = false\n")
    write(folder / "tests" / "test_outputs.py", JUDGE)
    message = refused(folder)
    assert "allow_internet = false" in message and "network=True" not in message


def test_tests_that_talk_to_the_agents_own_machine_load(tmp_path):
    folder = terminal_bench_task(tmp_path)
    write(
        folder / "run-tests.sh",
        "#!/bin/bash\ncurl -s http://localhost:8080/ > /dev/null || true\npython3 $TEST_DIR/test_outputs.py\n",
    )
    write(folder / "tests" / "probe.py", "import socket\nsocket.create_connection(('127.0.0.1', 8080))\n")
    (task,) = load_task_folders(folder)
    assert task.task_id == "folder/hello-world"


GRADLE_RUNNER = (
    "#!/bin/bash\nif [ -f ./gradlew ]; then ./gradlew test --no-daemon; fi\npython3 $TEST_DIR/test_outputs.py\n"
)
"""Aider Polyglot's shape: one runner for every language, naming the wrapper whether or not the
folder ships one."""
WRAPPER = "distributionUrl=https\\://services.gradle.org/distributions/gradle-8.7-bin.zip\n"


def test_a_gradle_wrapper_the_tests_run_and_the_image_lacks_is_refused_as_a_download(tmp_path):
    """Measured on Aider Polyglot's Java tasks: `./gradlew test` fetches Gradle from
    services.gradle.org as the tests run, so the reference scored 0. The folder is refused at load."""
    folder = terminal_bench_task(tmp_path)
    write(folder / "run-tests.sh", GRADLE_RUNNER)
    write(folder / "workspace" / "gradle" / "wrapper" / "gradle-wrapper.properties", WRAPPER)
    message = refused(folder)
    assert (
        "run-tests.sh runs the Gradle wrapper, which needs the network (it downloads Gradle from services.gradle.org"
        in message
    )
    assert "workspace/gradle/wrapper/gradle-wrapper.properties" in message and "network=True" in message
    assert coverage.reason_class(message) == "tests need the network"


@pytest.mark.parametrize(
    "wrapper, dockerfile_step",
    [
        (None, ""),  # the shared runner names gradlew, and this folder ships no wrapper
        (WRAPPER, "RUN ./gradlew build --no-daemon\n"),  # the image's build fetched Gradle on its network
        ("distributionUrl=file\\:///opt/gradle-8.7-bin.zip\n", ""),  # a release on this machine
    ],
)
def test_a_gradle_wrapper_that_needs_no_download_is_no_refusal(tmp_path, wrapper, dockerfile_step):
    from rlenvs.envs.terminal import folders

    folder = terminal_bench_task(tmp_path)
    write(folder / "run-tests.sh", GRADLE_RUNNER)
    write(folder / "Dockerfile", (folder / "Dockerfile").read_text() + dockerfile_step)
    if wrapper is not None:
        write(folder / "gradle" / "wrapper" / "gradle-wrapper.properties", wrapper)
    folders._check_test_network(folder, folder, folder / "tests", folder / "run-tests.sh", False)


# --- when played: `rlenvs tasks check` ----------------------------------------------------------------


@pytest.mark.sandbox  # the check plays the folder's reference in the sandbox
def test_a_reference_that_met_the_missing_network_is_counted_apart(tmp_path):
    """An address the scan cannot read (built as the tests run) meets the sandbox's refusal:
    the check reports the class, not a failed reference, and exits 0 for it."""
    folder = terminal_bench_task(tmp_path)
    write(
        folder / "run-tests.sh",
        "#!/bin/bash\n"
        'python3 -c \'import socket; socket.create_connection((".".join(["198", "51", "100", "7"]), 80), 5)\'\n',
    )
    records, totals = coverage.check_corpus(tmp_path)
    (record,) = records
    assert record.loaded and record.reference_reward == 0.0 and record.empty_reward == 0.0
    assert record.reason_class == coverage.RUNTIME_NETWORK and "Network is unreachable" in record.refusal
    assert (totals.loaded, totals.refused, totals.refused_by_reason) == (0, 1, {coverage.RUNTIME_NETWORK: 1})
    assert coverage.passed(records)
    assert f"{coverage.RUNTIME_NETWORK}" in coverage.table(records, totals, "t")


def test_the_scan_steps_aside_where_the_user_gave_the_episodes_a_network(tmp_path):
    """`network=True` (Docker or Podman only, which load_task_folders checks) is the override the
    refusal names: the tests then have a network, and nothing is refused for reaching it."""
    from rlenvs.envs.terminal import folders

    folder = terminal_bench_task(tmp_path)
    write(folder / "tests" / "test_outputs.py", JUDGE)
    folders._check_test_network(folder, folder, folder / "tests", folder / "run-tests.sh", True)
    with pytest.raises(folders.TaskFolderError, match="203.0.113.9"):
        folders._check_test_network(folder, folder, folder / "tests", folder / "run-tests.sh", False)
