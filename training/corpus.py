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


# Babble's talkers when the table talks over a call (`training.build --babble talk`): long
# running sentences, as a table's other conversations are. Written for training; the
# benchmark's babble reads its own lines.
TABLE_TALK = """\
we stayed at my aunt's place for the whole summer and it rained almost every single day
the bus driver waited for us even though we were running at least ten minutes late
I keep meaning to fix that shelf in the hallway but there is always something else
when we were kids we used to ride our bikes down to the river after school
the concert was sold out so we listened from the park across the road instead
he changed jobs again and now he works from home three days a week
my sister is learning to drive and my father is far more nervous than she is
they renovated the old cinema and now it shows films from the fifties on sundays
I could not find my keys this morning so I climbed in through the kitchen window
the soup needs more salt but nobody wants to say it to the cook
our neighbours have a dog that barks at every single leaf that falls
I read somewhere that octopuses can taste things with their arms
we missed the last ferry and had to sleep in the car at the harbour
she makes the best lemon cake I have ever eaten and refuses to share the recipe
the new manager wants everyone in the office by eight which is not going to happen
I tried running in the mornings but the alarm clock always wins
there is a market in the square every saturday with cheese and honey and old records
he told the same joke at the wedding and the whole room went quiet
the printer at work jams whenever someone is in a hurry
we walked along the cliffs until the fog came in and we could not see our feet
my grandmother still writes letters by hand and sends them with pressed flowers
the plumber came on tuesday and said the pipes were older than the house
I am not sure we booked the right hotel it looked much bigger in the pictures
the kids built a fort out of every cushion in the living room
our flight was delayed so we ate terrible sandwiches at the airport for hours
he bought a bread machine and now we have bread for breakfast lunch and dinner
the football match went to extra time and the whole street was shouting
she has started painting again mostly boats and lighthouses and stormy skies
you would not believe how many tomatoes came up in the garden this year
the museum was closed for repairs so we spent the afternoon at a cafe instead
my phone fell in the lake and somehow it still works
I think the heating is broken again it has been cold in the flat all week
we signed up for salsa lessons and I have stepped on everybody's feet
the train was so crowded that I stood with my face in someone's backpack
he grows chillies on the balcony and they are far too hot to eat
I finally cleared out the attic and found my old school reports
they are building a new bridge over the river and the traffic is awful
my cousin moved to the mountains and now he only talks about snow
we found a little restaurant by the harbour that only serves fish caught that morning
the cat learned to open the fridge so we had to put a lock on it
I have been trying to learn italian on my phone for about two years now
the wind took our umbrella straight out to sea
she ran the marathon in the rain and still finished before lunch
the library fines were higher than the price of the book
we watched the whole series in one weekend and now I do not know what to do
his car broke down on the motorway and he waited three hours for help
the bakery gives away yesterday's bread at closing time
I always forget whose birthday it is until the morning of it
my boss sent an email at midnight asking if anyone was still awake
the festival moved to the old airfield because the park was flooded
they got married on a beach and the wind blew the cake over
I planted an apple tree last year and it has given us exactly one apple
the power went out during dinner so we finished by candlelight
we argued for an hour about which way the map was facing
the dentist said I should floss more which is what he says every time
there was a fox in the garden this morning just sitting on the bench
my brother collects old radios and the spare room is full of them
the shop on the corner sells everything from nails to birthday cards
I walked to work today for the first time and it only took twenty minutes
we tried to follow the recipe but the oven had other ideas
""".splitlines()

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
