"""How a player's name is told apart: the one key the game, the parser and the recognisers
compare names by, so "José" typed as "jose" or "Jean-Luc" as "jean luc" is the same player."""

from __future__ import annotations

import re
import unicodedata

# Latin letters that carry no separable accent, as people type them without the letter
# (Turkish dotless i, Maltese h with a bar, Catalan's l with a middle dot among them).
_PLAIN = str.maketrans({"ß": "ss", "ø": "o", "ł": "l", "æ": "ae", "œ": "oe", "đ": "d", "þ": "th", "ð": "d",
                        "ı": "i", "ħ": "h", "ŧ": "t", "ŀ": "l"})
# espeak-ng says the accented letters of Latin-1 and Latin Extended-A as letters (José, Zoë,
# Łukasz: decomposed, it says them worse), but spells out the code point of a letter past
# them ("Nguyễn": "N G U Y letter one E C five N") where it says the letter and its marks.
_ESPEAK_KNOWS_BELOW = 0x180


def folded(text: str) -> str:
    """Lower case with accents taken off ("Zoë" -> "zoe", "Łukasz" -> "lukasz")."""
    text = unicodedata.normalize("NFKD", text.lower().translate(_PLAIN))
    return "".join(c for c in text if not unicodedata.combining(c))


def for_espeak(text: str) -> str:
    """`text` as espeak-ng says it right: a letter it would spell out by its code point (the
    Vietnamese ễ, ỳ, ứ) given as the letter and its marks."""
    composed = unicodedata.normalize("NFC", text)  # a name typed decomposed: José as J-o-s-e-accent
    return "".join(unicodedata.normalize("NFD", c) if ord(c) >= _ESPEAK_KNOWS_BELOW else c for c in composed)


def as_written(name: str) -> str:
    """A name typed all in lower case, with the capitals a name is written with ("ana" ->
    "Ana", "jean-luc" -> "Jean-Luc", "o'brien" -> "O'Brien", but "ja'marr" -> "Ja'marr"):
    it starts the sentences it is in. A name typed with any capital ("mcKay") is as its
    player wrote it."""
    if not name.islower():
        return name

    def capital(m: re.Match) -> str:
        letter = m.group(2)
        return m.group(1) + (letter.upper() if len(letter.upper()) == 1 else letter)  # not "ß" -> "SS"

    # each part's first letter, a part begun by a hyphen or by one letter and an apostrophe
    return re.sub(r"(^|-|(?<=^\w)['’])(\w)", capital, name)


def name_key(name: str) -> str:
    """A player's name as names are compared: lower case, no accents, no hyphens, apostrophes
    or spaces ("José" -> "jose", "Jean-Luc" -> "jeanluc", "O'Neil" -> "oneil")."""
    return re.sub(r"[-'’\s]", "", folded(name))
