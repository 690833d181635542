"""m2/docstring.py: the one strip_docstring, folded from the two copies that were in m2_rules.py
and m2_seq2seq.py; each reading must behave exactly as the copy its call sites used."""
from __future__ import annotations

import re

import pytest

from stages.autoopt.data import grammar as g
from stages.autoopt.m2.docstring import is_docstring_line, strip_docstring

from .conftest import GEN

# the two old copies, verbatim (as of main b49fd9c), as oracles
_DOCSTRING = re.compile(r'^[ \t]*(?:"""|\'\'\').*(?:"""|\'\'\')[ \t]*\n', re.M)


def old_rules(script: str) -> str:
    return _DOCSTRING.sub("", script)


def old_seq2seq(script: str) -> str:
    return "\n".join(line for line in script.split("\n") if not line.strip().startswith('"""'))


EDGES = [
    "",
    'def build_model():\n    """doc."""\n    m = ConcreteModel()\n    return m\n',
    "def build_model():\n    '''doc.'''\n    m = 1\n",                   # single quotes: rules only
    'def f():\n    """opens\n    and closes"""\n    return 1\n',          # multi-line: seq2seq drops its first line
    'def f():\n    """\n    return 1\n',                                  # quotes alone
    'x = 1\n    """last line, no newline"""',                             # rules keeps, seq2seq drops
    'x = 1\r\n    """crlf"""\r\ny = 2\r\n',                               # \r: rules keeps, seq2seq drops
    '    """a""" + b\nc\n',                                               # code after the quotes
    '\t"""tab"""  \t\nz\n',
    '"""a"""\n"""b"""\n"""c"""\n',
    's = """inline"""\n',                                                 # not at the line start: both keep
]


@pytest.mark.parametrize("script", EDGES)
def test_each_reading_matches_the_copy_it_replaces(script):
    assert strip_docstring(script) == old_rules(script)
    assert strip_docstring(script, quote_lines=True) == old_seq2seq(script)


def test_the_two_readings_differ_only_off_the_dataset():
    differ = [s for s in EDGES if old_rules(s) != old_seq2seq(s)]
    assert len(differ) >= 5                    # single quotes, multi-line, no newline, \r, code after
    for seed in range(200):                    # the generator's scripts: one docstring line, mid-script
        script = g.generate(seed, **GEN).pyomo()
        assert strip_docstring(script) == strip_docstring(script, quote_lines=True) == old_rules(script)
        assert script.count("\n") - strip_docstring(script).count("\n") == 1


def test_is_docstring_line():
    assert is_docstring_line('    """tags."""') and is_docstring_line('"""')
    assert not is_docstring_line("    '''tags.'''") and not is_docstring_line('s = """x"""')
