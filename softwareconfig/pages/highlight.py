"""Configs as highlighted HTML, done on the server with Pygments.

The lexer follows the tool (a component entry's ``tool``, else the config's
``group``); a script is read by its shebang. The HTML is token spans only:
the template draws the ``<pre class="code highlight">`` around it, and
``static/pygments.css`` colours the spans.
"""
import posixpath

import yaml
from django.utils.safestring import mark_safe
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import (BashLexer, JsonLexer, PuppetLexer, RubyLexer, TextLexer,
                             YamlLexer, get_lexer_by_name)
from pygments.util import ClassNotFound

LEXERS_BY_TOOL = {
    "puppet": PuppetLexer,
    "ansible": YamlLexer,
    "salt": YamlLexer,
    "docker-compose": YamlLexer,
    "kubelet": YamlLexer,
    "chef": RubyLexer,
    "apply-config": JsonLexer,
    "os-apply-config": JsonLexer,
}
SHELL_TOOLS = ("script",)
_FORMATTER = HtmlFormatter(nowrap=True)


def shebang_interpreter(text):
    """The interpreter a ``#!`` line names (``/usr/bin/env python3`` → ``python3``), or None."""
    if not text.startswith("#!"):
        return None
    words = text[2:].split("\n", 1)[0].split()
    if not words:
        return None
    name = posixpath.basename(words[0])
    if name == "env":
        rest = [w for w in words[1:] if not w.startswith("-") and "=" not in w]
        name = posixpath.basename(rest[0]) if rest else ""
    return name or None


def _by_shebang(text):
    """The lexer a ``#!`` line names, else None (no guessing from anything else).

    Looked up by the interpreter's name, not with ``guess_lexer``: that asks every
    Pygments lexer (importing each) and cost 200-300 ms a config, every time, which
    made the software pages take 600-800 ms."""
    name = shebang_interpreter(text)
    for candidate in (name, (name or "").rstrip("0123456789.")):
        if not candidate:
            continue
        try:
            lexer = get_lexer_by_name(candidate)
        except ClassNotFound:
            continue
        return None if isinstance(lexer, TextLexer) else lexer
    return None


def lexer_for(tool, text):
    """A Pygments lexer for ``text`` applied by ``tool``."""
    if tool in LEXERS_BY_TOOL:
        return LEXERS_BY_TOOL[tool]()
    lexer = _by_shebang(text)
    if lexer is not None:
        return lexer
    if tool in SHELL_TOOLS:
        return BashLexer()
    if text.startswith("#cloud-config"):
        return YamlLexer()
    return TextLexer()


def config_text(config):
    """A config as text: strings as they are, structured data as YAML."""
    if config is None:
        return ""
    if isinstance(config, str):
        return config
    return yaml.safe_dump(config, sort_keys=False, allow_unicode=True)


def highlighted(tool, config):
    """``(language name, safe HTML of token spans)`` for a config applied by ``tool``."""
    text = config_text(config)
    lexer = YamlLexer() if not isinstance(config, (str, type(None))) else lexer_for(tool, text)
    # Pygments escapes every token, so its output is safe to mark as such.
    return lexer.name, mark_safe(highlight(text, lexer, _FORMATTER))
