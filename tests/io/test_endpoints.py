"""The key scrubber: which encodings of an echoed key are masked, and where masking stops."""

from __future__ import annotations

from evals.io.endpoints import scrubber

KEY = "sk-test-0123456789abcdefXYZ"


def test_the_whole_key_in_hex_is_masked_in_either_case():
    """A server echoing the key's bytes as hex digits, lower or upper case, gets them masked."""
    scrub = scrubber(KEY)
    lower, upper = KEY.encode().hex(), KEY.encode().hex().upper()
    assert scrub(f"id={lower};") == "id=***;"
    assert scrub(f"token {upper} echoed") == "token *** echoed"


def test_hex_of_part_of_the_key_is_not_masked():
    """Masking stops at the whole key: hex of a few of its bytes is left as it is (no key can be read from it)."""
    part = KEY[:6].encode().hex()
    assert scrubber(KEY)(f"prefix {part}") == f"prefix {part}"
