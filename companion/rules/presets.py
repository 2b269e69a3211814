"""The rules as data: one frozen `Rules` object, and a named preset per rulebook reading.

The five rule sources (see README) disagree on details. Each disagreement is a field here and
each reading is a preset, so no choice is ever made silently. House rules override single
fields from a TOML file.
"""

from __future__ import annotations

import dataclasses
import enum
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from companion.rules.errors import RulesFileError, UnknownPreset


class CalzaCaller(enum.Enum):
    """Who may call calza on the last bid."""

    NEXT_PLAYER = "next-player"  # only the player whose turn it is, instead of raising
    ANY_OTHER = "any-other"  # anyone but the bidder
    ANY_EXCEPT_NEXT = "any-except-next"  # anyone but the bidder and the player to move


class CalzaStarter(enum.Enum):
    """Who opens the round after a calza."""

    CALLER = "caller"  # whatever the outcome
    LAST_LOSER = "last-loser"  # the player who most recently lost a die (the caller if wrong)


class FaceChange(enum.Enum):
    """Who may change the face during a palifico round."""

    NOBODY = "nobody"
    PALIFICO_PLAYER = "palifico-player"  # only the player whose palifico round it is
    WAS_PALIFICO = "was-palifico"  # anyone who has already been palifico
    WAS_PALIFICO_ON_ONE_DIE = "was-palifico-on-one-die"  # ...and holds a single die now
    ON_ONE_DIE = "on-one-die"  # anyone holding a single die


class DudoCaller(enum.Enum):
    NEXT_PLAYER = "next-player"
    ANYONE = "anyone"  # house rule: any player but the bidder may challenge


class DudoLoss(enum.Enum):
    ONE = "one"  # the loser of a challenge loses one die
    DIFFERENCE = "difference"  # ...as many as the bid was off by (at least one)


# Dice a player may hold in a new game: the rulebooks' five, a cup of six or more for house
# rules, and a bound, so a slip of the keyboard (--dice 1000000) is refused, not a game that
# cannot be heard. A journal of a bigger game, from before the bound, still resumes.
MOST_DICE = 10


@dataclass(frozen=True)
class Rules:
    name: str = "custom"
    ace_word: str = "pacos"  # how face 1 is announced: "aces", "pacos" or "jokers"
    starting_dice: int = 5
    max_dice: int = 5  # a regained die never takes a player above this
    # False where lost dice are hidden (a pouch, a lid): the total is then never told.
    announce_dice_in_play: bool = True
    aces_opening: bool = False  # may a normal round open with aces?
    palifico_opens_aces: bool = True  # ...the palifico player may open their round with aces
    one_die_opens_aces: bool = False  # ...a player holding one die may open any round with aces
    dudo_caller: DudoCaller = DudoCaller.NEXT_PLAYER
    dudo_loss: DudoLoss = DudoLoss.ONE
    calza: bool = True
    calza_caller: CalzaCaller = CalzaCaller.ANY_OTHER
    calza_starter: CalzaStarter = CalzaStarter.LAST_LOSER
    calza_in_palifico: bool = False
    calza_min_players: int = 3  # calza is off once fewer players remain
    calza_needs_half_dice: bool = False  # only while more than half the starting dice remain
    palifico: bool = True
    palifico_min_players: int = 3  # no palifico rounds once fewer players remain
    palifico_face_change: FaceChange = FaceChange.WAS_PALIFICO
    # In their own palifico round, does the palifico player count as one who "was palifico"
    # for palifico_face_change? Pressman says the change comes in a "subsequent" round.
    palifico_player_was_palifico: bool = False
    # One palifico round per player per game; False: one every time a player drops from two
    # dice to one, again after winning a die back with calza.
    palifico_once: bool = True

    def __post_init__(self) -> None:
        if self.starting_dice < 1:
            raise RulesFileError("starting_dice must be at least 1")
        if self.max_dice < self.starting_dice:
            raise RulesFileError("max_dice cannot be below starting_dice")
        for name in ("calza_min_players", "palifico_min_players"):
            if getattr(self, name) < 0:
                raise RulesFileError(f"{name} cannot be below 0")
        if self.ace_word not in ("aces", "pacos", "jokers", "ones"):
            raise RulesFileError(f"ace_word must be aces, pacos, jokers or ones, not {self.ace_word!r}")

    def replace(self, **changes: Any) -> "Rules":
        return dataclasses.replace(self, **changes)

    def with_starting_dice(self, dice: int) -> "Rules":
        """These rules with `dice` each at the start, and as the most a calza can bring back to."""
        return self.replace(starting_dice=dice, max_dice=dice)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], base: "Rules | None" = None) -> "Rules":
        """Build rules from plain data (a journal header, a TOML table), field by field."""
        base = base or cls()
        fields = {f.name: f for f in dataclasses.fields(cls)}
        changes: dict[str, Any] = {}
        for key, value in data.items():
            key = key.replace("-", "_")
            if key not in fields:
                known = ", ".join(sorted(set(fields) - {"name"}))  # the name is the preset's
                raise RulesFileError(f"unknown rules field {key!r}; known: {known}")
            current = getattr(base, key)
            try:
                if isinstance(current, enum.Enum):
                    value = type(current)(value)
                elif isinstance(current, bool):
                    if not isinstance(value, bool):
                        raise ValueError
                elif isinstance(current, int) and (isinstance(value, bool) or not isinstance(value, int)):
                    raise ValueError
            except ValueError:
                choices = ""
                if isinstance(current, enum.Enum):
                    choices = " (one of: " + ", ".join(m.value for m in type(current)) + ")"
                elif isinstance(current, bool):
                    choices = " (true or false, without quotes)"
                elif isinstance(current, int):
                    choices = " (a whole number)"
                raise RulesFileError(f"bad value {value!r} for rules field {key!r}{choices}") from None
            changes[key] = value
        return dataclasses.replace(base, **changes)

    def differences(self, other: "Rules") -> dict[str, Any]:
        """The fields where these rules differ from `other` (name aside)."""
        mine, theirs = self.to_dict(), other.to_dict()
        return {k: v for k, v in mine.items() if k != "name" and theirs[k] != v}


# Fields added after journals were first written: a journal without them was played by
# their defaults (companion.journal fills them in on replay, and only them).
RULES_ADDED_LATER = frozenset({"palifico_opens_aces", "one_die_opens_aces",
                               "palifico_player_was_palifico", "palifico_once"})
# Fields some versions wrote and later ones dropped (words only, never a rule): a journal
# holding them is read without them.
RULES_REMOVED_LATER = frozenset({"calza_word", "palifico_word"})


def _plain(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value


# Where a rulebook is silent the base applies: no palifico rounds with two players left (as
# Pressman, Asmodee and the web page say), no calza with two players left (Pressman alone says
# so) and none in a palifico round (Pressman and the web page). Asmodee and the leaflet are
# silent on calza's limits, the web page on two players; `calza_min_players = 2` and
# `calza_in_palifico = true` read them literally. Wikipedia states spot on's one limit (more
# than half the dice), so its presets take it literally.
_BASE = Rules()

# The two presets with a variant, each variant one rule apart, so that they cannot drift apart.
_PRESSMAN = _BASE.replace(name="pressman", ace_word="aces", announce_dice_in_play=False,
                          calza=False, calza_caller=CalzaCaller.ANY_EXCEPT_NEXT,
                          palifico_face_change=FaceChange.WAS_PALIFICO_ON_ONE_DIE,
                          palifico_player_was_palifico=True)
_WIKIPEDIA = _BASE.replace(name="wikipedia", ace_word="aces", calza_caller=CalzaCaller.NEXT_PLAYER,
                           calza_needs_half_dice=True, calza_min_players=2, calza_in_palifico=True,
                           palifico_min_players=2, one_die_opens_aces=True,
                           palifico_face_change=FaceChange.ON_ONE_DIE)

PRESETS: dict[str, Rules] = {
    # Asmodee (Cosmo Fry and Alfredo Fernandini): toucan pacos, calza as the expert variant
    # open to any other player, the round after calza opened by whoever last lost a die.
    "asmodee": _BASE.replace(name="asmodee", ace_word="pacos"),
    # Asmodee with "any player who already declared Palifico" read literally: the palifico
    # player declared it as their round began, so may change the face in that round too.
    "asmodee-own-round": _BASE.replace(name="asmodee-own-round", palifico_player_was_palifico=True),
    # Pressman 2008: aces; lost dice go into a pouch so the total is hidden; in a palifico
    # round "other players" may not change the face (so the palifico player, on one die, may),
    # except a one-die player who was palifico before; calza is optional (see pressman-calza).
    "pressman": _PRESSMAN,
    "pressman-calza": _PRESSMAN.replace(name="pressman-calza", calza=True),
    # The boxed-set leaflet: jokers, lost dice under the cup lid, never an opening on jokers
    # (it makes no palifico exception), in a palifico round the face cannot be changed "by
    # other players" (so the palifico player may), anyone may call calza. Its palifico is
    # announced whenever a player goes from two dice to one, with no once-a-game limit.
    "leaflet": _BASE.replace(name="leaflet", ace_word="jokers", announce_dice_in_play=False,
                             palifico_opens_aces=False, palifico_once=False,
                             palifico_face_change=FaceChange.PALIFICO_PLAYER),
    # The web page: the calza caller opens the next round whatever the outcome; no calza in
    # a palifico round; players who were palifico before may change the face.
    "web": _BASE.replace(name="web", ace_word="aces", calza_starter=CalzaStarter.CALLER),
    # Wikipedia "Dudo": spot on is a turn's action, allowed while more than half of the
    # starting dice remain; a player with one die left may open any round with aces; in the
    # one-die ("obliga") round only one-die players may change the face. It sets no player
    # minimum for spot on or obliga rounds, so both go on with two players, and spot on goes
    # on in an obliga round.
    "wikipedia": _WIKIPEDIA,
    # Wikipedia's variant: the loser of a dudo loses as many dice as the bid was off by.
    "wikipedia-difference": _WIKIPEDIA.replace(name="wikipedia-difference", dudo_loss=DudoLoss.DIFFERENCE),
}
ALIASES = {"default": "asmodee", "perudo": "asmodee", "pressman-2008": "pressman", "2008": "pressman",
           "jokers": "leaflet", "webpage": "web", "dudo": "wikipedia", "wiki": "wikipedia",
           "lose-difference": "wikipedia-difference"}
DEFAULT_PRESET = "asmodee"

# What each preset is, in one line, for README and `companion rules`.
PRESET_SOURCES = {
    "asmodee": "Asmodee rulebook (Fry and Fernandini)",
    "asmodee-own-round": "Asmodee, the palifico player counting as 'already declared' in their own round",
    "pressman": "Pressman Toy 2008 rulebook, calza off (their optional rule)",
    "pressman-calza": "Pressman Toy 2008 rulebook with its optional calza rule",
    "leaflet": "the boxed-set leaflet (jokers, cup lid)",
    "web": "the web page of game rules",
    "wikipedia": "Wikipedia's article \"Dudo\" (spot on while more than half the dice remain)",
    "wikipedia-difference": "Wikipedia's lose-the-difference variant",
}


def get_preset(name: str) -> Rules:
    key = ALIASES.get(name.lower(), name.lower())
    if key not in PRESETS:
        raise UnknownPreset(f"unknown rules preset {name!r}; choose one of: {', '.join(PRESETS)}")
    return PRESETS[key]


def house_rules(text: str, path: Path | str, base: Rules, preset_given: bool = False,
                dice_given: int | None = None) -> Rules:
    """Apply house rules, the TOML `text` of the file at `path` (named in messages), over a
    preset (reading the file is `play_settings.load_house_rules`'s).

    The file holds plain fields (`starting_dice = 4`, `dudo_caller = "anyone"`), optionally
    under a `[rules]` table, and may name its own base with `preset = "pressman"`; if
    `preset_given` (the player chose `base` too), the two must agree, as must its
    `starting_dice` and `dice_given` (`--dice`).
    """
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib  # type: ignore[no-redef]
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise RulesFileError(f"house rules {path} are not valid TOML: {exc} (words go in quotes, "
                             f"true and false without: dudo_caller = \"anyone\", calza = true)") from None
    table = data.get("rules", data)
    if not isinstance(table, dict):
        example = table if isinstance(table, str) else DEFAULT_PRESET
        raise RulesFileError(f"house rules {path}: 'rules' must be a table of fields ([rules]); "
                             f"to start from a preset, write preset = \"{example}\"")
    table = dict(table)
    if isinstance(data.get("rules"), dict):  # fields under [rules]: the
        outside = {k: v for k, v in data.items() if k != "rules"}  # top level may name the preset
        if "preset" in outside and "preset" in table:
            raise RulesFileError(f"house rules {path} name a preset both above [rules] and in it: keep one")
        if "preset" in outside:
            table["preset"] = outside.pop("preset")
        if outside:
            raise RulesFileError(f"house rules {path}: {', '.join(sorted(outside))} must go under [rules] "
                                 f"with the other fields (or leave out the [rules] line)")
    spelt: dict[str, str] = {}
    fields: dict[str, Any] = {}
    for key, value in table.items():  # starting-dice as starting_dice, but not both
        field = key.replace("-", "_")
        if field in spelt:
            raise RulesFileError(f"house rules {path} set {field} twice ({spelt[field]} and {key}): keep one")
        spelt[field], fields[field] = key, value
    table = fields
    if "name" in table:  # the preset's name, with "+house" (or the preset's own, copied whole)
        raise RulesFileError(f"house rules {path}: 'name' is not a rule; to start from a preset, "
                             f"write preset = \"{DEFAULT_PRESET}\"")
    if "preset" in table:
        try:
            named = get_preset(str(table.pop("preset")))
        except UnknownPreset as error:
            raise RulesFileError(f"house rules {path}: {error}") from None
        if preset_given and named.name != base.name:
            raise RulesFileError(f"house rules {path} start from the {named.name} preset, but the "
                                 f"{base.name} rules were chosen with --rules: keep one of the two")
        base = named
    file_starts = "starting_dice" in table
    if dice_given is not None and not file_starts:
        table["starting_dice"] = dice_given  # so the file's max_dice is checked against --dice
    if "starting_dice" in table and "max_dice" not in table:
        table["max_dice"] = table["starting_dice"]  # a regained die never exceeds the start
    try:
        rules = Rules.from_dict(table, base)
    except RulesFileError as error:
        about_dice = "starting_dice" in str(error) and dice_given is not None and not file_starts
        raise RulesFileError(f"house rules {path}: {error}" + (f" (--dice {dice_given})" if about_dice else "")) from None
    if rules.max_dice > MOST_DICE:  # for new games: a journal of a bigger game still resumes
        raise RulesFileError(f"house rules {path}: a player holds at most {MOST_DICE} dice (as many as a cup "
                             f"holds), not {rules.max_dice}")
    if file_starts and dice_given is not None and rules.starting_dice != dice_given:
        raise RulesFileError(f"house rules {path} start with {rules.starting_dice} dice each, but --dice "
                             f"{dice_given} was given: keep one of the two")
    same = next((p for p in PRESETS.values() if not rules.differences(p)), None)
    if same is not None:  # a preset copied whole from `companion rules NAME`: that preset, named
        return rules.replace(name=same.name)
    return rules.replace(name=f"{base.name}+house")


def toml_value(value: Any) -> str:
    """A rules field's plain value as TOML writes it: true, 5, "pacos"."""
    if isinstance(value, bool):
        return str(value).lower()
    return str(value) if isinstance(value, int) else f'"{value}"'


def _unused_under(rules: Rules, key: str) -> str:
    """A note for a field these rules leave unused (calza's, with calza off), which a house-rules
    file that turns its switch on would use."""
    for switch in ("calza", "palifico"):
        if key.startswith(f"{switch}_") and not getattr(rules, switch):
            return f"  # used only with {switch} = true"
    return ""


def preset_lines(name: str | None = None) -> list[str]:
    """What `companion rules` prints: every preset with what it changes from the base, or
    every field of one, each line as a house-rules file says it, so any can be copied in."""
    if name is not None:  # (an empty name is no preset: refused, not the whole list)
        rules = get_preset(name)
        return [f"# {rules.name}: {PRESET_SOURCES[rules.name]}",
                *(f"{key} = {toml_value(value)}{_unused_under(rules, key)}"
                  for key, value in rules.to_dict().items() if key != "name")]
    lines = []
    for key, rules in PRESETS.items():
        lines.append(f"{key}{' (default)' if key == DEFAULT_PRESET else ''}: {PRESET_SOURCES[key]}")
        lines += [f"    {field} = {toml_value(value)}" for field, value in rules.differences(_BASE).items()]
    return lines + ["aliases: " + ", ".join(f"{a} -> {p}" for a, p in sorted(ALIASES.items()))]
