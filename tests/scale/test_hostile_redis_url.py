"""Hostile `--redis-url`s (an operator's typo, a pasted URL, an environment variable someone
else set): sizes, odd characters, IPv6 hosts, empty services, ports out of range, duplicate
hosts, percent-encoded and unencoded passwords. Each is read or refused with a reason that
never quotes the URL (which may hold a password), and the URL as logs show it never holds a
password. The refusal is the one line a server says at start (test_redis_url.py runs it)."""

from __future__ import annotations

import time

import pytest
from codex_mcp.scale.backends import parse_target, without_password
from codex_mcp.scale.redis_store import RedisStore

SECRET = "s3cr#t"  # what must never be shown, in any form


def refusal(url: str) -> str:
    """The reason `url` is refused, as the server's start-up line gives it."""
    with pytest.raises(ValueError) as refused:
        RedisStore(url, replay_events=10, session_ttl=10)
    message = str(refused.value)
    assert message.startswith("--redis-url is not a Redis URL ("), message
    assert "\n" not in message and "\x1b" not in message, message
    return message


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("redis+sentinel://127.0.0.1:0/svc", "port"),
        ("redis+sentinel://127.0.0.1:65536/svc", "port"),
        ("redis+sentinel://127.0.0.1:" + "9" * 40 + "/svc", "port"),
        ("redis+sentinel://127.0.0.1:-1/svc", "port"),
        ("redis+sentinel://127.0.0.1:+1/svc", "port"),
        ("redis+sentinel://127.0.0.1:\u0663/svc", "ASCII"),  # an Arabic-Indic three
        ("redis+cluster://127.0.0.1:\u00b2", "ASCII"),  # a superscript two
        ("redis+sentinel://127.0.0.1:/svc", "port"),
    ],
)
def test_a_port_out_of_range_or_not_a_number_is_refused(url: str, reason: str) -> None:
    assert reason in refusal(url)


@pytest.mark.parametrize(
    "url",
    [
        "redis+sentinel://127.0.0.1:26379/",
        "redis+sentinel://127.0.0.1:26379//",
        "redis+sentinel://127.0.0.1:26379//0",
        "redis+sentinel://127.0.0.1:26379/%20/0",
        "redis+sentinel://127.0.0.1:26379/%0A",
        "redis+sentinel://127.0.0.1:26379/a%00b",
    ],
)
def test_an_empty_or_unprintable_service_is_refused(url: str) -> None:
    assert "service" in refusal(url)


@pytest.mark.parametrize(
    "url",
    [
        "redis+sentinel://127.0.0.1:26379/svc/" + "9" * 30,
        "redis+sentinel://127.0.0.1:26379/svc/\u0663",
        "redis+sentinel://127.0.0.1:26379/svc/-1",
        "redis+sentinel://127.0.0.1:26379/svc/0x1",
    ],
)
def test_a_database_that_is_no_number_redis_takes_is_refused(url: str) -> None:
    assert "database" in refusal(url) or "ASCII" in refusal(url)


@pytest.mark.parametrize(
    "url",
    [
        "redis://127.0.0.1:notaport/0",
        "redis://[::1/0",
        "redis+sentinel://127.0.0.1:26379",  # no service
        "redis+sentinel://127.0.0.1:26379/svc/zero",
        "redis+sentinel://127.0.0.1:26379/svc/0/more",
        "redis+sentinel://127.0.0.1:x/svc",
        "redis+cluster://127.0.0.1:7000/0",  # a Cluster has one database
        "redis+replica://127.0.0.1:6379",
        "rediss+cluster://[::1:7000",
        "127.0.0.1:6379",
    ],
)
def test_what_is_not_a_redis_url_is_refused(url: str) -> None:
    refusal(url)


def test_ipv6_hosts_in_brackets_are_read() -> None:
    target = parse_target("redis+sentinel://[::1]:26379,[::1]:26380,[fe80::1%25eth0]/svc/2")
    assert target.nodes == (("::1", 26379), ("::1", 26380), ("fe80::1%eth0", 26379))
    assert (target.service, target.db) == ("svc", 2)
    assert parse_target("redis+cluster://[0:0:0:0:0:0:0:1]:7000").nodes == (("::1", 7000),)


@pytest.mark.parametrize(
    "url",
    [
        "redis+sentinel://::1:6379/svc",  # ambiguous: ::1 port 6379, or the address ::1:6379?
        "redis+cluster://[::1:7000",
        "redis+cluster://[]:7000",
        "redis+cluster://[127.0.0.1]:7000",
        "redis+cluster://[::1]x:7000",
        "redis+cluster://[::1]7000",
        "redis+cluster://[not-an-address]:7000",
    ],
)
def test_an_ipv6_host_not_in_brackets_or_not_an_address_is_refused(url: str) -> None:
    assert "IPv6" in refusal(url)


@pytest.mark.parametrize(
    "url",
    [
        "redis+sentinel://127.0.0.1:26379,127.0.0.1:26379/svc",
        "redis+sentinel://127.0.0.1,127.0.0.1:26379/svc",  # the default port, said again
        "redis+sentinel://[::1]:26379,[0::1]:26379/svc",
        "redis+cluster://Node-A:7000,node-a:7000",
    ],
)
def test_a_host_given_twice_is_refused(url: str) -> None:
    assert "twice" in refusal(url)


@pytest.mark.parametrize(
    "url",
    [
        "redis+sentinel://127.0.0.1:26379,,127.0.0.1:26380/svc",
        "redis+sentinel://127.0.0.1:26379,/svc",
        "redis+cluster://",
        "redis+cluster://@",
        "redis+cluster://:26379",
        "redis+cluster://ho%20st:7000",
        "redis+cluster://ho_st!:7000",
    ],
)
def test_a_missing_or_malformed_host_is_refused(url: str) -> None:
    assert "host" in refusal(url)


@pytest.mark.parametrize(
    "url",
    [
        "redis+sentinel://127.0.0.1:26379/sv\nc",
        "redis+sentinel://127.0.0.1:26379/svc\x1b[31m",
        "redis+sentinel://h\x00st:26379/svc",
        "redis+sentinel://127.0.0.1:26379 /svc",
        "redis://127.0.0.1:6379/0\r\n",
        "redis://127.0.0.1:6379/0\u202e",  # right-to-left override
        "rédis+sentinel://127.0.0.1:26379/svc",
    ],
)
def test_control_characters_spaces_and_non_ascii_are_refused(url: str) -> None:
    assert "ASCII" in refusal(url)


def test_a_url_too_long_or_naming_too_many_hosts_is_refused_at_once() -> None:
    started = time.monotonic()
    assert "long" in refusal("redis+sentinel://127.0.0.1:26379/" + "s" * 1_000_000)
    many = ",".join(f"10.0.{n // 250}.{n % 250}:26379" for n in range(100))
    assert "hosts" in refusal(f"redis+sentinel://{many}/svc")
    assert "long" in refusal("redis://127.0.0.1:6379/0?" + "a=b&" * 100_000)
    assert time.monotonic() - started < 1  # no quadratic reading of a huge value


@pytest.mark.parametrize(
    "url",
    [
        "redis+sentinel://127.0.0.1:26379/svc?sentinel_password=a&sentinel_password=b",
        "redis+sentinel://127.0.0.1:26379/svc?password=x",
        "redis+sentinel://127.0.0.1:26379/svc?sentinel_password",
        "redis+sentinel://127.0.0.1:26379/svc?sentinel_password=",
        "redis+cluster://127.0.0.1:7000?sentinel_password=x",
        "redis+sentinel://127.0.0.1:26379/svc#frag",
        "redis://127.0.0.1:6379/0#frag",
    ],
)
def test_an_option_that_would_be_ignored_or_a_fragment_is_refused(url: str) -> None:
    reason = refusal(url)
    assert "option" in reason or "#" in reason, reason


def test_percent_encoded_passwords_are_decoded_and_raw_at_signs_kept() -> None:
    target = parse_target("redis+sentinel://us%3Aer:p%40ss%3Aw%2Fd%25@127.0.0.1:26379/svc")
    assert (target.username, target.password) == ("us:er", "p@ss:w/d%")
    target = parse_target("redis+cluster://:p@ss@127.0.0.1:7000")  # the last @ ends it
    assert (target.username, target.password, target.nodes) == (
        None,
        "p@ss",
        (("127.0.0.1", 7000),),
    )
    target = parse_target("redis+sentinel://127.0.0.1/svc?sentinel_password=a%2Bb+c%26d")
    assert target.sentinel_password == "a+b+c&d"  # '+' is a plus: RFC 3986, not a form


@pytest.mark.parametrize(
    "url",
    [
        f"redis://:{SECRET.replace('#', '%23')}@127.0.0.1:6379/0",
        f"redis://user:{SECRET.replace('#', '%23')}@127.0.0.1:6379/0",
        f"redis://127.0.0.1:6379/0?password={SECRET.replace('#', '%23')}",
        f"redis+sentinel://:{SECRET.replace('#', '%23')}@127.0.0.1:26379/svc",
        f"redis+sentinel://127.0.0.1/svc?sentinel_password={SECRET.replace('#', '%23')}",
        f"redis+cluster://:{SECRET.replace('#', '%23')}@127.0.0.1:7000",
    ],
)
def test_the_url_as_shown_never_holds_a_password(url: str) -> None:
    shown = without_password(url)
    assert "s3cr" not in shown, shown
    assert "127.0.0.1" in shown


@pytest.mark.parametrize(
    "url",
    [
        f"redis+sentinel://u:{SECRET}@127.0.0.1:26379/svc",  # '#' unencoded in a password
        f"redis://:{SECRET}@127.0.0.1:6379/0",
        "redis+sentinel://u:s3cr/t@127.0.0.1:x/svc",
        "redis+sentinel://u:s3cr?t@127.0.0.1:x/svc",
        "redis+sentinel://u:s3cr?t@127.0.0.1:26379/svc",
        "redis+sentinel://u:s3cr@t@[::1:26379/svc",
        "redis://u:s3cr/t@127.0.0.1:6379/0",  # redis-py would read host "u", port "s3cr"
        f"redis+sentinel://u:a/b?c@d{SECRET}@127.0.0.1:26379/svc",
        "redis+sentinel://127.0.0.1/svc?sentinel_password=s3cr&sentinel_password=s3cr",
    ],
)
def test_a_refusal_never_quotes_a_password(url: str) -> None:
    assert "s3cr" not in refusal(url)
