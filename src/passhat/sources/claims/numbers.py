"""Counts as people write them: digits ("5", "1,000"), words ("five",
"twenty-five", "a dozen"), adverbs ("twice"), "in triplicate", Chinese numerals ("五",
"十二"), the items of a seed list and of a range. MAX_CLAIM bounds them all: a larger
count is read as "more than MAX_CLAIM" without converting its digits.
"""

from __future__ import annotations

import re

from passhat.accounting import MAX_K

MAX_CLAIM = MAX_K
"""A claim above this is refused by the audit (a typo or a date, never a plan)."""


MAX_LIST = 1000
"""Items of a seed list or shell loop counted, at most (a longer one reads as more)."""


UNITS = {
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "thirteen": 13,
    "fourteen": 14,
    "fifteen": 15,
    "sixteen": 16,
    "seventeen": 17,
    "eighteen": 18,
    "nineteen": 19,
}
TENS = {
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "seventy": 70,
    "eighty": 80,
    "ninety": 90,
}
_ADVERBS = {"once": 1, "twice": 2, "thrice": 3, "both": 2}
_PLICATE = {"duplicate": 2, "triplicate": 3, "quadruplicate": 4, "quintuplicate": 5}
FOREIGN = {
    **{"zwei": 2, "drei": 3, "vier": 4, "fünf": 5, "sechs": 6, "sieben": 7, "acht": 8},
    **{"neun": 9, "zehn": 10, "zwölf": 12, "zwanzig": 20},
    **{"zweimal": 2, "dreimal": 3, "viermal": 4, "fünfmal": 5, "zehnmal": 10},
    **{"deux": 2, "trois": 3, "quatre": 4, "cinq": 5, "six": 6, "sept": 7, "huit": 8},
    **{"neuf": 9, "dix": 10, "douze": 12, "vingt": 20},
    **{"dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "seis": 6, "siete": 7, "ocho": 8},
    **{"nueve": 9, "diez": 10, "doce": 12, "veinte": 20},
    **{"dois": 2, "duas": 2, "três": 3, "quatro": 4, "sete": 7, "oito": 8, "nove": 9, "dez": 10},
    **{"doze": 12, "vinte": 20},
    **{"два": 2, "две": 2, "двух": 2, "двум": 2, "три": 3, "трех": 3, "трёх": 3, "трем": 3},
    **{"трём": 3, "четыре": 4, "четырех": 4, "четырёх": 4, "пять": 5, "пяти": 5},
    **{"шесть": 6, "шести": 6, "семь": 7, "семи": 7, "восемь": 8, "восьми": 8},
    **{"десять": 10, "десяти": 10, "двадцать": 20, "двадцати": 20},
    **{"двумя": 2, "тремя": 3, "четырьмя": 4, "пятью": 5, "десятью": 10},
    **{"cent": 100, "cien": 100, "cem": 100, "cento": 100, "hundert": 100, "сто": 100},
    **{"beide": 2, "beiden": 2, "ambas": 2, "ambos": 2, "entrambe": 2, "entrambi": 2},
    **{"оба": 2, "обе": 2, "обоих": 2, "обоим": 2},
    **{"due": 2, "tre": 3, "quattro": 4, "cinque": 5, "sette": 7, "otto": 8, "dieci": 10},
    **{"dodici": 12, "venti": 20},
    **{"twee": 2, "drie": 3, "vijf": 5, "zes": 6, "zeven": 7, "negen": 9, "tien": 10},
}
"""Counts in German, French, Spanish, Portuguese, Russian (its cases after "по", "из", "с":
"трёх", "пяти", "тремя"), Italian and Dutch as their run counts are written ("dreimal wiederholt", "répétée trois
fois", "repetido tres veces", "média de três execuções", "из пяти запусков")."""
KOREAN = {
    "두": 2,
    "세": 3,
    "네": 4,
    "다섯": 5,
    "여섯": 6,
    "일곱": 7,
    "여덟": 8,
    "아홉": 9,
    "열": 10,
}
"""Korean's native counts, read before 번 ("세 번 반복": three times)."""
_WORD_NUMBERS = {**UNITS, **TENS, "a dozen": 12, "dozen": 12, "a hundred": 100, "hundred": 100}
_CHINESE_DIGITS = {
    "一": 1,
    "二": 2,
    "两": 2,
    "兩": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}


def number(word: str) -> int | None:
    """A count written in digits ("5", "1,000"), words ("five", "twenty-five", "a dozen",
    "twice", "triplicate", "trois", "пяти", Korean "세") or Chinese numerals ("五", "十二"); MAX_CLAIM + 1 for any count
    above MAX_CLAIM; None for no count. Never converts more digits than MAX_CLAIM has, so
    a 5,000-digit number is cheap."""
    text = word.strip().lower().replace(",", "")
    if not text:
        return None
    if text.isascii() and text.isdigit():
        stripped = text.lstrip("0") or "0"
        if len(stripped) > len(str(MAX_CLAIM)):
            return MAX_CLAIM + 1
        value = int(stripped)
        return min(value, MAX_CLAIM + 1) or None
    text = re.sub(r"\s+", " ", text)
    for table in (_ADVERBS, _PLICATE, _WORD_NUMBERS, FOREIGN, KOREAN):
        if text in table:
            return table[text]
    parts = re.split(r"[- ]", text)
    if len(parts) == 2 and parts[0] in TENS and parts[1] in UNITS:
        return TENS[parts[0]] + UNITS[parts[1]]
    return _chinese(text)


def _chinese(text: str) -> int | None:
    """一 .. 九十九 and 百 ("三" 3, "十二" 12, "二十" 20, "一百" 100); None otherwise."""
    if not text or any(c not in _CHINESE_DIGITS and c not in "十百" for c in text):
        return None
    if text in ("百", "一百"):
        return 100
    if "十" in text:
        tens, _, units = text.partition("十")
        high = _CHINESE_DIGITS.get(tens, 0 if tens else 1) if len(tens) <= 1 else None
        low = _CHINESE_DIGITS.get(units, 0 if not units else -1) if len(units) <= 1 else None
        if high is None or low is None or low < 0 or (tens and high == 0):
            return None
        return high * 10 + low or None
    return _CHINESE_DIGITS.get(text) if len(text) == 1 else None


def count_list(items: str) -> int:
    """The number of items of "0, 1 and 2" or "0 1 2" (at most MAX_LIST + 1 counted)."""
    return min(len(re.findall(r"\d+", items[: MAX_LIST * 12])), MAX_LIST + 1)


def count_range(lo: str, hi: str) -> int | None:
    """Items of the range lo-hi ("seeds 1-5": 5); None for no range (hi <= lo)."""
    if len(lo) > 9 or len(hi) > 9:
        return MAX_CLAIM + 1
    span = int(hi) - int(lo) + 1
    return min(span, MAX_CLAIM + 1) if span >= 2 else None
