"""Signs of tool poisoning: text the model reads and a person reviewing the tool does not see
(OWASP MCP Top 10; specs/doctor.md, "Poisoning signs"). Codex gives the model an MCP tool's
description whole (no length limit: `parse_mcp_tool` in codex-rs/tools/src/mcp_tool.rs) and
its schema's property names, descriptions and enum values as they are, and a skill's name and
description in its instructions; whatever hides there reaches the model.

The signs: characters that do not show (Unicode format characters such as zero-width spaces,
bidirectional controls that make text read otherwise than it is stored, tag characters that
spell invisible ASCII, fillers, variation selectors, control characters); text a rendered view
hides or buries (HTML comments, text after many blank lines, descriptions far longer than a
listing shows); and blocks addressed to the model (`<IMPORTANT>`, `<SYSTEM>`...). Each is
named with what hides shown escaped and short. Bounded: every pass is a regular expression
or a slice, so megabytes of hostile text cost milliseconds."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from codex_mcp.core.log_names import printable

#: A tool description longer than this is more than a listing shows a reviewer.
LONG_DESCRIPTION = 2000
LONG_PARAMETER = 1000
#: The Agent Skills format's own bound on a skill's description.
LONG_SKILL = 1024
#: Text after this many blank lines is below anything a listing shows.
BLANK_LINES = 8
QUOTE = 80
MAX_NAMED_CHARACTERS = 6

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
#: Every format character (category Cf, up to Unicode 16), and the invisible ones outside
#: it: fillers, variation selectors, the grapheme joiner, line/paragraph separators, and
#: control characters but tab, line feed and carriage return.
_HIDDEN = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0000-\U000e007f"
    "\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180d\u180f\u2028\u2029\u3164\uffa0"
    "\ufe00-\ufe0f\U000e0100-\U000e01ef\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
)
_BIDI_CHARS = re.compile(f"[{_BIDI}]")
_TAGS = re.compile("[\U000e0000-\U000e007f]+")
#: A joiner or variation selector inside an emoji sequence is how emoji are written.
_EMOJI_GLUE = re.compile("[\u200d\ufe0e\ufe0f]")
_TO_THE_MODEL = re.compile(
    r"<\s*(important|system|instructions?|hidden|secret|admin|critical|assistant|"
    r"prompt|context|ai|model)\b[^<>]{0,40}>",
    re.IGNORECASE,
)
#: BLANK_LINES blank lines and the blank space after them (every part unambiguous: no
#: backtracking, whatever the text).
_BLANK_RUN = re.compile(rf"\n(?:[ \t\r]*\n){{{BLANK_LINES}}}[ \t\r\n]*")


def _quote(text: str) -> str:
    """`text`'s start, escaped (a hidden character shows as `\\u200b`) and short."""
    shown = printable(text.strip()[:QUOTE], QUOTE)
    cut = len(shown) > QUOTE * 2 or len(text.strip()) > QUOTE
    return f"'{shown[: QUOTE * 2]}{'…' if cut else ''}'"


def _named(found: Counter[str]) -> str:
    named = ", ".join(
        f"U+{ord(c):04X}" + (f" x{n}" if n > 1 else "")
        for c, n in found.most_common(MAX_NAMED_CHARACTERS)
    )
    more = len(found) - MAX_NAMED_CHARACTERS
    return named + (f" and {more} more" if more > 0 else "")


def _hidden_characters(text: str) -> list[str]:
    found = Counter(_HIDDEN.findall(text))
    if not found:
        return []
    for glue in _EMOJI_GLUE.finditer(text):  # 👍🏽, 👨‍👩‍👧, ❤️ are not hidden text
        at = glue.start()
        before = text[at - 1] if at else ""
        if before and unicodedata.category(before) == "So":
            found[glue.group()] -= 1
    found = +found  # drop what the emoji took
    signs = []
    tags = _TAGS.findall(text)
    if tags:
        spelled = "".join(chr(ord(c) - 0xE0000) for c in "".join(tags)[: QUOTE + 1])
        signs.append(f"hidden text in Unicode tag characters, invisible: {_quote(spelled)}")
    bidi = Counter(c for c in found.elements() if _BIDI_CHARS.match(c))
    if bidi:
        signs.append(
            f"bidirectional control characters ({_named(bidi)}): the text reads otherwise "
            f"than the model gets it: {_around(text, bidi)}"
        )
    other = Counter(
        {c: n for c, n in found.items() if c not in bidi and not 0xE0000 <= ord(c) <= 0xE007F}
    )
    if other:
        signs.append(f"invisible characters ({_named(other)}): {_around(text, other)}")
    return signs


def _around(text: str, found: Counter[str]) -> str:
    """The text around the first of `found`, quoted (so escaped: the reader sees them)."""
    at = min(i for i in (text.find(c) for c in found) if i >= 0)
    start = max(0, at - QUOTE // 4)
    return _quote(text[start : start + QUOTE])


def _comments(text: str) -> list[str]:
    start = text.find("<!--")
    if start < 0:
        return []
    end = text.find("-->", start + 4)
    inside = text[start + 4 : end if end >= 0 else start + 4 + QUOTE * 2]
    count = text.count("<!--")
    several = f" ({count})" if count > 1 else ""
    unclosed = "" if end >= 0 else ", never closed: it hides the rest"
    return [f"HTML comment{several} a rendered view does not show{unclosed}: {_quote(inside)}"]


def _to_the_model(text: str) -> list[str]:
    tag = _TO_THE_MODEL.search(text)
    if tag is None:
        return []
    said = text[tag.end() : tag.end() + QUOTE * 2]
    name = tag.group(1).upper()
    return [f"a <{name}> block, words for the model: {_quote(said.split('</', 1)[0])}"]


def _buried(text: str) -> list[str]:
    for blank in _BLANK_RUN.finditer(text):
        lines = blank.group().count("\n") - 1
        if blank.end() < len(text):
            after = text[blank.end() : blank.end() + QUOTE * 2]
            return [f"text after {lines} blank lines: {_quote(after)}"]
    return []


def signs(text: object, limit: int = LONG_DESCRIPTION) -> list[str]:
    """The signs in `text` (a tool's or skill's description, a parameter's), in words; none
    for text that is not a string or hides nothing."""
    if not isinstance(text, str) or not text:
        return []
    found = _hidden_characters(text) + _to_the_model(text) + _comments(text) + _buried(text)
    if len(text) > limit:
        found.append(
            f"{len(text)} characters long: a reviewer sees its start, the model reads it all "
            f"(it ends {_quote(text[-QUOTE:])})"
        )
    return found


def name_signs(name: object) -> list[str]:
    """Only characters that do not show: what a name (a parameter's, an enum value) hides."""
    return _hidden_characters(name) if isinstance(name, str) else []
