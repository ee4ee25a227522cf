"""Any timestamp a transcript may hold → an aware UTC `datetime`, or nothing with the raw value kept.

Sources disagree: legion writes ISO strings for user/system records and unix float seconds for
assistant/tool records in the same file; other tools write milliseconds, microseconds, numeric
strings, ISO with `Z`, with offsets, with nanosecond fractions, or with no zone at all. One function
takes all of them so no adapter guesses on its own. An ISO value without a zone is read as UTC and
flagged, so the page can say so instead of silently shifting it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

UTC = timezone.utc
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

# Unix values are told apart by magnitude: seconds reach 1e11 only in the year 5138, so anything
# larger is a finer unit. Each unit then covers the years 1973–5138 unambiguously (milliseconds
# before March 1973 would read as seconds; no transcript is that old).
_UNITS = ((1e11, 1.0), (1e14, 1e3), (1e17, 1e6), (1e20, 1e9))

_NUMERIC = re.compile(r"\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*")
_ISO = re.compile(
    r"\s*(?P<date>\d{4}-\d{2}-\d{2})"
    r"(?:[T ](?P<h>\d{2}):(?P<m>\d{2})(?::(?P<s>\d{2})(?:[.,](?P<frac>\d+))?)?)?"
    r"\s*(?P<zone>Z|z|UTC|[+-]\d{2}(?::?\d{2})?)?\s*"
)


@dataclass(frozen=True, slots=True)
class Stamp:
    utc: datetime | None
    raw: Any
    assumed_utc: bool = False  # an ISO value with no zone, read as UTC

    @property
    def epoch(self) -> float | None:
        return None if self.utc is None else (self.utc - _EPOCH).total_seconds()


# the times a transcript can hold: from the epoch to the last year unix numbers are told apart
# in (5138). Others are no time, their raw value kept: Go's zero time 0001-01-01T00:00:00Z (what a
# Go writer leaves in a time it never set), a year 9999 "never", which neither the local clock
# nor an archive's days can take
_FIRST, _LAST = 0.0, (datetime(5139, 1, 1, tzinfo=UTC) - _EPOCH).total_seconds()


def parse(value: Any) -> Stamp:
    """Read one timestamp value; never raises."""
    if value.__class__ is str and 20 <= len(value) <= 64 and value[-1] == "Z" and value[4] == "-" \
            and value[10] == "T":
        # the shape nearly every transcript writes ("2025-10-21T20:59:02.123Z"), which the C parser
        # reads as UTC: every card's time is read when it is drawn (`fast_epoch` for the index)
        try:
            dt = datetime.fromisoformat(value)
        except ValueError:
            pass
        else:
            if dt.tzinfo is UTC and _FIRST <= (dt - _EPOCH).total_seconds() < _LAST:
                return Stamp(dt, value, False)
    stamp = _parse(value)
    if stamp.utc is not None and not _FIRST <= (stamp.utc - _EPOCH).total_seconds() < _LAST:
        return Stamp(None, value)
    return stamp


def _parse(value: Any) -> Stamp:
    if value is None or isinstance(value, bool):
        return Stamp(None, value)
    if isinstance(value, (int, float)):
        return Stamp(_from_number(value), value)
    if isinstance(value, str):
        if len(value) > 64:
            return Stamp(None, value)
        if _NUMERIC.fullmatch(value):
            try:
                return Stamp(_from_number(float(value)), value)
            except (ValueError, OverflowError):
                return Stamp(None, value)
        try:  # the C parser takes the common shapes; the regex below handles the rest
            dt = datetime.fromisoformat(value)
        except ValueError:
            utc, assumed = _from_iso(value)
            return Stamp(utc, value, assumed)
        if len(value) < 10 or value[4] != "-":
            utc, assumed = _from_iso(value)  # ISO week dates and other rarities
            return Stamp(utc, value, assumed)
        if dt.tzinfo is None:
            return Stamp(dt.replace(tzinfo=UTC), value, True)
        return Stamp(dt if dt.tzinfo is UTC else dt.astimezone(UTC), value, False)
    return Stamp(None, value)


def fast_epoch(value: Any) -> float | None:
    """`to_epoch`, without the general parser for the shapes nearly every transcript writes
    ("2025-10-21T20:59:02.123Z", unix seconds): the index pass reads one per line."""
    cls = value.__class__
    if cls is str and 20 <= len(value) <= 64 and value[-1] == "Z" and value[4] == "-" \
            and value[10] == "T":
        try:
            epoch = datetime.fromisoformat(value).timestamp()
        except ValueError:
            pass
        else:
            return epoch if _FIRST <= epoch < _LAST else None
    elif (cls is float or cls is int) and 1e8 <= value < 1e11:  # unix seconds
        # datetime.fromtimestamp(value, UTC).timestamp(), without the datetime: whole microseconds
        # (the fraction rounded half to even, as fromtimestamp does) over 10**6
        frac, whole = math.modf(value)
        return (int(whole) * 1000000 + round(frac * 1e6)) / 1000000
    return to_epoch(value)


def zoneless(value: Any) -> bool:
    """Whether a raw time names no zone (read as UTC, shown as written): a format's digest leaves
    such a record to its Event, which says so (`Event.timestamp_assumed_utc`)."""
    return value.__class__ is str and value[-1:] != "Z" and parse(value).assumed_utc


def to_epoch(value: Any) -> float | None:
    """Seconds since the epoch for any timestamp value, or None."""
    return parse(value).epoch


def _from_number(value: float) -> datetime | None:
    if not math.isfinite(value) or value < 0:
        return None
    for limit, per_second in _UNITS:
        if value < limit:
            try:
                return datetime.fromtimestamp(value / per_second, UTC)
            except (OverflowError, OSError, ValueError):
                return None
    return None


def _from_iso(text: str) -> tuple[datetime | None, bool]:
    m = _ISO.fullmatch(text)
    if not m:
        return None, False
    try:
        year, month, day = (int(p) for p in m["date"].split("-"))
        frac = m["frac"] or "0"
        micro = int((frac + "000000")[:6])
        dt = datetime(year, month, day, int(m["h"] or 0), int(m["m"] or 0), int(m["s"] or 0), micro)
    except ValueError:
        return None, False
    zone = m["zone"]
    if zone is None:
        return dt.replace(tzinfo=UTC), True
    if zone in ("Z", "z", "UTC"):
        return dt.replace(tzinfo=UTC), False
    sign = -1 if zone[0] == "-" else 1
    digits = zone[1:].replace(":", "")
    minutes = int(digits[:2]) * 60 + int(digits[2:4] or 0)
    if minutes >= 24 * 60:
        return None, False
    try:
        aware = dt.replace(tzinfo=timezone(sign * timedelta(minutes=minutes)))
        return aware.astimezone(UTC), False
    except (ValueError, OverflowError):
        return None, False


def from_epoch(seconds: float | None) -> datetime | None:
    if seconds is None:
        return None
    try:
        return _EPOCH + timedelta(seconds=seconds)
    except OverflowError:
        return None


def iso(dt: datetime | None) -> str:
    """The value for a `<time datetime>` attribute: UTC with a Z, milliseconds."""
    if dt is None:
        return ""
    return dt.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def as_written(dt: datetime | None) -> str:
    """`2025-10-21 18:59:02`: a time the file wrote with no zone (read as UTC), shown as written."""
    return human_utc(dt).removesuffix(" UTC")


def human_utc(dt: datetime | None) -> str:
    """`2025-10-21 18:59:02 UTC` (as strftime writes it; isoformat is twice as fast, and every card
    shows a time)."""
    if dt is None:
        return ""
    d = dt.astimezone(UTC)
    if d.year < 1000:  # strftime does not pad such a year to four digits; isoformat does
        return d.strftime("%Y-%m-%d %H:%M:%S UTC")
    return d.isoformat(" ", "seconds")[:19] + " UTC"


def span(seconds: float | None) -> str:
    """A compact duration: 850ms, 4.2s, 3m05s, 2h04m, 3d02h."""
    if seconds is None:
        return ""
    if seconds < 0:
        return "-" + span(-seconds)
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 10:
        return f"{seconds:.1f}s"
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    m, s = divmod(s, 60)
    if m < 60:
        return f"{m}m{s:02d}s"
    h, m = divmod(m, 60)
    if h < 48:
        return f"{h}h{m:02d}m"
    d, h = divmod(h, 24)
    return f"{d}d{h:02d}h"
