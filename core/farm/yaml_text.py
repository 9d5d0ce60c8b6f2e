"""YAML text for Open Job Description bundles, written by hand (no YAML library in the extension).

Block style throughout; every string is double-quoted with YAML's escapes (so that no value is ever
read as a number, a boolean or null), except multi-line text such as an embedded script, which is a
literal block scalar (``|``, ``|-`` or ``|+`` so that its trailing newlines come back exactly). A
string a literal block cannot hold as it is (leading blanks, a carriage return, a control character)
is double-quoted instead. Floats must be finite: YAML's .nan/.inf are no JSON and no job parameter.
"""
from __future__ import annotations

import math
import re

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_RESERVED = frozenset({"y", "yes", "n", "no", "true", "false", "on", "off", "null"})   # YAML 1.1 reads these
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\0": "\\0", "\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n",
            "\v": "\\v", "\f": "\\f", "\r": "\\r", "\x1b": "\\e"}
# printable to Python but line breaks or a byte-order mark to YAML: always escaped
_BREAKS = frozenset("\x85\u2028\u2029\ufeff")


def quoted(text: str) -> str:
    """``text`` as a YAML double-quoted scalar."""
    out = []
    for c in text:
        if c in _ESCAPES:
            out.append(_ESCAPES[c])
        elif c.isprintable() and c not in _BREAKS:
            out.append(c)
        elif ord(c) <= 0xFFFF:
            out.append(f"\\u{ord(c):04x}")
        else:
            out.append(f"\\U{ord(c):08x}")
    return '"' + "".join(out) + '"'


def _literal_block(text: str) -> bool:
    """Can ``text`` be a literal block scalar, read back unchanged?"""
    if "\n" not in text.rstrip("\n") or text[:1] in (" ", "\t", "\n"):
        return False
    return all((c.isprintable() and c not in _BREAKS) or c in "\n\t" for c in text)


def _scalar(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"YAML value {value!r}: only finite numbers")
        text = repr(value)   # YAML 1.1 readers (PyYAML) need a point in the mantissa: 1.0e-05, not 1e-05
        mantissa, e, exponent = text.partition("e")
        return text if "." in mantissa else f"{mantissa}.0{e}{exponent}"
    if isinstance(value, str):
        return quoted(value)
    raise TypeError(f"YAML value of type {type(value).__name__}")


def _key(key) -> str:
    if not isinstance(key, str):
        raise TypeError(f"YAML key of type {type(key).__name__}")
    return key if _PLAIN_KEY.match(key) and key.lower() not in _RESERVED else quoted(key)


def _block(text: str, indent: int) -> list[str]:
    """A literal block scalar's header and lines, its content ``indent`` spaces in."""
    body = text.rstrip("\n")
    trailing = len(text) - len(body)
    chomp = "-" if trailing == 0 else ("" if trailing == 1 else "+")
    pad = " " * indent
    lines = [(pad + line) if line else "" for line in body.split("\n")]
    return ["|" + chomp] + lines + [""] * (trailing - 1)


def _node(value, indent: int) -> list[str]:
    """The lines of a block collection ``value`` at ``indent`` spaces (a scalar is one line)."""
    pad = " " * indent
    if isinstance(value, dict) and value:
        lines = []
        for key, item in value.items():
            lines.extend(_entry(pad + _key(key) + ":", item, indent))
        return lines
    if isinstance(value, (list, tuple)) and value:
        lines = []
        for item in value:
            if isinstance(item, dict) and item:
                inner = _node(item, indent + 2)
                lines.append(pad + "- " + inner[0][indent + 2:])
                lines.extend(inner[1:])
            else:
                lines.extend(_entry(pad + "-", item, indent))
        return lines
    if isinstance(value, dict):
        return [pad + "{}"]
    if isinstance(value, (list, tuple)):
        return [pad + "[]"]
    return [pad + _scalar(value)]


def _entry(head: str, value, indent: int) -> list[str]:
    """``head`` (``key:`` or ``-``) followed by ``value``: on the same line, or as a nested block."""
    if isinstance(value, str) and _literal_block(value):
        block = _block(value, indent + 2)
        return [head + " " + block[0]] + block[1:]
    if isinstance(value, (dict, list, tuple)) and value:
        return [head] + _node(value, indent + 2)
    return [head + " " + _node(value, 0)[0]]


def dump(document: dict) -> str:
    """``document`` (dicts, lists, strings, finite numbers, booleans, None) as YAML text."""
    if not isinstance(document, dict):
        raise TypeError("a YAML document here is a mapping")
    return "\n".join(_node(document, 0)) + "\n"


__all__ = ["dump", "quoted"]
