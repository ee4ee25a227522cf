"""timestamps.parse: every shape a transcript uses, and nothing else, becomes a UTC datetime."""

from datetime import datetime, timedelta, timezone

from hypothesis import given, strategies as st

from viewer import timestamps
from viewer.timestamps import parse

UTC = timezone.utc
REF = datetime(2025, 10, 21, 18, 59, 2, 228585, tzinfo=UTC)
EPOCH = REF.timestamp()


def test_iso_forms():
    assert parse("2025-10-21T18:59:02.228585+00:00").utc == REF
    assert parse("2025-10-21T18:59:02.228585Z").utc == REF
    assert parse("2025-10-21T20:59:02.228585+02:00").utc == REF
    assert parse("2025-10-21T13:59:02.228585-0500").utc == REF
    assert parse("2025-10-21 18:59:02.228585Z").utc == REF
    assert parse("2025-10-21T18:59:02.228585123Z").utc == REF  # nanoseconds: cut to micro


def test_iso_without_zone_is_utc_and_flagged():
    st_ = parse("2025-10-21T18:59:02.228585")
    assert st_.utc == REF and st_.assumed_utc
    assert not parse("2025-10-21T18:59:02Z").assumed_utc


def test_unix_units():
    assert parse(EPOCH).utc == REF
    assert parse(int(EPOCH)).utc == REF.replace(microsecond=0)
    assert parse(int(EPOCH * 1000)).utc == REF.replace(microsecond=228000)
    assert parse(round(EPOCH * 1_000_000)).utc == REF
    assert parse(str(EPOCH)).utc == REF
    assert parse(f"{int(EPOCH * 1000)}").utc == REF.replace(microsecond=228000)


def test_legion_fixture_seconds_are_seconds():
    # the legion fixtures use fake small values: 1000000.0 is 1970-01-12, not milliseconds
    assert parse(1000000.0).utc == datetime(1970, 1, 12, 13, 46, 40, tzinfo=UTC)


def test_unreadable_values_keep_their_raw_value():
    for raw in ("yesterday", "", "2025-13-01T00:00:00Z", "2025-10-21T25:00:00Z", True, None,
                [], {"t": 1}, float("nan"), float("inf"), -5, "12:00", "2025-10-21T10:00+25:00"):
        st_ = parse(raw)
        assert st_.utc is None
        assert st_.raw is raw or st_.raw == raw


def test_human_forms():
    assert timestamps.iso(REF) == "2025-10-21T18:59:02.228Z"
    assert timestamps.human_utc(REF) == "2025-10-21 18:59:02 UTC"
    assert timestamps.span(0.25) == "250ms"
    assert timestamps.span(4.2) == "4.2s"
    assert timestamps.span(185) == "3m05s"
    assert timestamps.span(7440) == "2h04m"
    assert timestamps.span(3 * 86400 + 7200) == "3d02h"


@given(st.datetimes(min_value=datetime(1, 1, 1, 12), max_value=datetime(9999, 12, 31),
                    timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)),
                                               timezone(timedelta(hours=-8))])))
def test_human_utc_is_what_strftime_writes(dt):
    """Written with isoformat (twice as fast: every card shows a time), as strftime wrote it."""
    assert timestamps.human_utc(dt) == dt.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


# Units are told apart by magnitude, so milliseconds before 1973 would read as seconds; transcripts
# are all written long after that.
aware = st.datetimes(min_value=datetime(1975, 1, 1), max_value=datetime(2200, 1, 1),
                     timezones=st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)),
                                                timezone(timedelta(hours=-8))]))


@given(aware)
def test_isoformat_round_trips(dt):
    assert parse(dt.isoformat()).utc == dt.astimezone(UTC)


@given(aware)
def test_iso_with_z_round_trips(dt):
    text = dt.astimezone(UTC).replace(tzinfo=None).isoformat() + "Z"
    assert parse(text).utc == dt.astimezone(UTC)


@given(aware, st.sampled_from([1, 1000, 1_000_000]))
def test_unix_round_trips_in_every_unit(dt, per_second):
    seconds = dt.timestamp()
    value = round(seconds * per_second)
    got = parse(value).utc
    assert abs(got.timestamp() - seconds) <= 1 / per_second


@given(st.one_of(st.text(max_size=40), st.integers(), st.floats(allow_nan=True), st.none(),
                 st.booleans(), st.lists(st.integers(), max_size=3)))
def test_never_raises_and_is_utc_when_read(value):
    got = parse(value)
    assert got.utc is None or got.utc.tzinfo == UTC


@given(st.one_of(st.floats(min_value=1e8, max_value=1e11), st.integers(min_value=10**8, max_value=10**11),
                 st.integers(min_value=1_600_000_000_000, max_value=1_900_000_000_000).map(lambda us: us / 1000),
                 st.integers(min_value=1_600_000_000_000_000, max_value=1_900_000_000_000_000).map(
                     lambda us: us / 1_000_000 + 5e-7)))
def test_the_index_pass_reads_unix_seconds_as_the_parser_does(value):
    """fast_epoch (one per line of an index pass) skips the datetime for unix seconds: it must
    still give the very float the general parser gives, ties between microseconds included."""
    assert timestamps.fast_epoch(value) == timestamps.to_epoch(value)
