'''The docstring line of a Pyomo script: the dataset's reference scripts carry one (tags the
LaTeX does not show, ``    """single problem; complexities: linear."""`` after ``def build_model():``)
and neither translator writes one, so scripts are compared without it.

One function for M2's two users. It replaces two copies (in m2_rules.py and m2_seq2seq.py,
before the study's modules moved into sub-packages) that read "a docstring line" differently on
scripts unlike the dataset's; each call site keeps the reading it had:

* ``strip_docstring(s)``, the rule-based translator's reading (m2-evaluate's text scores of
  both translators, tests/autoopt/test_m2_rules.py): removes each whole one-line docstring,
  ``"""..."""`` or ``\'\'\'...\'\'\'`` with only spaces/tabs around it, together with its newline.
  Left alone: a last line without a newline, a line that opens a docstring without closing
  it on that line (or is ``"""`` alone), a line ending in ``\\r\\n``.
* ``strip_docstring(s, quote_lines=True)``, the seq2seq model's reading (m2-train's greedy
  exact match, :func:`.seq2seq.py_tokenize`, which drops such lines through
  :func:`is_docstring_line`, tests/autoopt/test_m2_seq2seq.py): removes every line whose text
  starts with ``"""`` after any whitespace, closed or not, the last line too; ``\'\'\'`` lines
  stay.

On the dataset's scripts and on both translators' outputs the two readings agree.
'''
from __future__ import annotations

import re

_ONE_LINE = re.compile(r'^[ \t]*(?:"""|\'\'\').*(?:"""|\'\'\')[ \t]*\n', re.M)


def is_docstring_line(line: str) -> bool:
    """A line whose text starts with triple double quotes (the ``quote_lines`` reading)."""
    return line.strip().startswith('"""')


def strip_docstring(script: str, *, quote_lines: bool = False) -> str:
    """The script without its docstring line(s); see the module's docstring for the two readings
    (default: whole one-line docstrings; ``quote_lines``: every line starting with ``\"\"\"``)."""
    if quote_lines:
        return "\n".join(line for line in script.split("\n") if not is_docstring_line(line))
    return _ONE_LINE.sub("", script)
