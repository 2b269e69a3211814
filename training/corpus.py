"""What the training voices say: calls in the ways people say them, and table chatter.

Each item is the text given to a synthesiser and its label, the token sequence the
recogniser must spell (`companion.listen.tokens`). Player names are said as names from a
long list and labelled `<name>`; any word outside the grammar is `<unk>`.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from companion.listen.recogniser import PLURAL as FACE_PLURAL
from companion.listen.recogniser import SINGULAR as FACE_SINGULAR
from companion.listen.tokens import NAME, number_tokens, word_token

NAMES = """ana ben cleo dan eva finn gus hana ivan jo kai lena max nina omar pia quinn
rosa sam tom uma vic wes yara zoe alex bob carla diego emma felix gina hugo iris jack kim
leo mia noah olga paul rita sofia theo ursula vera will xavier yusuf zara amir bea carlos
dora eli frida george helen igor julia karl lucy marco nadia oscar petra raj sara tariq
ulla victor wendy yuki adam bella chen dev erik fatima grace hans ines jonas kate liam
maya nils oliver priya rafael sven tina umar val wanda alice boris chloe david elena frank
""".split()

LEADS = ["", "", "", "", "i bid", "make it", "okay", "okay i bid", "i'll go", "i say", "um",
         "so", "i'll say", "okay make it", "um i bid", "so i bid"]
TAILS = ["", "", "", "", "", "", "please"]
COMMANDS = ["undo", "take it back", "repeat", "say again", "status", "what's the bid", "yes",
            "no", "okay yes", "no no", "yes please"]

# Ordinary table talk, with sound-alikes of the calls among it ("do you know", "call the").
CHATTER_WORDS = """well that was close who is next pass me the chips did you see my phone
what time is it we should order pizza i think he is bluffing no way you are lying again
this is fun my cup is empty where did that die go hold on a second let me look can i get a
drink who wants another round i am out of here that was lucky do you know the rules call
the waiter dude come on spot the difference calls are hard double check shake it harder
look at this mine is blue yours is red nice try not bad good game shuffle faster my turn
your turn his turn her turn seriously honestly maybe later tonight tomorrow weekend coffee
beer water glass table chair window kitchen music song volume louder quieter funny story
remember last time everybody laughs stop laughing the cat the dog outside raining sunny
""".split()
CHATTER_SENTENCES = [
    "do you know what time it is", "call the waiter please", "pass the salsa", "dude seriously",
    "stop laughing", "that was a good one", "who is winning", "I have two kids", "five minutes",
    "give me a second", "I need a drink", "where are my glasses", "look at that", "no way",
    "are you sure about that", "my turn already", "it's so loud in here", "I doubt that",
    "call me later", "what did he say", "the pizza is here", "shake it again", "nice one",
    "I love this game", "pass me the cup", "how much is that", "do it again", "pick a card",
    "double or nothing", "four more years", "back in a minute", "take a seat", "see you tomorrow",
    "make it quick", "okay let's go", "ten o'clock", "one more round", "six of one half a dozen",
]


# The game's Spanish words are said many ways at a real table, and each synthesiser knows
# one ("calza": espeak-ng says "kaltsa", festival "kahlzuh"). Spellings that make the
# synthesisers say the others; the label stays the word.
SAID_AS = {
    "calza": ("calsa", "kahlza", "kahl sah"),
    "dudo": ("doodo", "doo doh"),
    "pacos": ("pakohs", "pah kohs"),
    "paco": ("pahko", "pah koh"),
    "palifico": ("paleefeeko", "paleefico", "pa lee fee ko"),
}


def said_as(text: str, rng: random.Random, keep: float = 0.5) -> str:
    """`text` for a synthesiser, each Spanish word kept with probability `keep`, otherwise
    respelt one of the other ways it is said."""
    return " ".join(rng.choice(SAID_AS[w]) if w in SAID_AS and rng.random() >= keep else w
                    for w in text.split())


@dataclass(frozen=True)
class Item:
    text: str  # what the synthesiser says
    tokens: tuple[str, ...]  # what the recogniser must spell
    kind: str  # bid, number, challenge, named, hand, command, chatter


def spell(text: str, names: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The token label of a text: numbers as words, names as <name>, the rest by word."""
    out: list[str] = []
    for word in re.sub(r"[^a-z' ]+", " ", text.lower()).split():
        out.append(NAME if word in names else word_token(word.strip("'") if word != "i'll"
                                                              and word != "what's" else word))
    return tuple(out)


def _wrap(rng: random.Random, call: str) -> str:
    return " ".join(p for p in (rng.choice(LEADS), call, rng.choice(TAILS)) if p)


def _count(rng: random.Random, max_count: int) -> int:
    # Most bids are small; every count up to the largest still comes up.
    return rng.randint(1, 12) if rng.random() < 0.6 else rng.randint(1, max_count)


def bid(rng: random.Random, max_count: int = 40) -> Item:
    n, face = _count(rng, max_count), rng.randint(1, 6)
    if n == 1 and rng.random() < 0.7:
        words = f"{rng.choice(('one', 'a'))} {rng.choice(FACE_SINGULAR[face])}"
    else:
        words = f"{' '.join(number_tokens(n))} {rng.choice(FACE_PLURAL[face])}"
    text = _wrap(rng, words)
    return Item(text, spell(text), "bid")


def number(rng: random.Random, max_count: int = 40) -> Item:
    n = rng.randint(0, 12) if rng.random() < 0.5 else rng.randint(0, max_count)
    lead = rng.choice(["", "", "", "", "um", "okay", "so"])
    text = " ".join(p for p in (lead, " ".join(number_tokens(n))) if p)
    return Item(text, spell(text), "number")


def challenge(rng: random.Random) -> Item:
    word = rng.choice(("dudo", "dudo", "calza", "calza", "palifico"))
    text = " ".join(p for p in (rng.choice(["", "", "", "okay", "um", "so"]), word) if p)
    return Item(text, spell(text), "challenge")


def named(rng: random.Random) -> Item:
    name = rng.choice(NAMES)
    text = f"{name} calza" if rng.random() < 0.85 else f"{name} dudo"
    return Item(text, spell(text, frozenset(NAMES)), "named")


def hand(rng: random.Random) -> Item:
    name = rng.choice(NAMES)
    dice = " ".join(rng.choice(("one", "two", "three", "four", "five", "six"))
                    for _ in range(rng.randint(1, 5)))
    text = f"{name} {dice}"
    return Item(text, spell(text, frozenset(NAMES)), "hand")


def command(rng: random.Random) -> Item:
    text = rng.choice(COMMANDS)
    return Item(text, spell(text), "command")


def chatter(rng: random.Random) -> Item:
    if rng.random() < 0.5:
        text = rng.choice(CHATTER_SENTENCES)
    else:
        text = " ".join(rng.choice(CHATTER_WORDS) for _ in range(rng.randint(2, 7)))
    return Item(text, spell(text), "chatter")


MIX = [(bid, 0.42), (number, 0.16), (challenge, 0.09), (named, 0.05), (hand, 0.07),
       (command, 0.09), (chatter, 0.12)]


def items(count: int, seed: int, max_count: int = 40) -> list[Item]:
    rng = random.Random(seed)
    makers, weights = zip(*MIX)
    out = []
    for _ in range(count):
        maker = rng.choices(makers, weights)[0]
        out.append(maker(rng, max_count) if maker in (bid, number) else maker(rng))
    return out


if __name__ == "__main__":
    for item in items(30, 1):
        print(f"{item.kind:9} {item.text!r:40} {' '.join(item.tokens)}")
