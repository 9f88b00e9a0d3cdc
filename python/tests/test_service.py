"""`zeppelin.ServiceClient` against the real `zeppelin serve` (target/release/zeppelin on port
0): device ciphertexts uploaded, aggregated by the server, the results decrypted by SEAL."""

from __future__ import annotations

import subprocess

import numpy as np
import pytest

import zeppelin
from servers import running


class Roles:
    """The owner's client and a device's client of one server (docs/server.md roles): the
    device uploads, the owner counts and aggregates."""

    def __init__(self, url: str, owner: str, device: str):
        self.url = url
        self.owner = zeppelin.ServiceClient(url, token=owner)
        self.device = zeppelin.ServiceClient(url, token=device)

    def health(self):
        return self.device.health()

    def upload(self, *args, **kwargs):
        return self.device.upload(*args, **kwargs)

    def count(self, stream):
        return self.owner.count(stream)

    def aggregate(self, *args):
        return self.owner.aggregate(*args)


@pytest.fixture(scope="module")
def service(binary, keydir, tmp_path_factory):
    data = tmp_path_factory.mktemp("store")
    subprocess.run([binary, "devices", "owner", "--data", str(data)], check=True, capture_output=True)
    owner = (data / "owner.token").read_text().strip()
    add = [binary, "devices", "add", "--data", str(data), "--device", "py-room"]
    for stream in ["room-1", "room-2", "room-3", "room-4"]:
        add += ["--stream", stream]
    device = subprocess.run(add, check=True, capture_output=True, text=True).stdout.strip()
    args = [binary, "serve", "--data", str(data), "--keys", str(keydir), "--listen", "127.0.0.1:0"]
    with running(args, "stdout", "listening on") as url:
        yield Roles(url, owner, device)


def test_credentials_are_required_and_roles_hold(service, keys):
    ct = keys.encrypt([1, 2, 3])
    with pytest.raises(zeppelin.ServiceError, match="401"):
        zeppelin.ServiceClient(service.url).upload("room-3", ct)
    with pytest.raises(zeppelin.ServiceError, match="401"):
        zeppelin.ServiceClient(service.url, token="zpd.py-room." + "0" * 64).upload("room-3", ct)
    with pytest.raises(zeppelin.ServiceError, match="403"):
        service.device.aggregate("room-1", "sum")
    with pytest.raises(zeppelin.ServiceError, match="403"):
        service.device.upload("not-mine", ct)
    with pytest.raises(zeppelin.ServiceError, match="403"):
        service.owner.upload("room-3", ct)


def test_upload_and_aggregate_decrypt_in_seal(service, keys, sealkeys, rng):
    p = keys.parameters
    assert service.health() == "seal4096"
    assert service.url.startswith("http://127.0.0.1:")
    readings = [rng.integers(0, 200, size=p.n) for _ in range(3)]
    receipts = [
        service.upload("room-1", keys.encrypt(r, mode=mode))
        for r, mode in zip(readings, ["seeded", "symmetric", "public"])
    ]
    assert len({r.id for r in receipts}) == 3 and not any(r.replayed for r in receipts)
    assert service.count("room-1") == 3
    total = sum(readings) % p.t
    ct, count = service.aggregate("room-1", "sum")
    assert count == 3
    assert np.array_equal(sealkeys.decrypt(sealkeys.load(ct)), total)
    assert np.array_equal(keys.decrypt(ct), total)
    squares, _ = service.aggregate("room-1", "sum_of_squares")
    assert np.array_equal(sealkeys.decrypt(sealkeys.load(squares)), sum(r * r for r in readings) % p.t)
    weights = [2, -1, 5]
    dot, _ = service.aggregate("room-1", "dot", weights)
    expected = sum(w * r for w, r in zip(weights, readings)) % p.t
    assert np.array_equal(sealkeys.decrypt(sealkeys.load(dot)), expected)


def test_idempotent_upload_is_replayed(service, keys):
    ct = keys.encrypt([7, 8, 9])
    first = service.upload("room-2", ct, idempotency_key="reading-1")
    again = service.upload("room-2", ct, idempotency_key="reading-1")
    assert again == zeppelin.Receipt(first.id, True)
    assert service.count("room-2") == 1


def test_owner_pins_first_n_and_deletes(service, keys, sealkeys):
    values = [[1, 2, 3], [10, 20, 30], [100, 200, 300]]
    receipts = [service.upload("room-4", keys.encrypt(v)) for v in values]

    def slots(ct):
        return list(sealkeys.decrypt(sealkeys.load(ct))[:3])

    ct, n = service.owner.aggregate("room-4", "sum", first_n=2)
    assert n == 2 and slots(ct) == [11, 22, 33]
    ct, n = service.owner.aggregate("room-4", "dot", [3, 1], first_n=2)
    assert n == 2 and slots(ct) == [13, 26, 39]
    with pytest.raises(zeppelin.ServiceError, match="400"):
        service.owner.aggregate("room-4", "sum", first_n=4)
    for bad in [0, -1, 1.5, True]:
        with pytest.raises(zeppelin.InputError, match="first_n"):
            service.owner.aggregate("room-4", "sum", first_n=bad)

    with pytest.raises(zeppelin.ServiceError, match="403"):
        service.device.delete_upload("room-4", receipts[1].id)
    with pytest.raises(zeppelin.ServiceError, match="401"):
        zeppelin.ServiceClient(service.url).delete_device_uploads("room-4", "py-room")
    assert service.owner.delete_upload("room-4", receipts[1].id) == 1
    with pytest.raises(zeppelin.ServiceError, match="404"):
        service.owner.delete_upload("room-4", receipts[1].id)
    ct, n = service.owner.aggregate("room-4", "sum")
    assert n == 2 and slots(ct) == [101, 202, 303]
    assert service.owner.delete_device_uploads("room-4", "py-room") == 2
    with pytest.raises(zeppelin.ServiceError, match="404"):
        service.count("room-4")


def test_service_errors(service, keys):
    with pytest.raises(zeppelin.ServiceError):
        service.upload("room-3", b"not a ciphertext")
    with pytest.raises(zeppelin.InputError, match="dot needs weights"):
        service.aggregate("room-1", "dot")
    with pytest.raises(zeppelin.InputError, match="unknown aggregation"):
        service.aggregate("room-1", "median")
    with pytest.raises(zeppelin.ServiceError, match="http://"):
        zeppelin.ServiceClient("ftp://127.0.0.1:1")
    with pytest.raises(zeppelin.ServiceError, match="failed"):
        zeppelin.ServiceClient("http://127.0.0.1:1").health()
