"""The pure pieces of the secure metrics filter: the bearer header, the answer memory, the user key,
and the options that configure it."""

from __future__ import annotations

from pathlib import Path

import pytest

from olm_runtime.clock import FakeClock
from olm_runtime.manager import ManagerOptions, SecureMetricsOptions
from olm_runtime.manager._metrics_auth import ReviewCache, User, bearer_token


@pytest.mark.parametrize(
    ("header", "token"),
    [
        pytest.param("Bearer abc.def", "abc.def", id="bearer"),
        pytest.param("bearer abc", "abc", id="scheme-case-insensitive"),
        pytest.param("  Bearer   abc  ", "abc", id="surrounding-spaces"),
        pytest.param(None, None, id="no-header"),
        pytest.param("", None, id="empty-header"),
        pytest.param("Bearer", None, id="no-token"),
        pytest.param("Bearer  ", None, id="blank-token"),
        pytest.param("Basic dXNlcjpwYXNz", None, id="basic-scheme"),
        pytest.param("Bearer a b", None, id="token-with-space"),
        pytest.param("Bearerabc", None, id="no-separator"),
    ],
)
def test_bearer_token_reads_only_the_bearer_scheme(header: str | None, token: str | None) -> None:
    assert bearer_token(header) == token


def test_an_answer_is_served_until_its_ttl_then_forgotten() -> None:
    clock = FakeClock()
    cache: ReviewCache[str, bool] = ReviewCache(time=clock)
    cache.put("allowed", True, 300)
    cache.put("denied", False, 30)
    clock.advance(29.9)
    assert (cache.get("allowed"), cache.get("denied")) == (True, False)
    clock.advance(0.1)
    assert (cache.get("allowed"), cache.get("denied")) == (True, None)
    assert len(cache) == 1, "an expired answer is dropped when read"
    clock.advance(270)
    assert cache.get("allowed") is None


def test_storing_again_renews_an_answer() -> None:
    clock = FakeClock()
    cache: ReviewCache[str, bool] = ReviewCache(time=clock)
    cache.put("k", False, 30)
    clock.advance(20)
    cache.put("k", True, 30)
    clock.advance(20)
    assert cache.get("k") is True


def test_the_memory_is_bounded_and_drops_the_least_recently_used() -> None:
    cache: ReviewCache[int, int] = ReviewCache(max_entries=3, time=FakeClock())
    for key in (1, 2, 3):
        cache.put(key, key, 60)
    assert cache.get(1) == 1  # 2 is now the least recently used
    cache.put(4, 4, 60)
    assert len(cache) == 3
    assert [cache.get(key) for key in (1, 2, 3, 4)] == [1, None, 3, 4]


def test_a_memory_holds_at_least_one_answer() -> None:
    with pytest.raises(ValueError, match="max_entries"):
        ReviewCache(max_entries=0)


def test_a_reviewed_user_is_a_stable_key_whatever_the_order_of_its_extra() -> None:
    review = {
        "username": "system:serviceaccount:monitoring:prometheus",
        "uid": "1234",
        "groups": ["system:serviceaccounts", "system:authenticated"],
        "extra": {"b": ["2"], "a": ["1", "0"]},
    }
    reordered = {**review, "extra": {"a": ["1", "0"], "b": ["2"]}}
    user = User.from_review(review)
    assert user == User.from_review(reordered)
    assert hash(user) == hash(User.from_review(reordered))
    assert user.extra == (("a", ("1", "0")), ("b", ("2",)))
    assert User.from_review({"username": "bob"}) == User(name="bob")


def test_secure_metrics_cannot_share_the_probe_address() -> None:
    with pytest.raises(ValueError, match="own address"):
        ManagerOptions(
            metrics_bind_address=":8443",
            health_probe_bind_address=":8443",
            metrics_secure=SecureMetricsOptions(),
        )
    ManagerOptions(metrics_bind_address=":8080", health_probe_bind_address=":8080")
    ManagerOptions(
        metrics_bind_address="0", health_probe_bind_address="0", metrics_secure=SecureMetricsOptions()
    )


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        pytest.param({"cert_poll_interval": 0}, "cert_poll_interval", id="no-poll-interval"),
    ],
)
def test_secure_metrics_options_reject(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SecureMetricsOptions(**settings)  # type: ignore[arg-type]


def test_certificate_files_are_named_inside_the_cert_dir() -> None:
    options = SecureMetricsOptions(cert_dir=Path("/var/certs"), cert_name="tls.cert")
    assert (options.cert_file, options.key_file) == (Path("/var/certs/tls.cert"), Path("/var/certs/tls.key"))
    assert (SecureMetricsOptions().cert_file, SecureMetricsOptions().key_file) == (None, None)
