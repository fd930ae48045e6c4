"""Every fairy mode the steward has reads in plain words in the panel and the overlay: the
client's table (`client-bridge/src/ui/modes.ts`) names exactly the steward's modes."""

from __future__ import annotations

import re

from steward.config import PROJECT_ROOT
from steward.fairies.modes import MODES

TABLE = PROJECT_ROOT / "client-bridge" / "src" / "ui" / "modes.ts"


def test_the_client_says_every_mode_in_plain_words() -> None:
    text = TABLE.read_text()
    body = text[text.index("const PLAIN") : text.index("}\n")]
    keys = set(re.findall(r"^\s+'?([a-z-]+)'?: '", body, flags=re.MULTILINE))
    assert keys == set(MODES)
    labels = re.findall(r": '([^']+)',$", body, flags=re.MULTILINE)
    assert all("-" not in label for label in labels), labels
