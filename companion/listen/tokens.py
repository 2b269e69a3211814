"""The words the call recogniser spells its output in, one network output each.

Every word of the call grammar is a token; the words people wrap around a call ("I bid",
"make it", "okay") are tokens too, so the network hears them as what they are instead of
mistaking them for a count. `<name>` stands for any player's name (names change every game:
which player it was is settled apart, by comparing with the names said at start-up), and
`<unk>` for any other word, which is how table chatter is told from a call.
"""

from __future__ import annotations

from companion.calls import number_words

BLANK = "<blank>"  # CTC's "no new word in this frame"
NAME = "<name>"
UNKNOWN = "<unk>"

NUMBERS = ("zero one two three four five six seven eight nine ten eleven twelve thirteen "
           "fourteen fifteen sixteen seventeen eighteen nineteen twenty thirty forty").split()
FACES_PLURAL = ("ones", "aces", "pacos", "twos", "threes", "fours", "fives", "sixes")
FACES_SINGULAR_EXTRA = ("ace", "paco", "a")  # "one ace", "a six"
CHALLENGES = ("dudo", "calza", "palifico")
COMMAND_WORDS = ("undo", "take", "it", "back", "repeat", "status", "whats", "the", "bid",
                 "say", "again", "yes", "no")
FILLER_WORDS = ("i", "make", "okay", "go", "ill", "so", "um", "please")

TOKENS: tuple[str, ...] = (BLANK, *NUMBERS, *FACES_PLURAL, *FACES_SINGULAR_EXTRA, *CHALLENGES,
                           *COMMAND_WORDS, *FILLER_WORDS, NAME, UNKNOWN)
INDEX: dict[str, int] = {t: i for i, t in enumerate(TOKENS)}
assert len(INDEX) == len(TOKENS), "a token is listed twice"

# Filler tokens may come before or after a call without changing it.
FILLERS = frozenset(INDEX[w] for w in (*FILLER_WORDS, "bid", "say", "it", "the"))
# How a word of ordinary text is spelt in tokens (text normalised to lower case, no
# punctuation); "what's" and "I'll" are one token each.
WORD_ALIASES = {"what's": "whats", "i'll": "ill", "ok": "okay", "uh": "um", "er": "um"}


LARGEST_TOKEN_NUMBER = 49  # the tokens stop at "forty": "forty nine" is the largest number spelt


def number_tokens(n: int) -> list[str]:
    """21 -> ["twenty", "one"]; numbers up to LARGEST_TOKEN_NUMBER are spelt."""
    if not 0 <= n <= LARGEST_TOKEN_NUMBER:
        raise ValueError(f"no tokens for the number {n}")
    return number_words(n).split()


def word_token(word: str) -> str:
    """One word of a transcript -> its token (`<unk>` for anything the grammar lacks)."""
    word = WORD_ALIASES.get(word, word)
    return word if word in INDEX and word not in (BLANK, NAME, UNKNOWN) else UNKNOWN
