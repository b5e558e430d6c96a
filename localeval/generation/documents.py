"""The user's documents: a folder of .txt, .md and .html files, or a JSON Lines file of chunks.

Every input is untrusted: a file that is not text (a NUL byte, not UTF-8), an empty folder, a
chunks line that is not an object with a non-empty string `text` and a string or integer `id`
is an InputError or ConfigError naming the file, the line and the field (exit 2), never a
traceback.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

from localeval.data.jsonl import bounded_lines
from localeval.data.text import is_blank
from localeval.errors import ConfigError, InputError

SUFFIXES = (".txt", ".md", ".html", ".htm")
MAX_FILE_BYTES = 50 << 20  # a document larger than this is refused, not read into memory
MAX_ID_CHARS = 500


@dataclass(frozen=True)
class Document:
    """One document's text, named by its path relative to the folder (the chunk ids' prefix)."""

    name: str
    text: str


@dataclass(frozen=True)
class Chunk:
    """A piece of a document: its stable id, its text and the document it is from."""

    id: str
    text: str
    document: str


class _TextOfHtml(HTMLParser):
    """The visible text of an HTML page: script and style left out, block ends as line breaks."""

    SKIPPED = frozenset({"script", "style", "head", "noscript", "template"})
    BLOCKS = frozenset({"p", "div", "br", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "section", "article", "pre", "blockquote"})

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self._skipping = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in self.SKIPPED:
            self._skipping += 1
        elif tag in self.BLOCKS:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self.SKIPPED:
            self._skipping = max(0, self._skipping - 1)
        elif tag in self.BLOCKS:
            self.parts.append("\n\n")

    def handle_data(self, data: str) -> None:
        if not self._skipping:
            self.parts.append(data)


def html_text(html: str) -> str:
    """The text a reader of the page sees, paragraphs kept apart by blank lines."""
    parser = _TextOfHtml()
    parser.feed(html)
    parser.close()
    lines = (" ".join(line.split()) for line in "".join(parser.parts).split("\n\n"))
    return "\n\n".join(line for line in lines if line)


_MARKDOWN_NOISE = re.compile(r"^\s{0,3}(#{1,6}\s+|[-*+]\s+|>\s?)|`{3}.*$", re.MULTILINE)


def markdown_text(text: str) -> str:
    """Markdown with its heading, list and quote markers and code fences dropped: they are not words of a sentence."""
    return _MARKDOWN_NOISE.sub("", text)


def read_text_file(path: Path, name: str) -> str:
    """A document's text; InputError (line 0: the whole file) for one that is binary or not UTF-8."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            raise InputError(name, 0, None, f"larger than {MAX_FILE_BYTES >> 20} MiB; split it or give --chunks")
        raw = path.read_bytes()
    except OSError as exc:
        raise InputError(name, 0, None, f"cannot be read ({exc.strerror or exc})") from None
    if b"\x00" in raw:
        raise InputError(name, 0, None, "is a binary file, not text (a NUL byte); leave it out of the folder")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(name, 0, None, f"is not UTF-8 text (byte {exc.start}); convert it or leave it out") from None
    if path.suffix.lower() in (".html", ".htm"):
        return html_text(text)
    if path.suffix.lower() == ".md":
        return markdown_text(text)
    return text


def read_folder(folder: str) -> list[Document]:
    """The folder's .txt, .md and .html files (recursively, sorted by path: the order never
    depends on the file system), each with text; ConfigError for a folder with none."""
    root = Path(folder)
    if not root.is_dir():
        raise ConfigError(f"{folder}: not a folder (give a folder of {', '.join(SUFFIXES)} files, or --chunks FILE)")
    paths = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
    documents = []
    for path in paths:
        name = path.relative_to(root).as_posix()
        text = read_text_file(path, str(path))
        if not is_blank(text):
            documents.append(Document(name, text))
    if not documents:
        raise ConfigError(f"{folder}: no document with text in it (looked for {', '.join(SUFFIXES)} files)")
    return documents


def _chunk_of(obj: object, path: str, number: int) -> Chunk:
    if not isinstance(obj, dict):
        raise InputError(path, number, None, f"expected a JSON object with 'id' and 'text', got {type(obj).__name__}")
    if "id" not in obj:
        raise InputError(path, number, "id", "missing")
    raw_id = obj["id"]
    if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)) or (isinstance(raw_id, str) and not raw_id.strip()):
        raise InputError(path, number, "id", "must be a non-empty string or an integer")
    if len(str(raw_id)) > MAX_ID_CHARS:
        raise InputError(path, number, "id", f"longer than {MAX_ID_CHARS} characters")
    text = obj.get("text")
    if "text" not in obj:
        raise InputError(path, number, "text", "missing")
    if not isinstance(text, str) or is_blank(text):
        raise InputError(path, number, "text", "must be a non-empty string")
    document = obj.get("document", obj.get("source", str(raw_id)))
    return Chunk(str(raw_id), text, str(document) if isinstance(document, (str, int)) else str(raw_id))


def read_chunks(path: str) -> list[Chunk]:
    """The user's own chunks, one JSON object a line ({"id", "text"}, optionally "document":
    which document it is from, for the spread over documents); ids must be unique."""
    chunks: list[Chunk] = []
    seen: dict[str, int] = {}
    try:
        stream = open(path, "rb")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    with stream:
        for number, raw in enumerate(bounded_lines(stream), start=1):
            if raw is None:
                raise InputError(path, number, None, "line too long; not read")
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw.decode("utf-8-sig" if number == 1 else "utf-8"))
            except UnicodeDecodeError:
                raise InputError(path, number, None, "not UTF-8 text") from None
            except ValueError as exc:
                raise InputError(path, number, None, f"not valid JSON ({exc})") from None
            chunk = _chunk_of(obj, path, number)
            if chunk.id in seen:
                raise InputError(path, number, "id", f"'{chunk.id}' is also the id of line {seen[chunk.id]}; ids must be unique")
            seen[chunk.id] = number
            chunks.append(chunk)
    if not chunks:
        raise ConfigError(f"{path}: no chunk in it (one JSON object a line, with 'id' and 'text')")
    return chunks
