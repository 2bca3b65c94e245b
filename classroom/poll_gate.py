"""The teacher's gate of the class poll's store (classroom/poll_store.py): the wrong keys counted per client address in
the store, with a back-off, and the signed, expiring token that keeps a teacher's browser in teacher mode across a
reload without holding the key. A mix-in of PollStore (its transactions, its SQL placeholders and the key)."""
from __future__ import annotations

import hashlib
import hmac
import secrets
import time

KEY_FREE = 5           # wrong teacher keys one client address may type before it must wait
KEY_WAIT = 30.0        # then it waits this long before its next try, doubled at every further wrong key ...
KEY_WAIT_MAX = 3600.0  # ... up to an hour
TOKEN_TTL = 12 * 3600  # a teacher's reload-surviving token lasts a teaching day


def key_wait(failures: int) -> float:
    """Seconds an address with this many wrong keys in a row waits before its next try."""
    return 0.0 if failures < KEY_FREE else min(KEY_WAIT_MAX, KEY_WAIT * 2 ** (failures - KEY_FREE))


class TeacherGate:
    _key: str
    postgres: bool

    def try_key(self, key, address: str, now: float | None = None) -> tuple[bool, float]:
        """A typed teacher key from a client address: (right, seconds to wait before the next try). The wrong keys
        are counted per address in the store (a reload, a new tab or another process does not reset them): after
        KEY_FREE of them the address waits KEY_WAIT s, doubled at every further wrong key (up to KEY_WAIT_MAX);
        a key typed while it must wait is not even compared. The right key clears the count."""
        now = time.time() if now is None else now
        address = str(address or "unknown")[:200]
        lock = " FOR UPDATE" if self.postgres else ""
        with self._tx() as cur:
            cur.execute(self._sql(f"SELECT failures, last_at FROM key_tries WHERE address = {{p}}{lock}"), (address,))
            row = cur.fetchone()
            failures, last = (int(row[0]), float(row[1])) if row else (0, 0.0)
            left = last + key_wait(failures) - now
            if left > 0:
                return False, left
            if self.is_teacher(key):
                cur.execute(self._sql("DELETE FROM key_tries WHERE address = {p}"), (address,))
                return True, 0.0
            cur.execute(self._sql("INSERT INTO key_tries (address, failures, last_at) VALUES ({p}, 1, {p}) "
                                  "ON CONFLICT (address) DO UPDATE SET failures = key_tries.failures + 1, "
                                  "last_at = excluded.last_at RETURNING failures"), (address, now))
            return False, key_wait(int(cur.fetchone()[0]))

    def _token_mac(self, body: str) -> str:
        secret = hmac.new(self._key.encode("utf-8"), b"operator-lab teacher token v1", hashlib.sha256).digest()
        return hmac.new(secret, body.encode("utf-8", "replace"), hashlib.sha256).hexdigest()

    def teacher_token(self, key, now: float | None = None) -> str:
        """A token that proves, until it expires (TOKEN_TTL), that its holder typed the teacher key: "expiry.nonce.mac",
        the mac an HMAC-SHA256 under a secret derived from the key. The key cannot be read back from it; a new key
        makes every old token worthless."""
        self._require_teacher(key)
        body = f"{int((time.time() if now is None else now) + TOKEN_TTL)}.{secrets.token_hex(8)}"
        return f"{body}.{self._token_mac(body)}"

    def is_teacher_token(self, token, now: float | None = None) -> bool:
        if not self._key or not isinstance(token, str) or token.count(".") != 2 or len(token) > 200:
            return False
        expiry, nonce, mac = token.split(".")
        if not hmac.compare_digest(mac.encode("utf-8", "replace"), self._token_mac(f"{expiry}.{nonce}").encode()):
            return False
        return expiry.isdigit() and int(expiry) > (time.time() if now is None else now)
