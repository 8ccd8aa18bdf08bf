"""The integration run's receiver on its own: idempotent per id, strict about its input, and it
stops cleanly."""

from __future__ import annotations

import json
import socket
import threading
from types import SimpleNamespace
from urllib.parse import urlsplit

import pytest

from grader.harness.receiver import DeliveryRefused, Receiver, deliver, request


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
