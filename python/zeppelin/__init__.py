"""Zeppelin's host side from Python.

- :func:`keygen` and :class:`KeyDirectory`: key directories as written by ``zeppelin keygen``
  and ``zeppelin keys`` (every check the CLI makes at load), device encryption and decryption
  with NumPy arrays in and out, and the device <-> SEAL conversions (bytes that seal-python's
  ``Ciphertext.load`` accepts);
- :class:`Parameters`: a preset's parameters, SEAL ``EncryptionParameters`` bytes, and SEAL's
  batch encoding;
- :class:`Evaluator`: the Rust SEAL evaluator (byte for byte SEAL 4.1's) on SEAL ciphertext
  bytes: add, multiply, relinearize, rotate, sum, ...;
- :class:`ServiceClient`: a client of ``zeppelin serve`` (docs/server.md);
- :class:`EvalmultClient`: the host driver of ``zeppelin evalmult serve``: stream batches of
  ciphertext pairs, get their relinearized products, time sessions.

Every failure raises a subclass of :class:`ZeppelinError`; heavy work runs with the GIL
released.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import numpy.typing as npt

from . import _native
from ._native import (
    CiphertextError,
    EvalmultError,
    EvaluationError,
    InputError,
    KeyDirectoryError,
    ServiceError,
    ZeppelinError,
)

__all__ = [
    "CiphertextError",
    "EvalmultClient",
    "EvalmultResult",
    "EvaluationError",
    "Evaluator",
    "InputError",
    "KeyDirectory",
    "KeyDirectoryError",
    "Parameters",
    "Receipt",
    "ServiceClient",
    "ServiceError",
    "ZeppelinError",
    "EvalmultError",
    "keygen",
    "presets",
]

_U32_MAX = 0xFFFF_FFFF


def _u32_bytes(values: npt.ArrayLike, what: str) -> bytes:
    """``values`` (integers in [0, 2^32)) as little-endian u32 bytes, refusing anything else."""
    array = np.asarray(values)
    if array.dtype.kind not in "iu":
        if array.size == 0:
            array = array.astype(np.uint32)
        else:
            raise InputError(f"{what}: expected integers, got an array of {array.dtype}")
    if array.size and (int(array.min()) < 0 or int(array.max()) > _U32_MAX):
        raise InputError(f"{what}: values must be in [0, 2^32)")
    return np.ascontiguousarray(array, dtype="<u4").tobytes()


def _u32_array(data: bytes, shape: tuple[int, ...] | None = None) -> npt.NDArray[np.uint32]:
    """A writable uint32 array of little-endian bytes."""
    array = np.frombuffer(bytearray(data), dtype="<u4").astype(np.uint32, copy=False)
    return array.reshape(shape) if shape is not None else array


def presets() -> list[str]:
    """The names of the device presets (``seal4096``, ``zeppelin4096``, ``seal8192``)."""
    return list(_native.preset_names())


@dataclass(frozen=True)
class Parameters:
    """A device preset's parameters.

    ``n`` is the ring degree and number of slots, ``t`` the plaintext modulus, ``data_primes``
    the device's ciphertext primes, ``special_prime`` SEAL's key prime (``None`` for a preset
    whose ciphertexts ``to_seal`` switches down to SEAL's first level).
    """

    name: str
    n: int
    t: int
    data_primes: tuple[int, ...]
    special_prime: int | None

    @classmethod
    def preset(cls, name: str) -> Parameters:
        """The parameters of the preset ``name`` (:func:`presets`); ``InputError`` if unknown."""
        pname, n, t, primes, special = _native.preset_info(name)
        return cls(pname, n, t, tuple(primes), special)

    def seal_parameters(self) -> bytes:
        """SEAL's ``EncryptionParameters`` of the preset, uncompressed (what ``keygen`` writes
        to ``D/params.seal``; seal-python's ``EncryptionParameters.load`` reads it from a file)."""
        return _native.seal_parameters(self.name)

    def encode(self, slots: npt.ArrayLike) -> npt.NDArray[np.uint32]:
        """The plaintext polynomial (``n`` coefficients) of up to ``n`` slot values below ``t``
        (missing slots are 0), in SEAL's ``BatchEncoder`` layout."""
        return _u32_array(_native.encode(self.name, _u32_bytes(slots, "slots")))

    def decode(self, coefficients: npt.ArrayLike) -> npt.NDArray[np.uint32]:
        """The ``n`` slot values of a plaintext polynomial (``n`` coefficients below ``t``)."""
        return _u32_array(_native.decode(self.name, _u32_bytes(coefficients, "coefficients")))


def keygen(directory: str | os.PathLike[str], preset: str = "seal4096", force: bool = False) -> KeyDirectory:
    """``zeppelin keygen --dir DIRECTORY --preset PRESET [--force]``: a new device secret key
    and its SEAL objects, written as a whole directory; returns it opened.

    Raises ``KeyDirectoryError`` if the directory exists (unless ``force``)."""
    _native.keygen(os.fspath(directory), preset, force)
    return KeyDirectory(directory)


class KeyDirectory:
    """A key directory written by ``zeppelin keygen`` (and ``zeppelin keys`` for relin.seal and
    galois.seal), read once with every check the CLI makes: ``params.seal`` must be the
    preset's, the device keys must be well-formed, ``secret.seal`` and ``device.sk`` must hold
    the same key, the public key must belong to the secret key.

    A directory without ``device.sk`` (a server's copy) can convert and evaluate but not
    encrypt symmetrically or decrypt.
    """

    def __init__(self, directory: str | os.PathLike[str]):
        self._native = _native.KeyDirectory(os.fspath(directory))
        self.parameters = Parameters.preset(self._native.preset)

    def __repr__(self) -> str:
        return f"KeyDirectory({str(self.path)!r}, preset={self.preset!r})"

    @property
    def path(self) -> str:
        """The directory."""
        return str(self._native.path)

    @property
    def preset(self) -> str:
        """The preset named in ``D/preset``."""
        return self._native.preset

    @property
    def has_secret_key(self) -> bool:
        """Whether ``D/device.sk`` was found (and loaded)."""
        return self._native.has_secret_key

    @property
    def has_public_key(self) -> bool:
        """Whether a public key (``public.seal`` or ``device.pk``) was found (and loaded)."""
        return self._native.has_public_key

    def encrypt(self, slots: npt.ArrayLike, mode: str = "seeded", level: int | None = None) -> bytes:
        """Encodes up to ``n`` slot values below ``t`` (missing slots are 0) and encrypts them
        as the device does; returns the device's wire form.

        ``mode``: ``"seeded"`` (symmetric, ``c1`` as a 32-byte seed: about half the size),
        ``"symmetric"`` or ``"public"``. ``level``: number of data primes (default: all)."""
        return self._native.encrypt(_u32_bytes(slots, "slots"), mode, level)

    def decrypt(self, ciphertext: bytes) -> npt.NDArray[np.uint32]:
        """The ``n`` slots of a device ciphertext (either wire form) or of any SEAL
        ``Ciphertext`` of the preset (any level or compression, SEAL's seeded forms too), by
        the device's decryption."""
        return _u32_array(self._native.decrypt(bytes(ciphertext)))

    def to_seal(self, ciphertext: bytes, compression: str = "none") -> bytes:
        """A device ciphertext as SEAL ``Ciphertext`` bytes at SEAL's first data level
        (``zeppelin adapt``): the seed expanded, extra device primes switched away.
        ``compression``: ``"none"`` (what seal-python 4.4.0 loads), ``"zlib"`` or ``"zstd"``."""
        return self._native.to_seal(bytes(ciphertext), compression)

    def to_device(self, ciphertext: bytes) -> bytes:
        """A SEAL ``Ciphertext`` at a level the device shares (or a device form) as the
        device's full wire form."""
        return self._native.to_device(bytes(ciphertext))

    def inspect(self, ciphertext: bytes) -> tuple[str, int]:
        """``(form, level)`` of ciphertext bytes: form ``"device-seeded"``, ``"device-full"``
        or ``"seal"``, level the number of primes."""
        return self._native.inspect(bytes(ciphertext))

    def evaluator(self) -> Evaluator:
        """The evaluator of the preset with the directory's ``relin.seal`` and
        ``galois.seal`` (each when present)."""
        return Evaluator._wrap(self._native.evaluator())


class Evaluator:
    """The Rust evaluator on SEAL ``Ciphertext`` bytes: each operation gives the ciphertext
    SEAL 4.1's ``Evaluator`` gives for the same inputs and keys, byte for byte.

    ``Evaluator(preset, relin_keys=..., galois_keys=...)`` takes SEAL ``RelinKeys`` /
    ``GaloisKeys`` bytes; :meth:`KeyDirectory.evaluator` reads them from a key directory.
    Results are uncompressed unless ``compression`` says otherwise."""

    def __init__(self, preset: str, relin_keys: bytes | None = None, galois_keys: bytes | None = None):
        self._native = _native.Evaluator(preset, relin_keys, galois_keys)

    @classmethod
    def _wrap(cls, native: _native.Evaluator) -> Evaluator:
        self = cls.__new__(cls)
        self._native = native
        return self

    @property
    def preset(self) -> str:
        """The preset."""
        return self._native.preset

    @property
    def has_relin_keys(self) -> bool:
        """Whether :meth:`relinearize` has keys."""
        return self._native.has_relin_keys

    @property
    def has_galois_keys(self) -> bool:
        """Whether the rotations have keys."""
        return self._native.has_galois_keys

    def add(self, a: bytes, b: bytes, compression: str = "none") -> bytes:
        """``a + b``."""
        return self._native.add(bytes(a), bytes(b), compression)

    def sub(self, a: bytes, b: bytes, compression: str = "none") -> bytes:
        """``a - b``."""
        return self._native.sub(bytes(a), bytes(b), compression)

    def negate(self, a: bytes, compression: str = "none") -> bytes:
        """``-a``."""
        return self._native.negate(bytes(a), compression)

    def multiply(self, a: bytes, b: bytes, compression: str = "none") -> bytes:
        """``a * b`` (SEAL's BEHZ multiplication; a size-3 result until :meth:`relinearize`)."""
        return self._native.multiply(bytes(a), bytes(b), compression)

    def square(self, a: bytes, compression: str = "none") -> bytes:
        """``a * a``."""
        return self._native.square(bytes(a), compression)

    def relinearize(self, a: bytes, compression: str = "none") -> bytes:
        """A size-3 ciphertext back to size 2 with the RelinKeys."""
        return self._native.relinearize(bytes(a), compression)

    def rotate_rows(self, a: bytes, steps: int, compression: str = "none") -> bytes:
        """Both rows rotated left by ``steps`` slots (negative: right), with the GaloisKeys."""
        return self._native.rotate_rows(bytes(a), steps, compression)

    def rotate_columns(self, a: bytes, compression: str = "none") -> bytes:
        """The two rows swapped, with the GaloisKeys."""
        return self._native.rotate_columns(bytes(a), compression)

    def mod_switch_to_next(self, a: bytes, compression: str = "none") -> bytes:
        """The last prime of ``a``'s level dropped."""
        return self._native.mod_switch_to_next(bytes(a), compression)

    def add_plain(self, a: bytes, slots: npt.ArrayLike, compression: str = "none") -> bytes:
        """``a + encode(slots)`` (slots below ``t``, missing ones 0)."""
        return self._native.add_plain(bytes(a), _u32_bytes(slots, "slots"), compression)

    def sub_plain(self, a: bytes, slots: npt.ArrayLike, compression: str = "none") -> bytes:
        """``a - encode(slots)``."""
        return self._native.sub_plain(bytes(a), _u32_bytes(slots, "slots"), compression)

    def multiply_plain(self, a: bytes, slots: npt.ArrayLike, compression: str = "none") -> bytes:
        """``a * encode(slots)`` (slot-wise product)."""
        return self._native.multiply_plain(bytes(a), _u32_bytes(slots, "slots"), compression)

    def sum(self, ciphertexts: Iterable[bytes], compression: str = "none") -> bytes:
        """The sum of one or more ciphertexts (SEAL's ``add_many``, as a tree on all cores)."""
        return self._native.sum([bytes(c) for c in ciphertexts], compression)


@dataclass(frozen=True)
class Receipt:
    """A stored upload: its ``id`` in the stream, and whether its idempotency key had been
    stored already (``replayed``: nothing new was stored)."""

    id: str
    replayed: bool


class ServiceClient:
    """A client of ``zeppelin serve`` at ``url`` (``http://host:port``; docs/server.md).

    ``token`` is the caller's credential from ``zeppelin devices`` (sent as
    ``Authorization: Bearer``): a device token uploads to the device's streams; the owner
    token (``DIR/owner.token``) reads, aggregates and puts keys. Errors (connection, an error
    status with the server's message, e.g. 401/403, an answer outside the contract) raise
    ``ServiceError``."""

    def __init__(self, url: str, token: str | None = None):
        self._native = _native.ServiceClient(url, token)

    @property
    def url(self) -> str:
        """The base URL."""
        return self._native.url

    def health(self) -> str:
        """``GET /v1/health``: the server's preset."""
        return self._native.health()

    def upload(self, stream: str, ciphertext: bytes, idempotency_key: str | None = None) -> Receipt:
        """``POST /v1/streams/{stream}/ciphertexts``: stores a device ciphertext (wire form)."""
        upload_id, replayed = self._native.upload(stream, bytes(ciphertext), idempotency_key)
        return Receipt(upload_id, replayed)

    def count(self, stream: str) -> int:
        """``GET /v1/streams/{stream}``: the number of uploads the stream holds."""
        return self._native.status(stream)[0]

    def aggregate(
        self,
        stream: str,
        op: str = "sum",
        weights: Sequence[int] | None = None,
        first_n: int | None = None,
    ) -> tuple[bytes, int]:
        """``POST /v1/streams/{stream}/aggregate`` (owner): ``(SEAL Ciphertext bytes, uploads
        covered)``.

        ``op``: ``"sum"``, ``"sum_of_squares"`` (needs the server's RelinKeys) or ``"dot"``
        with one integer weight per upload, in id order. ``first_n``: aggregate only the
        stream's first ``first_n`` uploads in id order (the server answers 400 when it holds
        fewer), so a ``dot`` can be pinned while devices are still uploading; ``None``: all."""
        if first_n is not None and (isinstance(first_n, bool) or int(first_n) != first_n or first_n < 1):
            raise InputError(f"first_n must be a positive integer, got {first_n!r}")
        return self._native.aggregate(
            stream,
            op,
            None if weights is None else [int(w) for w in weights],
            None if first_n is None else int(first_n),
        )

    def delete_upload(self, stream: str, upload_id: str) -> int:
        """``DELETE /v1/streams/{stream}/ciphertexts/{id}`` (owner): removes one upload
        (e.g. one a device sent by mistake); the number removed (1)."""
        return self._native.delete_upload(stream, upload_id)

    def delete_device_uploads(self, stream: str, device: str) -> int:
        """``DELETE /v1/streams/{stream}/devices/{device}`` (owner): removes every upload the
        device sent to the stream (e.g. after revoking a compromised device); how many."""
        return self._native.delete_device_uploads(stream, device)

    def put_relin_keys(self, keys: bytes) -> None:
        """``PUT /v1/keys/relin``: replaces the server's SEAL ``RelinKeys``."""
        self._native.put_relin_keys(bytes(keys))

    def put_galois_keys(self, keys: bytes) -> None:
        """``PUT /v1/keys/galois``: replaces the server's SEAL ``GaloisKeys``."""
        self._native.put_galois_keys(bytes(keys))


@dataclass(frozen=True)
class EvalmultResult:
    """One session's relinearized products, ``relin[k, c]`` component ``c`` of pair ``k``
    (shape ``(batch, 2, towers, ring_dim)``), and its wall time in seconds (profile, pair
    frames, results)."""

    relin: npt.NDArray[np.uint32]
    seconds: float


class EvalmultClient:
    """A connection to ``zeppelin evalmult serve`` at ``address`` (``"host:port"``), the role
    of the FPGA's host driver. ``timeout``: seconds each read or write may wait (default:
    forever). Sessions on one client run one at a time. Inputs refused before sending and
    the server's error frames leave the connection usable; after a connection error or a
    timeout, whose session may be half sent, connect a new client."""

    def __init__(self, address: str, timeout: float | None = None):
        self._native = _native.EvalmultClient(address, timeout)

    def eval_mult(
        self,
        moduli: Sequence[int],
        evk_a: npt.ArrayLike,
        evk_b: npt.ArrayLike,
        x: npt.ArrayLike,
        y: npt.ArrayLike,
    ) -> EvalmultResult:
        """One session: streams the profile (``moduli``, the towers), one frame per tower pair
        of the batch ``x[k] * y[k]``, and returns the relinearized products.

        ``evk_a``, ``evk_b``: the BV relinearization key, shape ``(towers, towers, ring_dim)``
        (one RNS polynomial per digit); ``x``, ``y``: shape ``(batch, 2, towers, ring_dim)``,
        OpenFHE's EVALUATION format. Every residue is checked below its modulus before
        anything is sent (``EvalmultError``); the server's error frames raise it too."""
        x_arr = np.asarray(x)
        if x_arr.ndim != 4 or x_arr.shape[1] != 2:
            raise InputError(f"x: expected shape (batch, 2, towers, ring_dim), got {x_arr.shape}")
        if np.shape(y) != x_arr.shape:
            raise InputError(f"y: shape {np.shape(y)} differs from x's {x_arr.shape}")
        towers, ring_dim = x_arr.shape[2], x_arr.shape[3]
        if len(moduli) != towers:
            raise InputError(f"{len(moduli)} moduli for {towers} towers")
        for name, key in (("evk_a", evk_a), ("evk_b", evk_b)):
            if np.shape(key) != (towers, towers, ring_dim):
                raise InputError(f"{name}: expected shape {(towers, towers, ring_dim)}, got {np.shape(key)}")
        data, seconds = self._native.eval_mult(
            ring_dim,
            [int(q) for q in moduli],
            _u32_bytes(evk_a, "evk_a"),
            _u32_bytes(evk_b, "evk_b"),
            _u32_bytes(x_arr, "x"),
            _u32_bytes(y, "y"),
        )
        return EvalmultResult(_u32_array(data, x_arr.shape), seconds)
