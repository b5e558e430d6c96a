"""Escaping at the point of output, one function per format.

Every value a report shows can come from a results file someone else wrote, so
each writer passes every value through the function for its format, at the
moment it writes it: nothing is trusted because an earlier step "should" have
cleaned it. Besides markup, each removes what would mislead a reader: control
characters (terminal escape sequences, XML-invalid characters) and the Unicode
bidirectional overrides that reorder what a cell appears to say.
"""

from __future__ import annotations

import re
from html import escape as _html_escape
from typing import Any
from xml.sax.saxutils import escape as _xml_escape
from xml.sax.saxutils import quoteattr as _xml_quoteattr

MAX_CELL_CHARS = 200  # one value in a table; the full text stays in the results file

# Bidirectional embeddings, overrides and isolates (and the marks): they reorder
# the text around them, so "evil.exe" can display as "exe.live".
_BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
_BIDI_RE = re.compile(f"[{_BIDI}]")
_CONTROL_RE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # keeps tab and newline
# What would break a line or a table row: newline, tab, and the Unicode line and paragraph
# separators (str.splitlines and some viewers end a line there).
_ONE_LINE_RE = re.compile("[\n\t\u2028\u2029]")
# XML 1.0 admits tab, LF, CR and U+0020 upwards, minus surrogates and U+FFFE/U+FFFF.
_XML_INVALID_RE = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# What can do harm in a table cell: "|" ends the cell, "`" opens code, "[", "]" and
# "!" make links and remote images (a tracking pixel); "<" and "&" are escaped as
# HTML. Emphasis characters only change how text looks, so names keep their "_".
_MARKDOWN_SPECIAL_RE = re.compile(r"([\\`|\[\]!])")


def _visible(text: str) -> str:
    """Bidi controls and control characters shown as escapes, so nothing hides or reorders."""
    text = _BIDI_RE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return _CONTROL_RE.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def shorten(text: str, limit: int = MAX_CELL_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def plain(value: Any) -> str:
    """A value as safe plain text on one line: for terminals and log lines."""
    return _ONE_LINE_RE.sub(" ", _visible(str(value)))


def html_text(value: Any, limit: int | None = MAX_CELL_CHARS) -> str:
    """Text for HTML element content or a quoted attribute."""
    text = _visible(str(value))
    return _html_escape(shorten(text, limit) if limit else text, quote=True)


def xml_text(value: Any) -> str:
    """Text for XML element content."""
    return _xml_escape(_XML_INVALID_RE.sub("\ufffd", _visible(str(value))))


def xml_attribute(value: Any) -> str:
    """A quoted XML attribute value, quotes included."""
    return _xml_quoteattr(_XML_INVALID_RE.sub("\ufffd", _visible(str(value))).replace("\n", " "))


def markdown_cell(value: Any, limit: int = MAX_CELL_CHARS) -> str:
    """Text for one Markdown table cell: no line breaks, no markup, no HTML."""
    text = shorten(plain(value).replace("\r", " "), limit)
    text = _html_escape(text, quote=False)
    return _MARKDOWN_SPECIAL_RE.sub(r"\\\1", text)
