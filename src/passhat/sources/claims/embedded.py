"""Prose inside data files and scripts: comments (`# run each task 5 times`,
`// 3 seeds`, `;; runs with four seeds`, `-- 3 runs`, `% 5 trials`), docstrings and string values (`"notes": "mean over three seeds"`,
`description: each task ran 5 times`), each a block of its own line, read by the prose
rules as a README's sentences are.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from passhat.sources.claims.sentences import SENTENCE_END, Block

_COMMENT = re.compile(r"(?:(?:^|\s)(?:#+|//)|^\s*(?:;{1,4}|--|%{1,2})(?=\s))\s?(?P<text>[^\n]*)$")
"""A comment: `#` and `//` anywhere; at a line's start only, the comments of Lisp and
Clojure (`;;`), of Lua, Haskell and SQL (`--`) and of MATLAB (`%`), each before a space."""
_STRING = re.compile(r"\"(?P<text>(?:[^\"\\\n]|\\.){1,2000})\"|'(?P<single>[^'\n]{1,2000})'")
_YAML_VALUE = re.compile(r"^\s*-?\s*[\w.-]+\s*:\s+(?P<text>[^\"'{\[|>#][^#\n]*)$")
_WORDS = re.compile(r"[^\W\d_]+\s+\S+\s+\S")
"""Three words at least: a string that is a sentence, not a name or a path."""
_CJK_SENTENCE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]{2}[^\n]{0,40}?[，。、；,]")
"""A sentence in Chinese, Japanese or Korean, written without spaces: characters up to a
comma or a full stop of the sentence ("由于数据集划分的随机性，运行10次取平均值")."""


def _sentence_like(text: str) -> bool:
    """Whether a string is a sentence (three words, or CJK text with its punctuation), not a
    name, a key or a path."""
    return bool(_WORDS.search(text) or _CJK_SENTENCE.search(text))


DOCSTRING = re.compile(r"\"\"\"|'''")
"""A docstring's quotes (attached.py reads the lines between them too)."""
_MODEL_TEXT = re.compile(
    r"[\"']?(?:content|text|output|outputs|message|messages|completion|response|transcript|"
    r"prompt|instruction|instructions|input|question|answer|reasoning|thought|system|user|"
    r"assistant)[\"']?\s*:\s*$",
    re.I,
)
"""A key whose value a model wrote or was given (a prompt, a transcript): data, not the
write-up, so never read for claims ("I ran the tests 3 times" in a reply claims nothing)."""


_CODE = re.compile(
    r"[={}\"$\\]|;(?!\s+[^\W\d_])|(?<![\s-])[<>]|[<>](?!\s)|[A-Za-z0-9_]\((?!(?:19|20)\d\d[a-z]?\))|(?<![\w-])--?[a-zA-Z]|^\s*[@\[]|^\s*-?\s*[\w.-]+\s*:(?:\s|$)|"
    r"^\s*(?:(?:from\s+[\w.]+\s+)?import|return|raise|yield|assert|del|pass|break|continue|global|"
    r"nonlocal|lambda|await|const|let|var|function|export|echo|cd|python3?|bash|source|fi|done|"
    r"esac)\b|^\s*(?:def|class|if|elif|else|for|while|try|except|finally|with|async)\b.*:\s*$"
)
"""What makes a line of a data file or script code, not prose: an assignment, a semicolon
ending a statement (not one before a word: "in nats; lower is better"), a call (an
ASCII name before its parenthesis: "训练结果(验证集…)" and a citation "Jordan(2002)" are
prose), a brace, a tag or an
operator `<`/`>` (not a comparison spaced as prose writes it, "P < 0.05", nor an arrow
"a -> b"), a flag, a key, a keyword opening a statement."""
_PROSE = re.compile(r"(?<![^\W\d_])[^\W\d_]+\s+\S+\s+\S|[\u3040-\u30ff\u4e00-\u9fff]{3}")
"""Three words, or three CJK characters: a line of prose (a word is tried from its first
letter only, so a line of one long word is read once, not once a letter)."""


def bare_prose(line: str) -> bool:
    """Whether a line of a data file or script, neither comment nor string, is prose: a
    docstring's or comment's line whose markers were left out of an excerpt, a YAML block
    scalar's line, a note in a script ("- run each task 3 times (consistency check)"); a
    two-way arrow between words is prose's, as "a -> b" is ("the host<->device copy")."""
    return bool(_PROSE.search(line)) and not _CODE.search(_TWO_WAY.sub(" ", line))


_TWO_WAY = re.compile(r"(?<=\w)<->(?=\w)")
"""A two-way arrow between two words ("host<->device"), not an operator of the code."""


def _parts(line: str) -> Iterator[str]:
    """Each comment and sentence-like string of one line."""
    comment = _COMMENT.search(line)
    code = line[: comment.start()] if comment else line
    if comment and comment.group("text").strip() and not line.lstrip().startswith("#!"):
        yield line  # the code too: "num_train_epochs: 3  # 3 epochs" is training's
    for match in _STRING.finditer(code):
        group = "text" if match.group("text") is not None else "single"
        if _sentence_like(match.group(group)) and not _MODEL_TEXT.search(code[: match.start()]):
            yield match.group(group)
    value = _YAML_VALUE.match(code)
    if (
        value
        and _WORDS.search(value.group("text"))
        and not _MODEL_TEXT.search(code[: value.start("text")])
    ):
        yield value.group("text")


_FULL_COMMENT = re.compile(r"^\s*(?:#+|//|(?:;{1,4}|--|%{1,2})(?=\s))\s?")
_CONTINUES = re.compile(r"^\s*(?:(?:#+|//|;{1,4}|--|%{1,2})\s*)?[a-z(\-`]")
"""A comment line that goes on with the sentence of the comment above it."""


def _joined(parts: list[tuple[int, str, bool]]) -> Iterator[Block]:
    """Consecutive comment or docstring lines of one sentence as one block (`# For a smoke
    check use` then `# --num-trials 5 first.`), each line keeping its number; other parts
    alone."""
    index = 0
    while index < len(parts):
        number, text, comment = parts[index]
        texts, starts, offset = [text], [0], len(text) + 1
        while (
            comment
            and index + 1 < len(parts)
            and len(texts) < 8
            and parts[index + 1][0] == number + len(texts)
            and parts[index + 1][2]
            and _CONTINUES.match(parts[index + 1][1])
            and not SENTENCE_END.search(texts[-1])
        ):
            index += 1
            following = _FULL_COMMENT.sub(lambda m: " " * len(m.group(0)), parts[index][1])
            texts.append(following)
            starts.append(offset)
            offset += len(following) + 1
        yield Block(" ".join(texts), tuple(starts), number)
        index += 1


def embedded_blocks(lines: list[str]) -> Iterator[Block]:
    """Each comment, docstring line and sentence-like string value of a data file or
    script, as a block at its own line (a comment's sentence broken across lines read
    whole)."""
    in_docstring = False
    parts: list[tuple[int, str, bool]] = []
    for number, line in enumerate(lines, start=1):
        quotes = len(DOCSTRING.findall(line))
        if in_docstring or quotes:
            text = DOCSTRING.sub("   ", line)
            if _WORDS.search(text):
                parts.append((number, text, True))
            in_docstring = in_docstring != (quotes % 2 == 1)
            continue
        full = bool(_FULL_COMMENT.match(line))
        if not full and bare_prose(line):
            parts.append((number, line, True))
            continue
        parts.extend((number, text, full) for text in _parts(line))
    yield from _joined(parts)
