"""What the speech benchmark says: its calls, chatter and babble lines, the held-out real
speaker's takes, the voices and the noise conditions (text and plans only; no audio).

Shared by `benchmarks/speech.py` and the scripted games in `benchmarks/games.py`.
"""

from __future__ import annotations

import hashlib
import json
import random
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

ROOT = Path(__file__).resolve().parents[1]
PLAYERS = ("Ana", "Ben", "Cleo")
SEED = 99  # the benchmark's; training uses 22
VOICE_SEED = 99  # festival voice settings of the benchmark's speakers
BABBLE_VOICE_SEED = 98  # ... and of the babble's talkers
FESTIVAL_VOICES, QUICK_VOICES = 12, 4
SNRS, QUICK_SNRS = (24, 18, 12, 6), (18, 6)
NOISES = ("babble", "pink")
LEAD_S, TAIL_S = 0.4, 0.6  # room before and after each utterance
PEAK = 0.3  # speech peak level (of full scale) before noise: a call at arm's length
FLOOR = 3.0  # room hiss (LSB standard deviation): a real room is never digitally silent
RATE = 16000
REAL_DIR = ROOT.parent / "shared" / "data" / "speech-real-dev"
REAL_TAKES, QUICK_REAL_TAKES = 25, 1  # takes per digit of the held-out speaker
LOFO_FAMILIES = ("espeak", "piper", "kokoro")
MAX_COUNT = 30
CORPUS_VERSION = 1  # bump when the way files are made changes (the cache key includes it)

# Table talk that must not become a call: none of these is in training/corpus.py's lists.
# Sound-alikes of calls on purpose ("do you know", "call the taxi", "I doubt that ...").
CHATTER = """\
do you know
do you know where the bottle opener is
call the taxi
call the taxi before midnight
pass me the pizza
pass me the pizza while it is hot
hmm I doubt that
I doubt that very much
five minutes left
we have five minutes left
dude that was brutal
two dozen eggs in the fridge
three of them went home early
the bus comes at seven
my daughter turned six last week
nine lives like a cat
it was twenty degrees today
I had four cups of coffee
grab me a napkin
whose phone keeps buzzing
the candle is almost out
you always pick the blue cup
I am keeping an eye on you
could you turn the lamp on
that is a bold move
he is sweating already
she never blinks when she lies
my cousin plays this in Lima
we used to play on the beach
the dog is barking at the door
put some music on
the ice has melted
I will be right back
hold my drink for a second
there goes my last chance
don't knock the cups over
this is my lucky chair
the neighbours can hear us
can someone open the window
it is way too hot in here
I should have folded earlier
you are not fooling anyone
these crisps are stale
I spilled juice on the carpet
how many rounds is that now
has anyone seen the remote
the oven is still on
let me check the rules
I swear I saw a six under there
nobody cheats at my table
she is on a winning streak
let's call it a night
double chocolate cake for dessert
the taxi is outside
one day I will win this
not in a million years
the weather turned so quickly
my back is killing me
the baby monitor is beeping
we are out of ice
this game never ends
he is counting on his fingers
look who is talking
that cup has a crack in it
the score is tied
I would never lie to you
they sell these dice at the market
careful the glass is full
no idea what he is doing
that is the spirit
it is almost eleven
just one more game
we should stretch our legs
did anyone feed the cat
that song is stuck in my head
what a lovely evening
a piece of cake
keep calm and carry on
who brought the olives
go easy on him
"""

# What the babble's talkers read (not the chatter above: babble is noise, not test items).
BABBLE_LINES = """\
and then we drove all the way back to the coast because she forgot her passport
I told him the meeting was moved to Thursday but nobody listens to me anymore
the restaurant on the corner closed down last spring and nothing has opened since
have you tried the new bakery near the station their bread is wonderful
we painted the whole kitchen yellow and now I regret every single stroke
my brother wants to buy a boat even though he gets seasick on a ferry
the garden needs watering every evening when it is this dry outside
she finally finished her thesis after working on it for almost four years
the traffic this morning was so bad I nearly missed the first train
they say it will snow next week but I will believe it when I see it
honestly the film was far too long and the ending made no sense at all
we should invite the new neighbours over for dinner some time soon
the library has a reading group that meets on the first Monday of the month
I am thinking of learning the guitar again after all these years
his grandmother still bakes a cake for every birthday in the family
the hotel room had a view of the harbour and the boats coming in
""".splitlines()

# Words around a call that change nothing: how players wrap a call.
LEADS = ["make it", "I'll go", "okay I bid", "um", "so", "okay", "I bid", "I'll say",
         "so I bid", "okay make it"]
PLURAL = {1: ("ones", "aces", "pacos"), 2: ("twos",), 3: ("threes",), 4: ("fours",),
          5: ("fives",), 6: ("sixes",)}
SINGULAR = {1: ("ace", "paco"), 2: ("two",), 3: ("three",), 4: ("four",), 5: ("five",),
            6: ("six",)}
COMMANDS = ["take it back", "undo", "repeat", "status", "what's the bid", "yes", "no",
            "say again"]


# --- the corpus ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Item:
    key: str
    kind: str  # bid, count, challenge, named, hand, command, phrase, chatter, digit
    say: str  # what the voice says (the recording's file name for real speech)
    truth_text: str | None  # the call as parse_call reads it; None for chatter
    truth: dict | None  # call_to_json of that call
    voice: str  # the voice's name (or real:<speaker>)
    expect: str  # Expect value the game would listen with: "calls" or "count"


@dataclass(frozen=True)
class SetSpec:
    """One group of voices scored together."""

    name: str  # "festival", "real:lucas", "lofo:espeak"
    family: str | None  # voice family to synthesise with; None: real recordings
    model: str | None = None  # the network to hear it with; None: the shipped one
    quick: bool = False

    @property
    def slug(self) -> str:
        return self.name.replace(":", "-")


def confidence_for(network: Path, family: str, log) -> str:
    """The confidence file a network that should never have heard `family` is heard with
    (see RecogniserSettings.for_network), logged, with a warning when the network did train
    on the family, or its confidence was fitted on a family the network never heard."""
    from companion.listen.network import CallNetwork
    from companion.listen.recogniser import RecogniserSettings

    left_out = CallNetwork.load(network).card.get("left_out", [])
    if family not in left_out:
        log(f"warning: {network} says it left out {left_out}, not {family}")
    settings = RecogniserSettings.for_network(network)
    log(f"{network.name}: heard with the confidence {settings.calibration}")
    saw = settings.families_the_confidence_saw()
    if saw:
        log(f"warning: that confidence was fitted on {', '.join(saw)}, which {network.name} never "
            f"heard, so its figures there are flattered: fit one without (python -m "
            f"training.confidence --leave-out {saw[0]} --out {network.with_suffix('.confidence.json')})")
    return str(settings.calibration)


def truth_of(text: str | None) -> dict | None:
    from companion.calls import call_to_json, parse_call

    return None if text is None else call_to_json(parse_call(text, PLAYERS))


def _expect_for(truth: dict | None, index: int) -> str:
    """The moment of the game an utterance is heard at: a count or a player's dice after a
    challenge, every other call while bidding; commands and chatter half at each."""
    if truth is None or truth["kind"] == "command":
        return "count" if index % 2 else "calls"
    return "count" if truth["kind"] in ("number", "hand") else "calls"


def spoken_lines(seed: int, quick: bool) -> list[tuple[str, str, str | None]]:
    """(kind, said, truth text) for one voice set: bids over every face, bare counts,
    challenges, named calls, hands, commands, calls inside phrases and table chatter."""
    from companion.calls import number_words

    rng = random.Random(seed)
    lines: list[tuple[str, str, str | None]] = []
    # Bids: every count from 2 to 30 comes up (twice in a full run), spread over the faces.
    per_face = 1 if quick else 9
    pool = list(range(2, MAX_COUNT + 1)) * 2
    rng.shuffle(pool)
    for face in range(1, 7):
        counts = sorted(pool[(face - 1) * per_face: face * per_face])
        for k, n in enumerate(counts):
            word = PLURAL[face][(k + face) % len(PLURAL[face])]
            text = f"{number_words(n)} {word}"
            lines.append(("bid", text, text))
    singular_faces = [rng.choice(range(1, 7)), rng.choice(range(1, 7))] if quick else range(1, 7)
    for face in singular_faces:
        for lead in ("a", "one") if not quick else (rng.choice(("a", "one")),):
            text = f"{lead} {rng.choice(SINGULAR[face])}"
            lines.append(("bid", text, text))
    counts = rng.sample(range(0, MAX_COUNT + 1), 4) if quick else range(0, MAX_COUNT + 1)
    for n in counts:
        lines.append(("count", number_words(n), number_words(n)))
    for word in (["dudo", "calza", "palifico"] if quick
                 else ["dudo"] * 3 + ["calza"] * 3 + ["palifico"] * 2):
        lines.append(("challenge", word, word))
    for text in (["Ben calza"] if quick else
                 ["Ben calza", "Ana calza", "Cleo calza", "Ben dudo", "Cleo dudo"]):
        lines.append(("named", text, text))
    for _ in range(1 if quick else 4):
        dice = " ".join(number_words(rng.randint(1, 6)) for _ in range(rng.randint(2, 5)))
        text = f"{rng.choice(PLAYERS)} {dice}"
        lines.append(("hand", text, text))
    commands = ["take it back", "status", "yes", "no"] if quick else COMMANDS * 2
    for text in commands:
        lines.append(("command", text, text))
    phrases = [("make it three aces", "three aces"), ("I'll go four fours", "four fours"),
               ("okay I bid nine fives please", "nine fives"), ("um, seven", "seven")]
    if not quick:
        for _ in range(16):
            what = rng.random()
            if what < 0.6:
                n, face = rng.randint(1, 12), rng.randint(1, 6)
                call = (f"{number_words(n)} {rng.choice(PLURAL[face])}" if n > 1
                        else f"one {rng.choice(SINGULAR[face])}")
                lead = rng.choice(LEADS)
            elif what < 0.8:
                call, lead = rng.choice(["dudo", "calza"]), rng.choice(["um", "so", "okay"])
            else:
                call, lead = number_words(rng.randint(0, 20)), rng.choice(["um,", "so,", "okay"])
            tail = " please" if rng.random() < 0.25 else ""
            phrases.append((f"{lead} {call}{tail}", call))
    for said, call in phrases:
        lines.append(("phrase", said, call))
    chatter = [line for line in CHATTER.splitlines() if line.strip()]
    for text in (rng.sample(chatter, 12) if quick else chatter):
        lines.append(("chatter", text, None))
    return lines


def build_items(spec: SetSpec, voice_names: Sequence[str], seed: int = SEED) -> list[Item]:
    """The utterances of one synthetic voice set, each given to one of `voice_names`."""
    rng = random.Random(seed + zlib.crc32(spec.name.encode()))
    lines = spoken_lines(seed + zlib.crc32(spec.name.encode()) % 1000, spec.quick)
    order = list(range(len(lines)))
    rng.shuffle(order)  # every voice says a mix of kinds
    voice_of = {i: voice_names[k % len(voice_names)] for k, i in enumerate(order)}
    items, seen = [], {}
    for i, (kind, said, truth_text) in enumerate(lines):
        n = seen[kind] = seen.get(kind, -1) + 1
        truth = truth_of(truth_text)
        items.append(Item(f"{kind}-{n:03d}", kind, said, truth_text, truth, voice_of[i],
                          _expect_for(truth, n)))
    return items


def real_items(speaker: str, quick: bool, real_dir: Path = REAL_DIR, seed: int = SEED
               ) -> tuple[list[Item], list[Path]]:
    """The held-out speaker's digits (takes chosen by seed), and the takes left over (for
    the babble)."""
    from companion.calls import number_words

    rng = random.Random(seed)
    files = sorted((real_dir / "recordings").glob(f"*_{speaker}_*.wav"))
    by_digit: dict[int, list[Path]] = {}
    for path in files:
        by_digit.setdefault(int(path.stem.split("_")[0]), []).append(path)
    items, rest = [], []
    takes = QUICK_REAL_TAKES if quick else REAL_TAKES
    for digit in sorted(by_digit):
        paths = sorted(by_digit[digit], key=lambda p: int(p.stem.split("_")[2]))
        chosen = set(rng.sample(range(len(paths)), min(takes, len(paths))))
        for k, path in enumerate(paths):
            if k not in chosen:
                rest.append(path)
                continue
            text = number_words(digit)
            items.append(Item(f"digit{digit}-{path.stem.split('_')[2]}", "digit", path.name,
                              text, truth_of(text), f"real:{speaker}", "count"))
    return items, rest


def voices_for(family: str, quick: bool):
    from training import voices

    return voices.list_voices(family, QUICK_VOICES if quick else FESTIVAL_VOICES, seed=VOICE_SEED)


def conditions(quick: bool) -> list[tuple[str, str | None, float | None]]:
    out: list[tuple[str, str | None, float | None]] = [("clean", None, None)]
    for noise in NOISES:
        out += [(f"{noise}{snr}", noise, float(snr)) for snr in (QUICK_SNRS if quick else SNRS)]
    return out


def _digest(value) -> str:
    return hashlib.sha1(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:10]
