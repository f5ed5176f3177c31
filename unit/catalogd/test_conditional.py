"""Preconditions, ranges and Accept-Encoding, decided as RFC 9110 says."""

from __future__ import annotations

import pytest

from olm.catalogd import conditional
from olm.catalogd.conditional import ByteRange, Outcome

STORED = 1_700_000_000.0
DATE = conditional.http_date(STORED)
EARLIER = conditional.http_date(STORED - 60)
LATER = conditional.http_date(STORED + 60)
TAGS = ('"abc"', '"abc-gzip"')


@pytest.mark.parametrize(
    ("headers", "method", "outcome"),
    [
        pytest.param({}, "GET", Outcome.PROCEED, id="unconditional"),
        pytest.param({"If-None-Match": '"abc"'}, "GET", Outcome.NOT_MODIFIED, id="inm-match"),
        pytest.param({"If-None-Match": 'W/"abc-gzip"'}, "GET", Outcome.NOT_MODIFIED, id="inm-weak-compare"),
        pytest.param({"If-None-Match": '"x", "abc"'}, "HEAD", Outcome.NOT_MODIFIED, id="inm-list"),
        pytest.param({"If-None-Match": "*"}, "GET", Outcome.NOT_MODIFIED, id="inm-star"),
        pytest.param({"If-None-Match": '"other"'}, "GET", Outcome.PROCEED, id="inm-miss"),
        pytest.param(
            {"If-None-Match": '"other"', "If-Modified-Since": LATER},
            "GET",
            Outcome.PROCEED,
            id="inm-wins-over-ims",
        ),
        pytest.param({"If-Modified-Since": DATE}, "GET", Outcome.NOT_MODIFIED, id="ims-same-second"),
        pytest.param({"If-Modified-Since": LATER}, "GET", Outcome.NOT_MODIFIED, id="ims-later"),
        pytest.param({"If-Modified-Since": EARLIER}, "GET", Outcome.PROCEED, id="ims-earlier"),
        pytest.param({"If-Modified-Since": "garbage"}, "GET", Outcome.PROCEED, id="ims-unparseable"),
        pytest.param(
            {"If-Modified-Since": "Fri, 31 Dec 99999999999 23:59:59 GMT"},
            "GET",
            Outcome.PROCEED,
            id="ims-year-overflows",
        ),
        pytest.param({"If-Match": '"abc"'}, "GET", Outcome.PROCEED, id="if-match"),
        pytest.param({"If-Match": 'W/"abc"'}, "GET", Outcome.PRECONDITION_FAILED, id="if-match-strong-only"),
        pytest.param({"If-Match": '"zzz"'}, "GET", Outcome.PRECONDITION_FAILED, id="if-match-miss"),
        pytest.param({"If-Unmodified-Since": EARLIER}, "GET", Outcome.PRECONDITION_FAILED, id="ius-failed"),
        pytest.param({"If-Unmodified-Since": DATE}, "GET", Outcome.PROCEED, id="ius-ok"),
    ],
)
def test_evaluate(headers: dict[str, str], method: str, outcome: Outcome) -> None:
    assert conditional.evaluate(headers, etags=TAGS, last_modified=STORED, method=method) is outcome


@pytest.mark.parametrize(
    ("header", "expected"),
    [
        pytest.param("bytes=0-99", ByteRange(0, 100), id="first-hundred"),
        pytest.param("bytes=990-", ByteRange(990, 10), id="open-ended"),
        pytest.param("bytes=-10", ByteRange(990, 10), id="suffix"),
        pytest.param("bytes=-5000", ByteRange(0, 1000), id="suffix-longer-than-file"),
        pytest.param("bytes=900-5000", ByteRange(900, 100), id="end-clamped"),
        pytest.param("bytes=0-0,5-9", None, id="multiple-ranges-ignored"),
        pytest.param("items=0-9", None, id="other-unit-ignored"),
        pytest.param("bytes=9-0", None, id="reversed-ignored"),
        pytest.param("bytes=x-y", None, id="garbage-ignored"),
    ],
)
def test_parse_range(header: str, expected: ByteRange | None) -> None:
    assert conditional.parse_range(header, 1000) == expected


@pytest.mark.parametrize(
    "header", [pytest.param("bytes=1000-", id="start-at-end"), pytest.param("bytes=-0", id="empty")]
)
def test_unsatisfiable_ranges(header: str) -> None:
    with pytest.raises(conditional.Unsatisfiable):
        conditional.parse_range(header, 1000)


def test_content_range() -> None:
    assert ByteRange(10, 5).content_range(100) == "bytes 10-14/100"


@pytest.mark.parametrize(
    ("header", "allowed"),
    [
        pytest.param(None, True, id="absent"),
        pytest.param('"abc"', True, id="same-etag"),
        pytest.param('"old"', False, id="other-etag"),
        pytest.param('W/"abc"', False, id="weak-never"),
        pytest.param(DATE, True, id="exact-date"),
        pytest.param(EARLIER, False, id="other-date"),
    ],
)
def test_if_range(header: str | None, allowed: bool) -> None:
    assert conditional.if_range_allows(header, etag='"abc"', last_modified=STORED) is allowed


@pytest.mark.parametrize(
    ("header", "gzip"),
    [
        pytest.param(None, False, id="absent"),
        pytest.param("gzip", True, id="gzip"),
        pytest.param("br, gzip;q=0.5", True, id="in-a-list"),
        pytest.param("gzip;q=0", False, id="refused"),
        pytest.param("*", True, id="star"),
        pytest.param("*, gzip;q=0", False, id="star-but-not-gzip"),
        pytest.param("identity", False, id="identity"),
        pytest.param("GZIP", True, id="case-insensitive"),
    ],
)
def test_accepts_gzip(header: str | None, gzip: bool) -> None:
    assert conditional.accepts_gzip(header) is gzip
