"""The closest of a few valid choices to what someone typed, and the hint that names it.

`closest_match` compares case-insensitively (difflib's ratio, at least `cutoff`) and
returns the choice as it is spelt; `did_you_mean` words it as `; did you mean 'x'?`, the
ending every "unknown ..." message here uses, or '' when nothing is close.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

CUTOFF = 0.5  # difflib ratio below which a choice is not offered
# Characters a choice must share with the value to be offered when nothing is close.
LAST_RESORT_PREFIX = 3


def closest_match(
    value: str, choices: Iterable[str], cutoff: float = CUTOFF, prefix: int = 0
) -> str | None:
    """The choice closest to `value` (case-insensitive), or None when nothing is close.

    An exact match but for case wins; else the best difflib match of at least `cutoff`;
    else, when `prefix` > 0, the first choice that starts with the same `prefix`
    characters."""
    choices = list(choices)
    lowered = {c.lower(): c for c in choices}
    wanted = value.lower()
    if wanted in lowered:
        return lowered[wanted]
    hits = difflib.get_close_matches(wanted, list(lowered), n=1, cutoff=cutoff)
    if hits:
        return lowered[hits[0]]
    if prefix > 0:
        return next((c for c in choices if c.lower().startswith(wanted[:prefix])), None)
    return None


def did_you_mean(
    value: str, choices: Iterable[str], cutoff: float = CUTOFF, prefix: int = 0
) -> str:
    """`; did you mean 'X'?` for closest_match's choice, or '' when nothing is close."""
    hint = closest_match(value, choices, cutoff=cutoff, prefix=prefix)
    return f"; did you mean {hint!r}?" if hint else ""


def check_choices(values: Iterable[str], valid: Sequence[str], what: str) -> None:
    """Raise ValueError naming the closest valid choice for each value not in `valid`."""
    for value in values:
        if value not in valid and value.lower() not in valid:
            fix = did_you_mean(value, valid, prefix=LAST_RESORT_PREFIX)
            raise ValueError(f"unknown {what} {value!r}{fix} Valid: {', '.join(valid)}")
