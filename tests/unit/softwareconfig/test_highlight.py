"""The lexer of a config: by its tool, else by its shebang's interpreter, looked up by name
(never by asking every Pygments lexer, which cost 200-300 ms a config)."""
import pytest
from pygments.lexers import BashLexer, PerlLexer, PythonLexer, TextLexer, YamlLexer

from softwareconfig.pages import highlight


@pytest.fixture(autouse=True)
def no_guessing(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("guess_lexer scans every lexer")

    monkeypatch.setattr("pygments.lexers.guess_lexer", refuse)
    monkeypatch.setattr(highlight, "guess_lexer", refuse, raising=False)


@pytest.mark.parametrize("text, lexer", [
    ("#!/bin/bash\necho hi\n", BashLexer),
    ("#!/bin/sh\necho hi\n", BashLexer),
    ("#!/usr/bin/env python3\nprint(1)\n", PythonLexer),
    ("#!/usr/bin/env -S python3 -u\nprint(1)\n", PythonLexer),
    ("#!/usr/bin/python3.11\nprint(1)\n", PythonLexer),
    ("#!/usr/bin/perl -w\nprint 1;\n", PerlLexer),
])
def test_a_script_is_read_by_its_shebang(text, lexer):
    assert type(highlight.lexer_for("script", text)) is lexer


@pytest.mark.parametrize("tool, text, lexer", [
    ("script", "echo no shebang\n", BashLexer),
    ("script", "#!/opt/unknown-interpreter\nx\n", BashLexer),
    ("ansible", "#!/bin/bash\n- hosts: all\n", YamlLexer),
    ("unknown", "#cloud-config\npackages: [a]\n", YamlLexer),
    ("unknown", "plain words\n", TextLexer),
])
def test_the_tool_then_the_content_decide(tool, text, lexer):
    assert type(highlight.lexer_for(tool, text)) is lexer
