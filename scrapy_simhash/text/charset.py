"""HTML bytes -> text: the charset (byte-order mark, the caller's encoding, the HTTP
``Content-Type`` charset, ``<meta charset>`` / ``<meta http-equiv>``, then sniffing: strict UTF-8,
strict GB18030, else cp1252 with replacement characters; :func:`decode_html`). It never raises on
undecodable bytes."""

from __future__ import annotations

import codecs
import re

from w3lib.encoding import (
    html_body_declared_encoding,
    http_content_type_encoding,
    read_bom,
    resolve_encoding,
)

#: Pages longer than this (in characters after decoding) are cut to this size before parsing,
#: after their ``<script>``/``<style>`` blocks are removed, so that a multi-megabyte page costs a
#: bounded time (under 0.5 s) instead of seconds or minutes. Main content beyond this point is lost.
MAX_HTML_CHARS = 1_000_000


#: Bytes beyond this are not decoded at all (a margin over :data:`MAX_HTML_CHARS` for scripts
#: that get removed and for multi-byte characters).
MAX_HTML_BYTES = 4 * MAX_HTML_CHARS


def _resolve(label: str | None) -> str | None:
    """Python codec name for an encoding label (GB2312/GBK -> gb18030), or None if unknown."""
    if not label:
        return None
    try:
        return resolve_encoding(label.strip())
    except Exception:  # noqa: BLE001 - junk labels (NUL bytes, non-ASCII) are "unknown"
        return None


def _decodes_strictly(data: bytes, encoding: str) -> str | None:
    """``data`` decoded strictly, allowing a multi-byte character cut at the end; else None."""
    try:
        decoder = codecs.getincrementaldecoder(encoding)("strict")
        return decoder.decode(data, final=False)
    except (UnicodeDecodeError, LookupError):
        return None


_SNIFFED = ("utf-8", "gb18030")


_HIGH_BYTES = bytes(range(128, 256))


_MAX_SNIFF_ERRORS = 16


_SNIFF_ERROR_RATIO = 200  # at most one undecodable spot per 200 non-ASCII bytes


def _is_utf16_or_32(encoding: str) -> bool:
    return encoding.replace("-", "").replace("_", "").lower().startswith(("utf16", "utf32"))


def decode_html(
    body: bytes, *, encoding: str | None = None, content_type: str | bytes | None = None
) -> tuple[str, str]:
    """Decode an HTML body; return ``(text, encoding used)`` (a Python codec name).

    The encoding is the byte-order mark's, else ``encoding``, else ``content_type``'s charset, else
    a ``<meta>`` charset in the first 4 KB, else sniffed (UTF-8, GB18030, cp1252); valid UTF-8
    overrules a declared charset, and undecodable bytes become replacement characters. Raises
    TypeError if ``body`` is not bytes-like, ValueError if ``encoding`` is not a known label.
    """
    if isinstance(body, (bytearray, memoryview)):
        body = bytes(body)
    if not isinstance(body, bytes):
        raise TypeError(
            f"body must be bytes, got {type(body).__name__}; pass response.body "
            "(or give already decoded text to extract())"
        )
    explicit = None
    if encoding is not None:
        if not isinstance(encoding, str):
            raise TypeError(f"encoding must be a str or None, got {type(encoding).__name__}")
        explicit = _resolve(encoding)
        if explicit is None:
            raise ValueError(
                f"encoding={encoding!r} is not a known encoding label; use a name such as "
                "'utf-8' or 'gbk', or None to detect it"
            )
    if len(body) > MAX_HTML_BYTES:
        body = body[:MAX_HTML_BYTES]

    bom_encoding, bom = read_bom(body)
    if bom_encoding is not None:
        enc = _resolve(bom_encoding) or "utf-8"
        return body[len(bom or b"") :].decode(enc, "replace"), enc
    if explicit is not None:
        return body.decode(explicit, "replace"), explicit

    declared = None
    if isinstance(content_type, bytes):
        content_type = content_type.decode("latin-1")
    if content_type:
        declared = _resolve(http_content_type_encoding(content_type))
    if declared is None:
        declared = html_body_declared_encoding(body)
        if declared is not None and _is_utf16_or_32(declared):
            declared = "utf-8"  # a meta tag in ASCII bytes cannot really mean UTF-16/32
    if declared is not None:
        if declared != "utf-8" and not body.isascii():
            text = _decodes_strictly(body, "utf-8")
            if text is not None:
                return text, "utf-8"
        return body.decode(declared, "replace"), declared

    for enc in _SNIFFED:
        text = _decodes_strictly(body, enc)
        if text is not None:
            return text, enc
    # A page cut in the middle of a character, or with a stray byte, is still UTF-8 or GB18030
    # if (almost) all its other non-ASCII bytes decode; cp1252 text fails on most of them.
    non_ascii = len(body) - len(body.translate(None, _HIGH_BYTES))
    for enc in _SNIFFED:
        text = body.decode(enc, "replace")
        errors = text.count("\ufffd")
        if errors <= _MAX_SNIFF_ERRORS and errors * _SNIFF_ERROR_RATIO <= non_ascii:
            return text, enc
    return body.decode("cp1252", "replace"), "cp1252"


_SCRIPT_START_BYTES_RE = re.compile(rb"<(script|style)\b")


def strip_scripts_bytes(body: bytes) -> bytes:
    """``body`` without its <script>/<style> elements, so that a page with a huge inline script
    keeps its text within the decoding cut (ASCII-compatible encodings; UTF-16 pages are cut as
    they are). Linear: each element's end is found with ``bytes.find``."""
    if body[:2] in (b"\xff\xfe", b"\xfe\xff"):
        return body
    lower = body.lower()
    out: list[bytes] = []
    pos = 0
    while True:
        match = _SCRIPT_START_BYTES_RE.search(lower, pos)
        if match is None:
            out.append(body[pos:])
            break
        out.append(body[pos : match.start()])
        end = lower.find(b"</" + match.group(1), match.end())
        if end < 0:
            break
        pos = end
    return b" ".join(out)
