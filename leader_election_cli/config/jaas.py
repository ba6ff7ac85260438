"""sasl.jaas.config, as Kafka's JaasConfig parses it (a java.io.StreamTokenizer).

Messages never echo a token: the options hold credentials.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class LoginModule:
    """One JAAS entry. Its options hold credentials, so they never appear in a repr."""

    name: str | None
    flag: str
    options: Mapping[str | None, str] = field(repr=False)


def parse_jaas_config(text: str) -> list[LoginModule]:
    """Kafka's JaasConfig parser (a java.io.StreamTokenizer), with messages that never echo a token."""
    tokens = _jaas_tokens(text)
    modules = []
    token = next(tokens, None)
    while token is not None:
        name = token[1]
        token = next(tokens, None)
        if token is None:
            raise ValueError("Login module control flag not specified in JAAS config")
        if token[1] is None or token[1].upper() not in ("REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL"):
            raise ValueError("Invalid login module control flag in JAAS config: "
                             "expected required, requisite, sufficient or optional")
        flag = token[1].upper()
        options: dict[str | None, str] = {}
        token = next(tokens, None)
        while token is not None and token != (";", None):
            key = token[1]
            equals, value = next(tokens, None), next(tokens, None)
            if equals != ("=", None) or value is None or value[1] is None:
                raise ValueError("Value not specified for an option in JAAS config")
            options[key] = value[1]  # Java keeps even a key that is not a word (null)
            token = next(tokens, None)
        if token is None:
            raise ValueError("JAAS config entry not terminated by semi-colon")
        modules.append(LoginModule(name, flag, options))
        token = next(tokens, None)
    if not modules:
        raise ValueError("Login module not specified in JAAS config")
    return modules


def _is_word_char(char: str) -> bool:
    code = ord(char)
    return (32 < code <= 128 and char not in "/;=\"'") or 160 <= code <= 255 or code > 255


_QUOTE_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _jaas_tokens(text: str) -> Iterator[tuple[str, str | None]]:
    """(kind, value) tokens: ("word", w), ('"', s) or ("'", s) for quoted strings, (char, None) else."""
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if ord(char) <= 32:
            i += 1
        elif _is_word_char(char):
            start = i
            while i < n and _is_word_char(text[i]):
                i += 1
            yield "word", text[start:i]
        elif char in "\"'":
            value, i = _quoted(text, i + 1, char)
            yield char, value
        elif char == "/":
            if text.startswith("/*", i):
                end = text.find("*/", i + 2)
                if end < 0:
                    return
                i = end + 2
            else:  # '//' or a lone '/': the character after it is taken, then the rest of the line
                i = _end_of_line(text, i + 2)
        else:
            yield char, None
            i += 1


_LINE_END = re.compile(r"[\r\n]")
_OCTAL_ESCAPE = re.compile(r"[0-3][0-7]{0,2}|[4-7][0-7]?")  # \377 at most, as StreamTokenizer reads them


def _end_of_line(text: str, i: int) -> int:
    match = _LINE_END.search(text, i)
    return match.start() if match else len(text)


def _quoted(text: str, i: int, quote: str) -> tuple[str, int]:
    """A StreamTokenizer quoted string from just after the quote: C escapes and octal, ends at the
    closing quote (consumed) or a line end (left for the caller)."""
    out, n = [], len(text)
    while i < n and text[i] != quote and text[i] not in "\r\n":
        if text[i] != "\\":
            out.append(text[i])
            i += 1
            continue
        if i + 1 >= n:  # a backslash at the very end: Java stores char -1
            out.append("\uffff")
            i += 1
            continue
        escape = text[i + 1]
        octal = _OCTAL_ESCAPE.match(text, i + 1)
        if octal:
            out.append(chr(int(octal.group(), 8)))
            i = octal.end()
        else:
            out.append(_QUOTE_ESCAPES.get(escape, escape))
            i += 2
    return "".join(out), i + 1 if i < n and text[i] == quote else i

