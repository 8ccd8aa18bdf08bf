"""The integration run's receiver on its own: idempotent per id, strict about its input, and it
stops cleanly."""

from __future__ import annotations

import json
import socket
import threading
import time
from types import SimpleNamespace
from urllib.parse import urlsplit

import pytest

from grader.harness.judge.receiver import DeliveryRefused, Receiver, deliver, request


def job(id, qty, token=1):
    return SimpleNamespace(id=id, qty=qty, token=token)


@pytest.fixture
def receiver(tmp_path):
    with Receiver(tmp_path / "receiver.db") as running:
        yield running


def post(receiver, payload) -> tuple[int, dict]:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    reply = request(receiver.url, "POST", body)
    return reply.status, reply.body


def test_first_delivery_is_applied(receiver):
    reply = deliver(receiver.url, job(7, 3))
    assert (reply.status, reply.body) == (201, {"result": "applied", "id": 7, "qty": 3})
    assert receiver.records() == {7: 3}


def test_resend_with_same_qty_is_a_duplicate_and_not_applied_again(receiver):
    deliver(receiver.url, job(7, 3, token=1))
    reply = deliver(receiver.url, job(7, 3, token=2))
    assert (reply.status, reply.body) == (200, {"result": "duplicate", "id": 7, "qty": 3})
    assert receiver.records() == {7: 3}
    assert [(a["token"], a["result"]) for a in receiver.attempts()] == [(1, "applied"),
                                                                        (2, "duplicate")]


def test_token_is_logged_not_compared(receiver):
    deliver(receiver.url, job(7, 3, token=5))
    assert deliver(receiver.url, job(7, 3, token=1)).result == "duplicate"  # an older token too


def test_resend_with_another_qty_is_a_409_conflict(receiver):
    deliver(receiver.url, job(7, 3))
    with pytest.raises(DeliveryRefused) as refused:
        deliver(receiver.url, job(7, 4))
    reply = refused.value.reply
    assert (reply.status, reply.body) == (409, {"result": "conflict", "id": 7, "qty": 4,
                                                "recorded_qty": 3})
    assert receiver.records() == {7: 3}


@pytest.mark.parametrize("body", [b"{not json", b"", b"\xff\xfe", b"[1, 2]", b"42"])
def test_malformed_json_is_a_400(receiver, body):
    status, reply = post(receiver, body)
    assert status == 400 and reply["result"] == "bad-request", reply
    assert receiver.records() == {}


@pytest.mark.parametrize("payload", [
    {"qty": 3, "token": 1}, {"id": 1, "token": 1}, {"id": 1, "qty": 3},
    {"id": "1", "qty": 3, "token": 1}, {"id": 1, "qty": 3.0, "token": 1},
    {"id": 1, "qty": True, "token": 1}, {"id": 1, "qty": 3, "token": None},
    {"id": 1, "qty": 0, "token": 1},
])
def test_missing_or_wrong_typed_fields_are_a_400(receiver, payload):
    status, reply = post(receiver, payload)
    assert status == 400 and reply["result"] == "bad-request", reply
    assert receiver.records() == {}


def test_other_paths_are_404_and_other_methods_405(receiver):
    other = receiver.url.replace("/deliveries", "/elsewhere")
    assert request(other, "POST", b"{}").status == 404
    reply = request(receiver.url, "GET")
    assert (reply.status, reply.body) == (405, {"result": "method-not-allowed"})


def test_concurrent_posts_of_one_id_apply_exactly_once(receiver):
    threads = 8
    start = threading.Barrier(threads)
    replies = []

    def post_once(token):
        start.wait(timeout=10)
        replies.append(deliver(receiver.url, job(1, 5, token)))

    workers = [threading.Thread(target=post_once, args=(t,)) for t in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=30)
    results = sorted((r.status, r.result) for r in replies)
    assert results == [(200, "duplicate")] * (threads - 1) + [(201, "applied")]
    assert receiver.records() == {1: 5}
    assert len(receiver.attempts()) == threads


def test_stops_cleanly(tmp_path):
    before = threading.active_count()
    receiver = Receiver(tmp_path / "receiver.db").start()
    url = receiver.url
    deliver(url, job(1, 2))
    receiver.stop()
    assert threading.active_count() == before
    parts = urlsplit(url)
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((parts.hostname, parts.port), timeout=5).close()
    assert receiver.records() == {1: 2}  # the ledger outlives the server
    receiver.stop()  # stopping twice is harmless


# --- untrusted input: every bad body is answered 400, never a closed connection ----------------

def fields(**overrides) -> bytes:
    return json.dumps({"id": 1, "qty": 3, "token": 1, **overrides}).encode()


@pytest.mark.parametrize("body", [
    fields(id=2**63), fields(qty=2**63), fields(token=2**63), fields(token=-2**63 - 1),
    fields(id=10**200),
    b'{"id": 1, "qty": 3, "token": ' + b"9" * 5000 + b"}",  # over Python's 4300 digits
    b"[" * 30_000 + b"]" * 30_000,  # RecursionError in the decoder
    b'{"id": 1, "qty": 3, "token": 1, "x": ' + b'{"a": ' * 5_000 + b"1" + b"}" * 5_000 + b"}",
    b'{"id": 1, "qty": 3, "token": 1, "x": NaN}', b'{"id": 1, "qty": 3, "token": Infinity}',
    b'{"id": 1, "qty": 3, "token": 1, "x": -Infinity}', b'{"id": 1, "qty": 3, "token": 1e999}',
    b'{"id": 1, "qty": 3, "token": 1, "x": 1e999}', b'{"id": 1, "qty": 3, "token": "\xc3\x28"}',
    b'\xef\xbb\xbf{"id": 1, "qty": 3, "token": 1}',  # a BOM is not JSON either
])
def test_out_of_range_and_unparsable_bodies_are_a_400(receiver, body):
    assert len(body) <= 64 * 1024
    status, reply = post(receiver, body)
    assert status == 400 and reply["result"] == "bad-request" and reply["error"], reply
    assert receiver.records() == {} and receiver.attempts() == []


def test_the_signed_64_bit_extremes_are_accepted(receiver):
    low, high = -2**63, 2**63 - 1
    assert post(receiver, fields(id=high, qty=high, token=low)) == (
        201, {"result": "applied", "id": high, "qty": high})
    assert receiver.records() == {high: high}


def test_duplicate_keys_take_the_last_value(receiver):
    assert post(receiver, b'{"id": 1, "qty": 0, "qty": 3, "token": 1}')[0] == 201
    assert receiver.records() == {1: 3}


def raw_exchange(receiver, data: bytes, timeout: float = 5) -> bytes:
    parts = urlsplit(receiver.url)
    with socket.create_connection((parts.hostname, parts.port), timeout=timeout) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        return b"".join(iter(lambda: sock.recv(4096), b""))


@pytest.mark.parametrize("length", ["\u00b2", "-1", "1e3", " "])
def test_a_content_length_that_is_not_a_number_is_a_400(receiver, length):
    head = f"POST /deliveries HTTP/1.0\r\nContent-Length: {length}\r\n\r\n".encode("latin-1")
    answer = raw_exchange(receiver, head + fields())
    assert answer.startswith(b"HTTP/1.0 400 ") and b"bad-request" in answer, answer


def test_a_body_shorter_than_its_content_length_is_a_400(receiver):
    answer = raw_exchange(receiver, b"POST /deliveries HTTP/1.0\r\nContent-Length: 100\r\n\r\n"
                          + fields())
    assert answer.startswith(b"HTTP/1.0 400 ") and b"shorter" in answer, answer
    assert receiver.records() == {}


@pytest.mark.parametrize("sent", [b"", b"POST /deliveries HTTP/1.0\r\n",
                                  b"POST /deliveries HTTP/1.0\r\nContent-Length: 40\r\n\r\n{"])
def test_stop_is_not_held_up_by_a_client_that_stalls_mid_request(tmp_path, sent):
    before = threading.active_count()
    receiver = Receiver(tmp_path / "receiver.db").start()
    parts = urlsplit(receiver.url)
    with socket.create_connection((parts.hostname, parts.port), timeout=5) as stalled:
        stalled.sendall(sent)
        deliver(receiver.url, job(1, 2))  # the receiver still serves others meanwhile
        time.sleep(0.1)  # let the stalled request reach the receiver's read
        start = time.monotonic()
        receiver.stop()
        assert time.monotonic() - start < 1.5
    assert threading.active_count() == before
    assert receiver.records() == {1: 2}
