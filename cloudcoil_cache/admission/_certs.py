"""Self-signed serving certificates: a CA and a leaf, renewed in place, the CA rotated through an overlap."""

from __future__ import annotations

import secrets
import threading
import time

import attrs

from cloudcoil_cache._clock import Clock, ClockLike, as_clock
from cloudcoil_cache.admission._pki import Issuer, KeyPair, choose_issuer
from cloudcoil_cache.errors import ConfigError

__all__ = ["SelfSignedCertificates", "Refresh"]

_DAY = 86400.0


@attrs.frozen
class Refresh:
    """What one ``refresh()`` changed: the serving leaf (new handshakes), the CA bundle (registrations)."""

    leaf: bool = False
    bundle: bool = False


@attrs.frozen
class _Issued:
    pair: KeyPair
    at: float  # on the clock
    expires: float  # Unix time


class SelfSignedCertificates:
    """An ECDSA P-256 CA and a serving leaf for ``hostnames``, made on first use and renewed by ``refresh()``.

    The leaf is renewed under the same CA once ``renew_at`` of ``cert_days`` has passed (the bundle does
    not change). Once ``renew_at`` of ``ca_days`` has passed a new CA is made and the bundle becomes
    old+new; ``ca_overlap`` seconds later the leaf is signed by the new CA; ``ca_overlap`` seconds after
    that the old CA leaves the bundle. Time is read from ``clock`` (monotonic seconds; injectable).
    Certificates are made with ``cryptography`` (extra ``webhooks``) or else the ``openssl`` command.
    """

    def __init__(
        self,
        hostnames: tuple[str, ...] | list[str] = ("127.0.0.1", "localhost"),
        *,
        ca_days: float = 365,
        cert_days: float = 7,
        renew_at: float = 2 / 3,
        ca_overlap: float = 60.0,
        clock: ClockLike | None = None,
        issuer: str | None = None,
    ) -> None:
        names = tuple(hostnames) if not isinstance(hostnames, str) else (hostnames,)
        if not names or not all(isinstance(n, str) and n and n.strip() == n for n in names):
            raise ConfigError(f"SelfSignedCertificates(hostnames=...) needs non-empty host names, got {hostnames!r}")
        for label, value in (("ca_days", ca_days), ("cert_days", cert_days), ("ca_overlap", ca_overlap)):
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ConfigError(f"SelfSignedCertificates({label}=...) must be a non-negative number, got {value!r}")
        if not cert_days or not ca_days or cert_days > ca_days:
            raise ConfigError(f"SelfSignedCertificates: need 0 < cert_days <= ca_days, got {cert_days!r}, {ca_days!r}")
        if isinstance(renew_at, bool) or not isinstance(renew_at, (int, float)) or not 0 < renew_at < 1:
            raise ConfigError(f"SelfSignedCertificates(renew_at=...) must be a fraction in (0, 1), got {renew_at!r}")
        self.hostnames: tuple[str, ...] = names
        self.ca_days = float(ca_days)
        self.cert_days = float(cert_days)
        self.renew_at = float(renew_at)
        self.ca_overlap = float(ca_overlap)
        self._clock: Clock = as_clock(clock)
        self._issuer_choice = issuer
        self._issuer: Issuer | None = None
        self._lock = threading.Lock()
        self._renewing = threading.Lock()
        self._ca: _Issued | None = None  # trusted and (until a rotation's leaf switch) signing
        self._next_ca: _Issued | None = None  # during a CA rotation
        self._leaf: _Issued | None = None
        self._leaf_ca: _Issued | None = None  # which CA signed the leaf
        self._phase_at = 0.0  # when the current rotation step happened

    def __repr__(self) -> str:
        names, days = self.hostnames, (self.ca_days, self.cert_days)
        return f"SelfSignedCertificates(hostnames={names!r}, ca_days={days[0]:g}, cert_days={days[1]:g})"

    @property
    def issuer(self) -> str:
        """``"cryptography"`` or ``"openssl"``: what makes the certificates."""
        with self._renewing:
            return self._issuer_renewing().name

    # Renewal runs under ``_renewing`` (one renewal at a time; it may run the openssl command);
    # ``_lock`` guards the state for readers and is never held while keys are made.
    def _issuer_renewing(self) -> Issuer:
        if self._issuer is None:
            self._issuer = choose_issuer(self._issuer_choice)
        return self._issuer

    def _make_ca_renewing(self, now: float) -> _Issued:
        pair = self._issuer_renewing().new_ca(f"cloudcoil-cache-webhook-ca-{secrets.token_hex(6)}", self.ca_days)
        return _Issued(pair, now, time.time() + self.ca_days * _DAY)

    def _make_leaf_renewing(self, ca: _Issued, now: float) -> None:
        pair = self._issuer_renewing().new_leaf(ca.pair, self.hostnames, self.cert_days)
        leaf = _Issued(pair, now, time.time() + self.cert_days * _DAY)
        with self._lock:
            self._leaf, self._leaf_ca = leaf, ca

    def _first_issue_renewing(self) -> bool:
        with self._lock:
            if self._ca is not None:
                return False
        now = self._clock.now()
        ca = self._make_ca_renewing(now)
        self._make_leaf_renewing(ca, now)
        with self._lock:
            self._ca = ca
        return True

    def _issued(self) -> tuple[_Issued, _Issued | None, _Issued]:
        """(trusted CA, next CA, leaf), made on first use."""
        with self._lock:
            if self._ca is not None and self._leaf is not None:
                return self._ca, self._next_ca, self._leaf
        with self._renewing:
            self._first_issue_renewing()
        with self._lock:
            assert self._ca is not None and self._leaf is not None
            return self._ca, self._next_ca, self._leaf

    def serving(self) -> KeyPair:
        """The leaf to serve (made on first use)."""
        return self._issued()[2].pair

    @property
    def ca_bundle(self) -> bytes:
        """PEM of every CA clients must trust now (old+new during a rotation)."""
        ca, next_ca, _ = self._issued()
        return ca.pair.cert + (next_ca.pair.cert if next_ca is not None else b"")

    def expiry(self) -> float:
        """When the serving leaf expires (Unix time)."""
        return self._issued()[2].expires

    def refresh(self) -> Refresh:
        """Take the next renewal step that is due (at most one); what changed."""
        with self._renewing:
            if self._first_issue_renewing():
                return Refresh(leaf=True, bundle=True)
            ca, next_ca, leaf = self._issued()
            now = self._clock.now()
            if next_ca is not None:
                return self._rotate_renewing(next_ca, now)
            if now >= ca.at + self.renew_at * self.ca_days * _DAY:
                made = self._make_ca_renewing(now)
                with self._lock:
                    self._next_ca, self._phase_at = made, now
                return Refresh(bundle=True)
            if now >= leaf.at + self.renew_at * self.cert_days * _DAY:
                self._make_leaf_renewing(ca, now)
                return Refresh(leaf=True)
            return Refresh()

    def _rotate_renewing(self, next_ca: _Issued, now: float) -> Refresh:
        with self._lock:
            if now < self._phase_at + self.ca_overlap:
                return Refresh()
            self._phase_at = now
            switched = self._leaf_ca is next_ca
        if not switched:
            self._make_leaf_renewing(next_ca, now)
            return Refresh(leaf=True)
        with self._lock:
            self._ca, self._next_ca = next_ca, None
        return Refresh(bundle=True)
