"""java.util.Properties.load, reimplemented: hand cases from Java's rules and a Properties.store round trip."""

from __future__ import annotations

import math
import struct
from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leader_election_cli.config.properties import (
    java_boolean,
    java_double,
    java_int,
    java_trim,
    parse_properties,
    read_properties,
)
from leader_election_cli.errors import InputError


@pytest.mark.parametrize("text, expected", [
    ("a=b", {"a": "b"}),
    ("a:b", {"a": "b"}),
    ("a b", {"a": "b"}),
    ("a\tb", {"a": "b"}),
    ("a\fb", {"a": "b"}),
    ("  a   =   b  ", {"a": "b  "}),
    ("a = = b", {"a": "= b"}),
    ("a:=b", {"a": "=b"}),
    ("a =:b", {"a": ":b"}),
    ("a b=c", {"a": "b=c"}),
    ("a", {"a": ""}),
    ("a=", {"a": ""}),
    ("=b", {"": "b"}),
    ("a\\=b=c", {"a=b": "c"}),
    ("a\\:b:c", {"a:b": "c"}),
    ("a\\ b c", {"a b": "c"}),
    ("a\\\\=b", {"a\\": "b"}),
    ("a=\\t\\n\\r\\f\\q\\\\\\=", {"a": "\t\n\r\fq\\="}),
    ("a=\\u0041\\u00e9\\uD83D\\uDE00", {"a": "A\u00e9\U0001F600"}),
    ("a=\\uD800", {"a": "\ud800"}),
    ("\\u0041=1", {"A": "1"}),
    ("# comment\n! other\n   # indented\na=1", {"a": "1"}),
    ("a=1#not a comment", {"a": "1#not a comment"}),
    ("a=1\na=2", {"a": "2"}),
    ("a=b\\\n   c", {"a": "bc"}),
    ("a=b\\\n\t\f c\\\n d", {"a": "bcd"}),
    ("a=b\\\\\nc=d", {"a": "b\\", "c": "d"}),
    ("a=b\\\\\\\nc", {"a": "b\\c"}),
    ("a=b\\\n#c", {"a": "b#c"}),
    ("a=b\\\n\nc=d", {"a": "b", "c": "d"}),
    ("a=b\\\n   \nc=d", {"a": "b", "c": "d"}),
    ("# comment \\\na=1", {"a": "1"}),
    ("a=1\r\nb=2\rc=3\n", {"a": "1", "b": "2", "c": "3"}),
    ("a=b\\\r\n  c", {"a": "bc"}),
    ("a=b\\", {"a": "b"}),
    ("a=b\\\n", {"a": "b"}),
    ("\\", {"": ""}),
    ("\\\n", {"": ""}),
    ("\\\n   ", {}),
    ("\\\n\na=1", {"a": "1"}),
    ("\\\n#a=1", {"#a": "1"}),
    ("", {}),
    ("\n\n  \t\n", {}),
    ("caf\u00e9=\u00e9t\u00e9", {"caf\u00e9": "\u00e9t\u00e9"}),
])
def test_java_rules(text: str, expected: dict[str, str]) -> None:
    assert parse_properties(text) == expected


def test_line_numbers_are_where_each_entry_starts() -> None:
    assert read_properties("# c\na=1\\\n 2\n\nb=3") == [(2, "a", "12"), (5, "b", "3")]


@pytest.mark.parametrize("text, line", [("a=\\u12", 1), ("\n\n x\\uZZZZ=1", 3), ("a=\\u", 1)])
def test_malformed_unicode_escape(text: str, line: int) -> None:
    with pytest.raises(InputError) as caught:
        parse_properties(text, "client.properties")
    assert caught.value.message.startswith("Malformed \\uxxxx encoding in a ")
    assert caught.value.message.endswith(f"on line {line} of client.properties")


def java_store_escape(text: str, is_key: bool) -> str:
    """Properties.saveConvert(text, escapeSpace=is_key, escapeUnicode=true), over UTF-16 code units."""
    units = text.encode("utf-16-le", "surrogatepass")
    out = []
    for index in range(0, len(units), 2):
        code = int.from_bytes(units[index:index + 2], "little")
        char = chr(code)
        if 61 < code < 127:
            out.append("\\\\" if char == "\\" else char)
        elif char == " ":
            out.append("\\ " if index == 0 or is_key else " ")
        elif char in "\t\n\r\f":
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r", "\f": "\\f"}[char])
        elif char in "=:#!":
            out.append("\\" + char)
        elif code < 0x20 or code > 0x7E:
            out.append(f"\\u{code:04X}")
        else:
            out.append(char)
    return "".join(out)


awkward_text = st.text(alphabet=st.one_of(st.sampled_from(" \t\n\r\f=:#!\\u\u00e9\u20ac"),
                                          st.characters(codec="utf-8")), max_size=20)


@given(st.dictionaries(awkward_text, awkward_text, max_size=6), st.sampled_from(["\n", "\r\n", "\r"]))
def test_round_trip_through_java_store_format(entries: dict[str, str], newline: str) -> None:
    text = "#Sat Nov 22 04:00:00 UTC 2026" + newline + "".join(
        f"{java_store_escape(k, True)}={java_store_escape(v, False)}{newline}" for k, v in entries.items())
    assert parse_properties(text) == entries


@given(st.dictionaries(st.text(alphabet="abc.xyz", min_size=1, max_size=8), st.text(alphabet="abc 123=:", max_size=8),
                       max_size=5),
       st.sampled_from(["=", ":", " ", " = ", "\t:\t"]), st.sampled_from(["", "  ", "\t", "\f "]))
def test_separators_indentation_and_comments_do_not_change_meaning(entries: dict[str, str], separator: str,
                                                                   indent: str) -> None:
    text = "".join(f"# comment\n{indent}{k}{separator}{java_store_escape(v, False)}\n\n! more\n"
                   for k, v in entries.items())
    assert parse_properties(text) == entries


@given(st.text(max_size=200))
def test_any_text_parses_or_reports_a_malformed_escape(text: str) -> None:
    try:
        parsed = parse_properties(text)
    except InputError as error:
        assert error.message.startswith("Malformed \\uxxxx encoding")
    else:
        assert all(isinstance(k, str) and isinstance(v, str) for k, v in parsed.items())


# -- ConfigDef's INT, LONG and BOOLEAN (java_int, java_boolean), against Java itself -------------------------

DIGITS = "0123456789\u0660\u0665\u06f3\u0967\u0e51\uff10\uff19\U0001d7ce\U0001d7d7"  # Arabic-Indic .. math bold
number_like = st.one_of(
    st.integers(-2**66, 2**66).map(str),
    st.builds(lambda blank, sign, zeros, digits, end: blank + sign + "0" * zeros + digits + end,
              st.sampled_from(["", " ", "\t", "\u00a0"]), st.sampled_from(["", "+", "-", "+-", "_"]),
              st.integers(0, 25), st.text(DIGITS + "_x", max_size=21), st.sampled_from(["", " ", "\n", "L"])),
    st.text(max_size=8))


@settings(max_examples=3, deadline=None)
@given(st.lists(number_like, min_size=150, max_size=150))
def test_int_and_long_are_javas_parse(java_parse: Callable[[str, list[str]], list[str]], values: list[str]) -> None:
    """ConfigDef: String.trim, then Integer.parseInt / Long.parseLong: a sign, Unicode decimal digits in the BMP
    (a digit beyond U+FFFF is two surrogates to Java), leading zeros, overflow refused."""
    for mode, bits in (("int", 32), ("long", 64)):
        ours = [java_int(java_trim(value), bits) for value in values]
        assert [str(v) if v is not None else "NFE" for v in ours] == java_parse(mode, values)


@pytest.mark.parametrize("text, expected", [
    ("000000000000015000", 15000), ("+15000", 15000), ("\u0661\u0665", 15), ("\uff11\uff15", 15),
    ("\U0001d7cf\U0001d7d3", None), ("2147483648", None), ("-2147483648", -2**31), ("0" * 5000 + "7", 7),
    ("1_000", None), ("+", None), ("", None)])
def test_int_by_hand(text: str, expected: int | None) -> None:
    assert java_int(text) == expected


@settings(max_examples=2, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(["true", "FALSE", " True\t", "fal\u017fe", "tru\u0117", "yes", "",
                                           "\u0130rue", "tRUE ", "false\u00a0"]),
                          st.text("trueFALSE\u017f\u0131\u0130 ", max_size=6)), min_size=100, max_size=100))
def test_boolean_is_javas(java_parse: Callable[[str, list[str]], list[str]], values: list[str]) -> None:
    """ConfigDef: String.trim, then equalsIgnoreCase "true" or "false" (the long s U+017F is an "s" to Java)."""
    ours = [java_boolean(java_trim(value)) for value in values]
    assert [{True: "true", False: "false", None: "invalid"}[v] for v in ours] == java_parse("boolean", values)


double_like = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(allow_nan=False, allow_infinity=False).map(float.hex),
    st.builds(lambda sign, whole, dot, part, exp, end: sign + whole + dot + part + exp + end,
              st.sampled_from(["", "+", "-"]), st.text("0123456789\u0660\u0669_", max_size=3),
              st.sampled_from(["", ".", ","]), st.text("0123456789", max_size=3),
              st.sampled_from(["", "e5", "E-2", "e", "p1", "e+"]),
              st.sampled_from(["", "d", "F", " ", "\u00a0", "x", "\u2003"])),
    st.sampled_from(["NaN", "-Infinity", "+NaN", "nan", "inf", "Infinityd", "0x.8p1", "0X1P-1f", "0x1.8", "."]),
    st.text(max_size=6))


def java_bits(value: float | None) -> str:
    """Double.doubleToLongBits, as ConfigParse.java prints it (every NaN as Java's one NaN)."""
    if value is None:
        return "NFE"
    return str(struct.unpack(">q", struct.pack(">d", float("nan") if math.isnan(value) else value))[0])


@settings(max_examples=3, deadline=None)
@given(st.lists(double_like, min_size=150, max_size=150))
def test_double_is_javas_parse(java_parse: Callable[[str, list[str]], list[str]], values: list[str]) -> None:
    """ConfigDef: String.trim, then Double.parseDouble: ASCII digits, a d/f suffix, hexadecimal with a p exponent;
    Python's float() took other scripts' digits, '_' and Unicode spaces, and refused the suffix and hex."""
    assert [java_bits(java_double(java_trim(value))) for value in values] == java_parse("double", values)
