"""Reading a summons' command word as the person typed it to be read."""

from __future__ import annotations

import pytest

from bot.convert import command_word


@pytest.mark.parametrize(
    ("text", "word"),
    [
        ("@factnote stop", "stop"),
        ("@factnote STOP!", "stop"),
        ("＠factnote ＳＴＯＰ", "stop"),  # full-width, mention included
        ("@factnote st\u200bop", "stop"),  # zero-width space inside the word
        ("@factnote sto\u00adp", "stop"),  # soft hyphen
        ("@factnote opt   out", "opt out"),
        ("@factnote opt\u00a0out", "opt out"),  # no-break space
        ("@factnote Start.", "start"),
        ("@factnote is this true?", "is this true"),
    ],
)
def test_command_word_reads_what_the_user_sees(text: str, word: str) -> None:
    assert command_word(text) == word
