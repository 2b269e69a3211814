"""The root of every error the companion raises on purpose.

Errors that come from bad input are `ValueError`s, so callers can tell "could not parse"
(`UnparsableCall`) from "parsed but not allowed" (`RulesError`) and answer each differently.
"""


class CompanionError(Exception):
    """Something the user can fix; the message says what, in plain words."""
