"""Transport unit tests over ``responses``: error mapping, retries, 401 refresh, typed failures."""

from __future__ import annotations

import threading

import pytest
import requests
import responses

from cloudcoil_cache import errors
from cloudcoil_cache._http import RetryPolicy, Transport, parse_retry_after

SERVER = "https://k8s.example.test:6443"
SECRET = "s3cr3t-token-value"


class RecordingEvent(threading.Event):
    """A stop event that records each retry wait instead of blocking; set after ``stop_after``."""

    def __init__(self, stop_after: int | None = None) -> None:
        super().__init__()
        self.waits: list[float | None] = []
        self._stop_after = stop_after

    def wait(self, timeout: float | None = None) -> bool:
        self.waits.append(timeout)
        if self._stop_after is not None and len(self.waits) >= self._stop_after:
            self.set()
        return self.is_set()


class SwappingCredentials:
    """Credentials double: serves tokens in turn, moving to the next one on refresh()."""

    def __init__(self, *tokens: str | None, refresh_result: bool = True) -> None:
        self.tokens = list(tokens)
        self.refresh_result = refresh_result
        self.refreshes = 0

    def auth_header(self) -> str | None:
        return f"Bearer {self.tokens[0]}" if self.tokens[0] else None

    def refresh(self) -> bool:
        self.refreshes += 1
        if len(self.tokens) > 1:
            self.tokens.pop(0)
        return self.refresh_result

    def __repr__(self) -> str:
        return "SwappingCredentials(***)"


def status_body(code: int, reason: str, message: str, **details: object) -> dict:
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        body["details"] = details
    return body


@pytest.fixture
def stop() -> RecordingEvent:
    return RecordingEvent()


@pytest.fixture
def transport(stop: RecordingEvent):
    t = Transport(SERVER, stop_event=stop, max_retries=3, max_retry_wait=10.0)
    yield t
    t.close()


ERROR_TABLE = [
    (400, "BadRequest", errors.BadRequest),
    (401, "Unauthorized", errors.Unauthorized),
    (403, "Forbidden", errors.Forbidden),
    (404, "NotFound", errors.ResourceNotFound),
    (406, "NotAcceptable", errors.NotAcceptable),
    (409, "AlreadyExists", errors.ResourceConflict),
    (410, "Expired", errors.WatchExpired),
    (418, "Teapot", errors.APIError),
    (422, "Invalid", errors.UnprocessableEntity),
    (500, "InternalError", errors.ServerError),
    (504, "Timeout", errors.ServerTimeout),
]


@responses.activate
@pytest.mark.parametrize("code,reason,cls", ERROR_TABLE, ids=[f"{c}-{r}" for c, r, _ in ERROR_TABLE])
def test_each_error_status_raises_its_error_class_with_code_reason_and_message(transport, code, reason, cls):
    responses.get(f"{SERVER}/api/v1/pods", json=status_body(code, reason, f"boom {code}"), status=code)
    with pytest.raises(cls) as info:
        transport.request("GET", "/api/v1/pods")
    assert type(info.value) is cls
    assert (info.value.code, info.value.reason, info.value.message) == (code, reason, f"boom {code}")
    assert info.value.status["kind"] == "Status"
    assert len(responses.calls) == 1  # none of these is retried without Retry-After


NON_JSON_BODIES = [
    (b"<html><body>" + b"502 Bad Gateway " * 40 + b"</body></html>", "<html><body>502 Bad Gateway"),
    (b"upstream connect error\n", "upstream connect error"),
    (b'{"some": "json", "but": "no message"}', '{"some": "json", "but": "no message"}'),
    (b"", "Bad Gateway"),
]


@responses.activate
@pytest.mark.parametrize("body,start", NON_JSON_BODIES, ids=["long-html", "text", "json-not-status", "empty"])
def test_a_non_status_error_body_becomes_a_short_message(transport, body, start):
    responses.get(f"{SERVER}/api", body=body, status=502)
    with pytest.raises(errors.ServerError) as info:
        transport.request("GET", "/api")
    assert info.value.code == 502
    assert info.value.message.startswith(start)
    assert len(info.value.message) <= 203
    assert info.value.status == {}


@responses.activate
def test_429_with_retry_after_waits_that_long_then_succeeds(transport, stop):
    responses.get(
        f"{SERVER}/api", json=status_body(429, "TooManyRequests", "slow down"), status=429, headers={"Retry-After": "3"}
    )
    responses.get(f"{SERVER}/api", json={"kind": "APIVersions"})
    resp = transport.request("GET", "/api")
    assert resp.json() == {"kind": "APIVersions"}
    assert stop.waits == [3.0]
    assert len(responses.calls) == 2


@responses.activate
def test_retry_after_seconds_in_the_status_details_are_honoured_without_a_header(transport, stop):
    responses.get(f"{SERVER}/api", status=429, json=status_body(429, "TooManyRequests", "slow", retryAfterSeconds=2))
    responses.get(f"{SERVER}/api", json={})
    transport.request("GET", "/api")
    assert stop.waits == [2.0]


@responses.activate
def test_retry_after_is_capped_by_max_retry_wait(transport, stop):
    responses.get(f"{SERVER}/api", status=429, headers={"Retry-After": "120"})
    responses.get(f"{SERVER}/api", json={})
    transport.request("GET", "/api")
    assert stop.waits == [10.0]


@responses.activate
def test_503_without_retry_after_is_raised_at_once_as_client_go_does(transport, stop):
    responses.get(f"{SERVER}/api", json=status_body(503, "ServiceUnavailable", "starting"), status=503)
    with pytest.raises(errors.ServerError) as info:
        transport.request("GET", "/api")
    assert (info.value.code, info.value.reason) == (503, "ServiceUnavailable")
    assert len(responses.calls) == 1 and stop.waits == []


@responses.activate
def test_503_with_retry_after_is_retried_max_retries_times_then_raised(transport, stop):
    responses.get(
        f"{SERVER}/api",
        json=status_body(503, "ServiceUnavailable", "shutting down"),
        status=503,
        headers={"Retry-After": "2"},
    )
    with pytest.raises(errors.ServerError) as info:
        transport.request("GET", "/api")
    assert (info.value.code, info.value.retry_after) == (503, 2.0)
    assert len(responses.calls) == 4
    assert stop.waits == [2.0, 2.0, 2.0]


@responses.activate
def test_a_429_that_never_ends_raises_too_many_requests_with_retry_after(transport, stop):
    responses.get(f"{SERVER}/api", status=429, headers={"Retry-After": "1"})
    with pytest.raises(errors.TooManyRequests) as info:
        transport.request("GET", "/api")
    assert info.value.retry_after == 1.0
    assert len(responses.calls) == 4


@responses.activate
def test_a_500_without_retry_after_is_not_retried(transport, stop):
    responses.get(f"{SERVER}/api", status=500, body=b"oops")
    with pytest.raises(errors.ServerError):
        transport.request("GET", "/api")
    assert len(responses.calls) == 1 and stop.waits == []


@responses.activate
def test_a_5xx_carrying_retry_after_is_retried(transport, stop):
    responses.get(f"{SERVER}/api", status=502, headers={"Retry-After": "1"})
    responses.get(f"{SERVER}/api", json={})
    transport.request("GET", "/api")
    assert stop.waits == [1.0] and len(responses.calls) == 2


@responses.activate
def test_setting_the_stop_event_during_a_retry_wait_raises_the_last_error_at_once():
    stop = RecordingEvent(stop_after=1)
    responses.get(f"{SERVER}/api", status=429, headers={"Retry-After": "5"})
    with Transport(SERVER, stop_event=stop) as t, pytest.raises(errors.TooManyRequests):
        t.request("GET", "/api")
    assert len(responses.calls) == 1


@responses.activate
def test_a_per_request_stop_event_overrides_the_transports(transport, stop):
    mine = RecordingEvent(stop_after=1)
    responses.get(f"{SERVER}/api", status=503, headers={"Retry-After": "1"})
    with pytest.raises(errors.ServerError):
        transport.request("GET", "/api", stop_event=mine)
    assert mine.waits == [1.0] and stop.waits == []


RETRY_AFTER_VALUES = [
    ({"Retry-After": "7"}, 7.0),
    ({"Retry-After": "0.5"}, 0.5),
    ({"Retry-After": "-3"}, 0.0),
    ({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # a date in the past
    ({"Retry-After": "soon"}, None),
    ({}, None),
]


@pytest.mark.parametrize(
    "headers,expected", RETRY_AFTER_VALUES, ids=["seconds", "fraction", "negative", "past-date", "garbage", "absent"]
)
def test_retry_after_header_values_parse_to_seconds(headers, expected):
    assert parse_retry_after(headers) == expected


POLICY_TABLE = [
    (429, None, 0, None),
    (429, 3.0, 0, 3.0),
    (429, 3.0, 4, 3.0),
    (429, 3.0, 5, None),
    (503, None, 1, None),
    (503, 2.0, 1, 2.0),
    (500, None, 0, None),
    (500, 0.0, 0, 0.0),
    (504, 1.0, 0, 1.0),
    (404, 2.0, 0, None),
    (409, 1.0, 0, None),
    (503, 30.0, 0, 8.0),
]


@pytest.mark.parametrize(
    "code,retry_after,attempt,delay", POLICY_TABLE, ids=[f"{c}-ra{r}-attempt{a}" for c, r, a, _ in POLICY_TABLE]
)
def test_retry_policy_retries_only_what_client_go_retries(code, retry_after, attempt, delay):
    assert RetryPolicy(max_retries=5, max_wait=8.0).delay(code, retry_after, attempt) == delay


@responses.activate
def test_a_401_refreshes_the_credentials_once_and_retries_with_the_new_token(stop):
    creds = SwappingCredentials("old", "new")
    responses.get(f"{SERVER}/api", status=401, json=status_body(401, "Unauthorized", "Unauthorized"))
    responses.get(f"{SERVER}/api", json={"ok": True})
    with Transport(SERVER, credentials=creds, stop_event=stop) as t:
        assert t.request("GET", "/api").json() == {"ok": True}
    assert [c.request.headers["Authorization"] for c in responses.calls] == ["Bearer old", "Bearer new"]
    assert creds.refreshes == 1 and stop.waits == []


@responses.activate
def test_a_second_401_after_a_refresh_is_raised_without_another_refresh(stop):
    creds = SwappingCredentials("old", "also-bad")
    responses.get(f"{SERVER}/api", status=401, json=status_body(401, "Unauthorized", "Unauthorized"))
    with Transport(SERVER, credentials=creds, stop_event=stop) as t, pytest.raises(errors.Unauthorized):
        t.request("GET", "/api")
    assert creds.refreshes == 1 and len(responses.calls) == 2


@responses.activate
def test_a_401_is_raised_at_once_when_the_refresh_finds_nothing_new(stop):
    creds = SwappingCredentials("old", refresh_result=False)
    responses.get(f"{SERVER}/api", status=401)
    with Transport(SERVER, credentials=creds, stop_event=stop) as t, pytest.raises(errors.Unauthorized):
        t.request("GET", "/api")
    assert creds.refreshes == 1 and len(responses.calls) == 1


@responses.activate
@pytest.mark.parametrize("creds", [None, SwappingCredentials(None)], ids=["no-credentials", "no-header"])
def test_no_authorization_header_is_sent_without_a_credential(creds):
    responses.get(f"{SERVER}/version", json={})
    with Transport(SERVER, credentials=creds) as t:
        t.request("GET", "/version")
    assert "Authorization" not in responses.calls[0].request.headers


@responses.activate
def test_params_body_content_type_user_agent_and_extra_headers_are_sent():
    responses.post(f"{SERVER}/api/v1/namespaces/a/pods", json={}, status=201)
    with Transport(SERVER + "/", user_agent="tests/1.0") as t:
        assert t.server == SERVER
        resp = t.request(
            "POST",
            "/api/v1/namespaces/a/pods",
            params={"dryRun": "All"},
            body=b'{"x":1}',
            content_type="application/json",
            headers={"X-Extra": "1"},
        )
    sent = responses.calls[0].request
    assert resp.status_code == 201
    assert sent.url.endswith("/api/v1/namespaces/a/pods?dryRun=All")
    assert sent.body == b'{"x":1}'
    assert (sent.headers["Content-Type"], sent.headers["User-Agent"], sent.headers["X-Extra"]) == (
        "application/json",
        "tests/1.0",
        "1",
    )


@responses.activate
def test_a_body_that_is_not_json_raises_decode_error_from_response_json(transport):
    responses.get(f"{SERVER}/api", body=b"not json {")
    resp = transport.request("GET", "/api")
    with pytest.raises(errors.DecodeError, match="invalid JSON"):
        resp.json()
    assert "not json" not in repr(resp) and "10 bytes" in repr(resp)


TRANSPORT_FAILURES = [
    (requests.exceptions.ConnectTimeout("connect timed out"), errors.ConnectError, "timed out connecting"),
    (requests.exceptions.ReadTimeout("read timed out"), errors.ReadTimeout, "read timeout"),
    (requests.exceptions.ConnectionError("refused"), errors.ConnectError, "cannot connect"),
    (requests.exceptions.SSLError("bad cert"), errors.ConnectError, "TLS handshake failed"),
    (requests.exceptions.ChunkedEncodingError("cut"), errors.ProtocolError, "cut off"),
]


@responses.activate
@pytest.mark.parametrize(
    "exc,cls,words", TRANSPORT_FAILURES, ids=["connect-timeout", "read-timeout", "connection-error", "ssl", "chunked"]
)
def test_transport_failures_become_typed_errors_naming_method_and_path(exc, cls, words):
    responses.get(f"{SERVER}/api/v1/pods", body=exc)
    with Transport(SERVER, credentials=SwappingCredentials(SECRET)) as t:
        with pytest.raises(cls) as info:
            t.request("GET", "/api/v1/pods", params={"limit": "5"})
    text = str(info.value)
    assert text.startswith("GET /api/v1/pods:") and words in text
    assert SECRET not in text and "Authorization" not in text
    assert isinstance(info.value, errors.TransportError) and info.value.__cause__ is exc


@responses.activate
def test_a_stream_yields_the_lines_of_the_body():
    body = b'{"type":"ADDED"}\n\n{"type":"MODIFIED"}\n'
    responses.get(f"{SERVER}/api/v1/pods", body=body)
    with Transport(SERVER) as t, t.stream("/api/v1/pods", params={"watch": "1"}) as s:
        assert list(s) == [b'{"type":"ADDED"}', b'{"type":"MODIFIED"}']
    assert responses.calls[0].request.headers["Accept-Encoding"] == "identity"


@responses.activate
def test_a_stream_whose_body_ends_inside_a_line_raises_protocol_error():
    responses.get(f"{SERVER}/w", body=b'{"type":"ADDED"}\n{"type":"MOD')
    with Transport(SERVER) as t, t.stream("/w") as s:
        it = iter(s)
        assert next(it) == b'{"type":"ADDED"}'
        with pytest.raises(errors.ProtocolError, match="ended inside a line"):
            next(it)


@responses.activate
def test_a_stream_error_status_raises_the_api_error_without_retrying():
    responses.get(f"{SERVER}/w", status=410, json=status_body(410, "Expired", "too old resource version"))
    with Transport(SERVER) as t, pytest.raises(errors.WatchExpired, match="too old"):
        t.stream("/w")
    assert len(responses.calls) == 1


@responses.activate
def test_a_stream_401_refreshes_once_and_reopens():
    creds = SwappingCredentials("old", "new")
    responses.get(f"{SERVER}/w", status=401)
    responses.get(f"{SERVER}/w", body=b"{}\n")
    with Transport(SERVER, credentials=creds) as t, t.stream("/w") as s:
        assert list(s) == [b"{}"]
    assert creds.refreshes == 1


BAD_SERVERS = [
    ("", "got ''"),
    ("localhost:6443", "scheme 'localhost'"),
    ("ftp://host", "scheme 'ftp'"),
    ("https://", "no host"),
    ("https://host:99999", "bad host or port"),
    (f"https://admin:{SECRET}@host", "user name or password"),
    (f"https://host/?token={SECRET}", "query or fragment"),
]


@pytest.mark.parametrize(
    "server,words", BAD_SERVERS, ids=["empty", "no-scheme", "ftp", "no-host", "bad-port", "credentials-in-url", "query"]
)
def test_a_bad_server_url_raises_config_error_without_echoing_secrets(server, words):
    with pytest.raises(errors.ConfigError, match="server") as info:
        Transport(server)
    assert words in str(info.value) and SECRET not in str(info.value)


@pytest.mark.parametrize(
    "kwargs",
    [{"read_timeout": 0}, {"connect_timeout": -1}, {"max_retries": -1}, {"max_retry_wait": "5"}],
    ids=["read", "connect", "retries", "wait"],
)
def test_bad_numeric_options_raise_value_error_naming_the_option(kwargs):
    with pytest.raises(ValueError, match=next(iter(kwargs))):
        Transport(SERVER, **kwargs)


def test_a_path_without_a_leading_slash_is_rejected(transport):
    with pytest.raises(ValueError, match="must start with '/'"):
        transport.request("GET", "api")


def test_a_closed_transport_refuses_requests_and_closing_twice_is_fine(transport):
    transport.close()
    transport.close()
    with pytest.raises(errors.TransportError, match="closed"):
        transport.request("GET", "/api")


@responses.activate
def test_a_credential_with_a_newline_is_refused_without_showing_it():
    responses.get(f"{SERVER}/api", json={})
    with Transport(SERVER, credentials=SwappingCredentials(f"{SECRET}\r\nX-Injected: 1")) as t:
        with pytest.raises(errors.ConfigError, match="value not shown") as info:
            t.request("GET", "/api")
    assert SECRET not in str(info.value) and len(responses.calls) == 0
