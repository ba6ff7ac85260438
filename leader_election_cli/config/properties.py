"""java.util.Properties.load, as Kafka's Utils.loadProps reads a client config file.

ISO-8859-1, `\\uXXXX` escapes, continued lines, comments; values trimmed as Kafka's ConfigDef trims
them. A value read from the file is never shown in a message (a line ending in a stray backslash joins
the next line into it, and that line may hold a password): messages name the key and its line
(`named`) and say what is expected.
"""

from __future__ import annotations

import errno
import os
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping

from leader_election_cli.errors import InputError, shown
from leader_election_cli.local_files import read_regular_file

MAX_FILE_BYTES = 16 * 2**20


def parse_properties(text: str, source: str = "the properties") -> dict[str, str]:
    """Keys and values as java.util.Properties.load reads them (a repeated key: the last one wins)."""
    return {key: value for _, key, value in read_properties(text, source)}


def read_properties(text: str, source: str = "the properties") -> list[tuple[int, str, str]]:
    """Each entry as (line number, key, value), in file order."""
    return [(number, *_key_and_value(line, number, source)) for number, line in _logical_lines(text)]


def _logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """Java's LineReader: skip blank and comment lines, join continuations, drop their leading blanks."""
    natural = re.split(r"\r\n|\r|\n", text)
    pending: list[str] | None = None  # the parts of a logical line continued onto the next natural line
    start = 0
    for number, raw in enumerate(natural, 1):
        content = raw.lstrip(" \t\f")
        if pending is None:
            if not content or content[0] in "#!":
                continue
            start = number
            pending = []
        elif not content:
            # An empty continuation line ends the logical line; at the very end of the text Java keeps
            # even an empty one, elsewhere it drops it.
            if any(pending) or (number == len(natural) and raw == ""):
                yield start, "".join(pending)
            pending = None
            continue
        # Java counts the backslashes of this natural line only (it starts again after a continuation).
        backslashes = len(content) - len(content.rstrip("\\"))
        if backslashes % 2:
            pending.append(content[:-1])  # joined once, at the end: a long continued line stays linear
        else:
            yield start, "".join([*pending, content])
            pending = None
    if pending is not None:
        yield start, "".join(pending)


def _key_and_value(line: str, number: int, source: str) -> tuple[str, str]:
    """Properties.load0: the key ends at the first unescaped '=', ':' or blank."""
    key_end, value_start, has_separator, escaped = len(line), len(line), False, False
    for index, char in enumerate(line):
        if char in "=:" and not escaped:
            key_end, value_start, has_separator = index, index + 1, True
            break
        if char in " \t\f" and not escaped:
            key_end, value_start = index, index + 1
            break
        escaped = char == "\\" and not escaped
    while value_start < len(line) and line[value_start] in " \t\f=:":
        if line[value_start] in "=:":
            if has_separator:
                break
            has_separator = True
        value_start += 1
    return (_unescape(line[:key_end], number, source, "a key"),
            _unescape(line[value_start:], number, source, "a value"))


_ESCAPES = {"t": "\t", "r": "\r", "n": "\n", "f": "\f"}


def _unescape(text: str, number: int, source: str, what: str) -> str:
    """Properties.loadConvert: \\t \\r \\n \\f, \\uXXXX, and a backslash before anything else drops."""
    def convert(match: re.Match[str]) -> str:
        escape = match.group(1)
        if escape[0] != "u":
            return _ESCAPES.get(escape, escape)
        if re.fullmatch(r"u[0-9a-fA-F]{4}", escape):
            return chr(int(escape[1:], 16))
        raise InputError(f"Malformed \\uxxxx encoding in {what} on line {number} of {source}",
                         hint="Write \\u followed by exactly four hexadecimal digits, or \\\\u for a literal \\u.")

    converted = re.sub(r"\\(u.{0,4}|.)", convert, text, flags=re.S)
    # Java strings are UTF-16: an escaped surrogate pair is one character.
    return converted.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")


def java_trim(value: str) -> str:
    """String.trim(), which Kafka's ConfigDef applies to every value: drops characters up to U+0020."""
    return value.strip("".join(map(chr, range(33))))


def java_int(text: str, bits: int = 32) -> int | None:
    """Integer.parseInt (bits 32) or Long.parseLong (64), as ConfigDef parses an INT or LONG it has trimmed: a
    sign, then decimal digits of any script (Character.digit), leading zeros allowed. Java reads UTF-16 units,
    so a digit beyond U+FFFF (two surrogates) is not one. None where Java throws NumberFormatException,
    overflow included."""
    match = re.fullmatch(r"([+-]?)(\d+)", text)
    if not match or any(ord(char) > 0xFFFF for char in match[2]):
        return None
    digits = "".join(str(unicodedata.decimal(char)) for char in match[2]).lstrip("0")
    if len(digits) > 19:
        return None
    value = int(match[1] + (digits or "0"))
    return value if -2**(bits - 1) <= value < 2**(bits - 1) else None


_JAVA_DECIMAL = re.compile(r"([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)[fFdD]?"
                           r"|([+-]?(?:NaN|Infinity))")
_JAVA_HEX = re.compile(r"([+-]?0[xX](?:[0-9a-fA-F]+\.?|[0-9a-fA-F]*\.[0-9a-fA-F]+)[pP][+-]?[0-9]+)[fFdD]?")


def java_double(text: str) -> float | None:
    """Double.parseDouble, as ConfigDef parses a DOUBLE it has trimmed: ASCII digits only (float() also takes
    other scripts' digits, '_' and Unicode spaces), a d/f suffix and hexadecimal ("0x1.8p-1") allowed."""
    if match := _JAVA_DECIMAL.fullmatch(text):
        return float(match[1] or match[2])
    if match := _JAVA_HEX.fullmatch(text):
        return float.fromhex(match[1])
    return None


def java_boolean(text: str) -> bool | None:
    """ConfigDef's BOOLEAN of a trimmed value: "true" or "false" by String.equalsIgnoreCase, which compares
    each UTF-16 unit by its upper and lower case (so U+017F, the long s, is an "s"); None for anything else."""
    for word in ("true", "false"):
        if len(text) == len(word) and all(a == b or _java_upper(a) == b.upper() or
                                          _java_upper(a).lower() == b for a, b in zip(text, word, strict=True)):
            return word == "true"
    return None


def _java_upper(char: str) -> str:
    """Character.toUpperCase of one character: the character itself where the upper case is not one."""
    upper = char.upper()
    return upper if len(upper) == 1 else char


class Properties(dict[str, str]):
    """A config file's keys and values (a repeated key: the last one wins), with the line of each key."""

    def __init__(self, entries: Iterable[tuple[int, str, str]] = ()):
        super().__init__()
        self.lines: dict[str, int] = {}
        for number, key, value in entries:
            self[key] = value
            self.lines[key] = number


def named(props: Mapping[str, str], key: str) -> str:
    """A setting as a message names it: its key and line ("security.protocol (line 3)"), never its value."""
    line = props.lines.get(key) if isinstance(props, Properties) else None
    return f"{key} (line {line})" if line else key


def read_text(path: str, what: str, option: str, shown_path: str,
              kafka_io_line: Callable[[int], str] | None = None) -> str:
    """A file's text as Kafka's Properties.load(InputStream) sees it: ISO-8859-1 (`kafka_io_line`: as in
    `read_regular_file`)."""
    data = read_regular_file(path, what=what, limit=MAX_FILE_BYTES, hint=f"Check the {option} path.",
                             shown_as=shown_path, kafka_io_line=kafka_io_line)
    return data.decode("latin-1")


def java_io_message(path: str) -> Callable[[int], str]:
    """The message of the exception Java's Files.newInputStream(Paths.get(path)), or the first read, throws
    for an errno: how Kafka's tools report a config file they cannot read (Utils.loadProps; their first
    line is the message). The path as Paths.get prints it (repeated and trailing slashes dropped) for a
    missing or forbidden file (NoSuchFileException, AccessDeniedException), "Is a directory" for a
    directory (opening it works, reading fails), else "path: reason" (FileSystemException)."""
    java_path = shown(re.sub("/+", "/", path).rstrip("/") or path[:1])

    def message(err: int) -> str:
        if err in (errno.ENOENT, errno.EACCES):
            return java_path
        if err == errno.EISDIR:
            return os.strerror(err)
        if err == errno.ELOOP:
            return f"{java_path}: {os.strerror(err)} or unable to access attributes of symbolic link"
        return f"{java_path}: {os.strerror(err)}"

    return message


def check_unicode(secret: str, what: str) -> None:
    """A value sent as UTF-8 must be text: a lone surrogate (a \\uD800 escape) cannot be (Java would send
    '?' in its place, and log in as someone else or not at all). The value is never shown."""
    try:
        secret.encode("utf-8")
    except UnicodeEncodeError:
        raise InputError(f"{what} is not valid text: it holds a lone surrogate (a \\uD800-\\uDFFF escape)",
                         hint="Fix that \\u escape in the config file.") from None

