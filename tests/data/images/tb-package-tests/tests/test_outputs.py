from pathlib import Path

import yaml

from .helpers import EXPECTED


def test_config_holds_the_greeting():
    assert yaml.safe_load(Path("/app/config.yaml").read_text()) == EXPECTED
