"""PyYAML errors told by what went wrong and where, never by the document's text (it may hold secrets)."""

from __future__ import annotations

import ast
import re

import yaml

__all__ = ["describe_error"]

#: A quoted piece inside a PyYAML message (``found undefined alias 'abc'``): a repr, escapes and all.
_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")

#: PyYAML's token names (``'<block end>'``, ``'['``, ...): its grammar, never the document's text.
_TOKEN_NAMES = frozenset(
    getattr(cls, "id")
    for cls in vars(yaml.tokens).values()
    if isinstance(cls, type) and issubclass(cls, yaml.tokens.Token) and isinstance(getattr(cls, "id", None), str)
)

_HIDDEN = "(text not shown)"


def describe_error(exc: yaml.YAMLError) -> str:
    """What PyYAML found wrong and where (line and column, 1-based), without any text of the document.

    PyYAML quotes pieces of the document in its messages (an unquoted token ``*abc`` reads as the
    alias ``abc``, and the message names it): every quoted piece is replaced by "(text not shown)",
    except PyYAML's own token names and single punctuation or whitespace characters
    (``found character '\\t'``). Raise the error it goes into outside the ``except`` block (and
    ``from None``): PyYAML's exception keeps the whole document in its marks.
    """
    if isinstance(exc, yaml.reader.ReaderError):  # a control character: no mark, a position
        return f"{_redacted(str(exc.reason))} (at character {exc.position + 1})"
    problem, context = getattr(exc, "problem", None), getattr(exc, "context", None)
    problem_mark, context_mark = getattr(exc, "problem_mark", None), getattr(exc, "context_mark", None)
    if not isinstance(problem, str) or not problem:  # only a context: it is the problem
        problem, problem_mark = (context, context_mark) if isinstance(context, str) else (None, None)
        context = None
    text = _at(_redacted(problem) if problem else "invalid YAML", problem_mark)
    if isinstance(context, str) and context:
        where = _at(_redacted(context), context_mark)
        # "while scanning a quoted scalar" says what was being read; "found duplicate anchor ...;
        # first occurrence" is a finding of its own, told first
        text = f"{text} {where}" if context.startswith("while ") else f"{where}, {text}"
    if problem and "alias" in problem:
        text += "; a value that starts with '*' or '&' must be quoted"
    return text


def _at(message: str, mark: yaml.Mark | None) -> str:
    return f"{message} (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else message


def _redacted(message: str) -> str:
    return _QUOTED.sub(_shown_or_hidden, message)


def _shown_or_hidden(match: re.Match[str]) -> str:
    quoted = match.group()
    try:
        value = ast.literal_eval(quoted)
    except (ValueError, SyntaxError):
        return _HIDDEN
    if not isinstance(value, str):
        return _HIDDEN
    if value in _TOKEN_NAMES or (len(value) == 1 and not value.isalnum()):
        return quoted
    return _HIDDEN
