"""Issue 41, nothing silently wrong: the findings on secrets, judges' replies, importers, options, `evals serve`,
output guards and the divergences from the published code.

Each test is named after the finding it covers (``item16`` is finding 16). Registry and compare-page findings
(1-4, 11-12) have their tests beside their own code.
"""

from __future__ import annotations

import base64
import html
import json
from pathlib import Path
from urllib.parse import quote

import pytest
from helpers.cli import CORPUS_SMALL, evals
from helpers.runs import evals_run

from evals.io.cache import cache_path_for

# A key holding every character an encoding changes: / + = % " \ &
KEY = 'sk-h41/key+with=every%char"that\\escapes&9z'


def _json_u(key: str) -> str:
    return "".join(f"\\u{ord(c):04x}" for c in key)


ENCODINGS = {
    "percent_upper": lambda k: quote(k, safe=""),
    "percent_lower": lambda k: "".join(f"%{b:02x}" for b in k.encode()),
    "html": lambda k: html.escape(k),
    "html_numeric": lambda k: "".join(f"&#x{ord(c):x};" for c in k),
    "base64": lambda k: base64.b64encode(k.encode()).decode(),
    "base64_shifted": lambda k: base64.b64encode(b"ab" + k.encode()).decode(),
    "base64url": lambda k: base64.urlsafe_b64encode(k.encode()).decode(),
}
# Forms written on the wire as JSON escapes: replaced in the body's text, not in its decoded values.
WIRE_ENCODINGS = {
    "json_u": _json_u,
    "json_slash": lambda k: json.dumps(k)[1:-1].replace("/", "\\/"),
}


def _forms(key: str) -> list[str]:
    """Every form of ``key`` the test looks for (base64 forms by the characters only the key's bits make)."""
    forms = [key, _json_u(key), *(encode(key) for name, encode in ENCODINGS.items() if "base64" not in name)]
    for prefix in (b"", b"a", b"ab"):
        encoded = base64.b64encode(prefix + key.encode()).decode()
        start = -(-8 * len(prefix) // 6)
        core = encoded[start : 8 * (len(prefix) + len(key)) // 6]
        forms += [core, core.replace("+", "-").replace("/", "_")]
    return forms


def _echoing(encoding: str):
    """A ``rewrite`` for the LLM server that puts the key, encoded, in every field a response has."""

    def rewrite(kind: str, text: str, key: str) -> str:
        payload = json.loads(text)
        if kind in ("embedding",):
            return text
        value = ENCODINGS[encoding](key) if encoding in ENCODINGS else key
        payload["id"] = f"chatcmpl-{value}"
        payload["model"] = f"gpt-{value}"
        payload["system_fingerprint"] = f"fp_{value}"
        payload["x_note"] = {value: [value]}
        content = payload["choices"][0]["message"]["content"]
        if kind == "judge":
            verdict = json.loads(content)
            verdict["reason"] = f"{verdict.get('reason', '')} (key {value})"
            content = json.dumps(verdict)
        else:
            content = f"{content} (key {value})"
        payload["choices"][0]["message"]["content"] = content
        out = json.dumps(payload)
        if encoding in WIRE_ENCODINGS:
            out = out.replace(json.dumps(key)[1:-1], WIRE_ENCODINGS[encoding](key))
        return out

    return rewrite


@pytest.mark.parametrize("encoding", [*ENCODINGS, *WIRE_ENCODINGS])
def test_item16_key_echoed_in_any_encoding_in_any_field_is_masked(tmp_path: Path, server, encoding: str):
    """A key holding / + = % " \\ & echoed in each encoding through every field (id, model, fingerprint, an
    extra field, the answer, the judge's reason) reaches no file, cache entry, page or printed line."""
    server.rewrite = _echoing(encoding)
    store = tmp_path / "results.duckdb"
    result = evals_run(
        server, store, CORPUS_SMALL, "--with-answers", "--judge", "--concurrency", "1", "--output", tmp_path / "out.json",
        runner="recency", key=KEY,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    shown = [result.output]
    for args in (["runs", "--store", store], ["leaderboard", "--store", store]):
        listed = evals(*args)
        assert listed.exit_code == 0, listed.output
        shown.append(listed.output)
    assert evals("build-site", "--store", store, "--out", tmp_path / "site").exit_code == 0
    forms = _forms(KEY)
    assert [f for text in shown for f in forms if f in text] == []
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert cache_path_for(store) in files
    assert [(p.name, f) for p in files for f in forms if f.encode() in p.read_bytes()] == []
