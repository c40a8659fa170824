"""Human units as site admins write them: durations, sizes, and durations rendered back."""

from __future__ import annotations

import math

import pytest

from queuesim.site.units import format_duration, parse_duration, parse_size

MINUTE = 60
HOUR = 3600
DAY = 86400
KIB = 1024
MIB = 1024**2
GIB = 1024**3
TIB = 1024**4


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("45s", 45),
        ("90m", 90 * MINUTE),
        ("2h", 2 * HOUR),
        ("1.5h", 90 * MINUTE),
        ("30d", 30 * DAY),
        ("2w", 14 * DAY),
        ("1d12h", 36 * HOUR),
        ("1h30m", 90 * MINUTE),
        ("1h 30m", 90 * MINUTE),
        ("2H", 2 * HOUR),
        ("  2h  ", 2 * HOUR),
        ("0m", 0),
    ],
)
def test_duration_with_units_is_seconds(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("1:30:00", 90 * MINUTE),
        ("36:00:00", 36 * HOUR),
        ("0:00:45", 45),
        ("100:0:0", 100 * HOUR),
    ],
)
def test_duration_in_hours_minutes_seconds_is_seconds(text: str, seconds: float) -> None:
    assert parse_duration(text) == seconds


@pytest.mark.parametrize(("value", "seconds"), [(5400, 5400), (90.5, 90.5), ("5400", 5400), (0, 0)])
def test_bare_number_duration_is_seconds(value: object, seconds: float) -> None:
    assert parse_duration(value) == seconds


def test_parsed_duration_is_a_float() -> None:
    assert isinstance(parse_duration("2h"), float)
    assert isinstance(parse_duration(60), float)


@pytest.mark.parametrize(
    "text", ["2 hours", "90 min", "1h30", "h", "", "2x", "1e3", "2h-1m", "1:30", "01:30:00:00"]
)
def test_malformed_duration_is_rejected_with_the_accepted_forms(text: str) -> None:
    with pytest.raises(ValueError, match=r"expected a duration such as '90m', '2h'") as info:
        parse_duration(text)
    assert repr(text) in str(info.value)  # the message quotes what was given


@pytest.mark.parametrize("value", [True, None, [1], {"h": 2}])
def test_duration_of_the_wrong_type_is_rejected(value: object) -> None:
    with pytest.raises(ValueError, match="expected a duration"):
        parse_duration(value)


@pytest.mark.parametrize("value", [-1, -0.5, "-5m"])
def test_negative_duration_is_rejected(value: object) -> None:
    with pytest.raises(ValueError, match="duration"):
        parse_duration(value)


def test_negative_number_duration_says_durations_cannot_be_negative() -> None:
    with pytest.raises(ValueError, match="cannot be negative, got -60"):
        parse_duration(-60)


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("512MB", 512 * MIB),
        ("64GB", 64 * GIB),
        ("64G", 64 * GIB),
        ("64 GB", 64 * GIB),
        ("64gb", 64 * GIB),
        ("1.5TiB", int(1.5 * TIB)),
        ("2TB", 2 * TIB),
        ("0.5KB", 512),
        ("4KiB", 4 * KIB),
        ("100B", 100),
        ("100", 100),
    ],
)
def test_size_is_bytes_with_binary_multiples(text: str, size: int) -> None:
    assert parse_size(text) == size


def test_decimal_and_binary_size_suffixes_mean_the_same() -> None:
    # documented choice: 64GB is what an admin means by a 64 GiB node, as in PBS and Slurm
    assert parse_size("64GB") == parse_size("64GiB") == 64 * 2**30


@pytest.mark.parametrize(("value", "size"), [(4096, 4096), (0, 0), (1.5, 1)])
def test_bare_number_size_is_bytes(value: object, size: int) -> None:
    assert parse_size(value) == size


def test_parsed_size_is_an_int() -> None:
    assert isinstance(parse_size("1.5TiB"), int)


@pytest.mark.parametrize("text", ["64 gigs", "lots", "", "GB", "64XB", "-1GB", "1e9", "64 G B"])
def test_malformed_size_is_rejected_with_the_accepted_forms(text: str) -> None:
    with pytest.raises(ValueError, match=r"expected a size such as '512MB' or '64GB'") as info:
        parse_size(text)
    assert repr(text) in str(info.value)


@pytest.mark.parametrize("value", [True, None, [64]])
def test_size_of_the_wrong_type_is_rejected(value: object) -> None:
    with pytest.raises(ValueError, match="expected a size"):
        parse_size(value)


def test_negative_number_size_says_sizes_cannot_be_negative() -> None:
    with pytest.raises(ValueError, match="cannot be negative, got -5"):
        parse_size(-5)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (45, "45s"),
        (60, "1m"),
        (61, "1m 1s"),
        (90 * MINUTE, "1h 30m"),
        (2 * HOUR, "2h"),
        (2 * HOUR + 5 * MINUTE + 7, "2h 5m"),
        (DAY, "1d"),
        (3 * DAY + 4 * HOUR + 59 * MINUTE, "3d 4h"),
        (30 * DAY, "30d"),
    ],
)
def test_format_duration_shows_the_two_largest_units(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize(("seconds", "text"), [(59.4, "59s"), (59.6, "1m"), (3599.6, "1h")])
def test_format_duration_rounds_to_whole_seconds(seconds: float, text: str) -> None:
    assert format_duration(seconds) == text


@pytest.mark.parametrize("text", ["45s", "2h", "1d", "30d", "3d 4h", "1h 30m", "1m 1s"])
def test_format_duration_output_parses_back_to_the_same_seconds(text: str) -> None:
    seconds = parse_duration(text)
    assert format_duration(seconds) == text
    assert math.isclose(parse_duration(format_duration(seconds)), seconds)
