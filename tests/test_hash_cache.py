"""The checkpoint checksum cache: hashlib's digest, re-hashed when the file changes, never trusting a bad cache."""
from __future__ import annotations

import hashlib
import json
import os
import warnings

import pytest

from crepe_utils import digests as S


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """Cache every file (no size threshold) under a temporary CREPE_CACHE; count full hashes."""
    monkeypatch.setenv("CREPE_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(S, "HASH_CACHE_MIN_BYTES", 0)
    calls = []
    real = S._sha256_uncached
    monkeypatch.setattr(S, "_sha256_uncached", lambda p, c: calls.append(str(p)) or real(p, c))
    return tmp_path / "cache" / "sha256.json", calls


def _file(path, data: bytes):
    path.write_bytes(data)
    return path


def test_digest_is_hashlibs_and_is_remembered(tmp_path, cache):
    file, calls = cache
    f = _file(tmp_path / "w.pt", os.urandom(3 << 20) + b"tail")          # several read chunks
    expected = hashlib.sha256(f.read_bytes()).hexdigest()
    assert S.sha256_file(f) == expected and len(calls) == 1
    assert S.sha256_file(f) == expected and len(calls) == 1                 # second call: from the cache
    entry = json.loads(file.read_text())["files"][str(f.resolve())]
    assert entry["sha256"] == expected and entry["size"] == f.stat().st_size
    # the key is the resolved path: a relative spelling of the same file hits the same entry
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        assert S.sha256_file("w.pt") == expected and len(calls) == 1
    finally:
        os.chdir(old)


def test_changed_size_or_mtime_is_hashed_again(tmp_path, cache):
    _, calls = cache
    f = _file(tmp_path / "w.pt", b"a" * 1000)
    S.sha256_file(f)
    st = f.stat()
    # same size, other bytes, the old mtime put back: ctime/inode still differ, so re-hashed
    _file(f, b"b" * 1000)
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert S.sha256_file(f) == hashlib.sha256(b"b" * 1000).hexdigest() and len(calls) == 2
    # other size
    _file(f, b"b" * 1001)
    assert S.sha256_file(f) == hashlib.sha256(b"b" * 1001).hexdigest() and len(calls) == 3
    # only the mtime moves (bytes as before): hashed again all the same
    st = f.stat()
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))
    S.sha256_file(f)
    assert len(calls) == 4


def test_a_forged_entry_is_used_only_while_the_stamp_matches(tmp_path, cache):
    """Proves the cache is consulted (a hit returns what it holds) and that any stamp change bypasses it."""
    file, calls = cache
    f = _file(tmp_path / "w.pt", b"x" * 100)
    S.sha256_file(f)
    data = json.loads(file.read_text())
    data["files"][str(f.resolve())]["sha256"] = "0" * 64
    file.write_text(json.dumps(data))
    assert S.sha256_file(f) == "0" * 64
    st = f.stat()
    os.utime(f, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    assert S.sha256_file(f) == hashlib.sha256(b"x" * 100).hexdigest()


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"version": 1, "files": []}',
                                     '{"version": 1, "files": {"/x": {"sha256": "zz", "size": 1}}}', "\x00\xff"])
def test_corrupt_cache_is_ignored_with_a_warning_and_rewritten(tmp_path, cache, content):
    file, calls = cache
    f = _file(tmp_path / "w.pt", b"payload")
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(content, encoding="latin-1")
    with pytest.warns(S.HashCacheWarning, match="sha256.json"):
        assert S.sha256_file(f) == hashlib.sha256(b"payload").hexdigest()
    rewritten = json.loads(file.read_text())
    assert rewritten["version"] == 1 and list(rewritten["files"]) == [str(f.resolve())]


def test_corrupt_entry_with_matching_stamp_is_not_trusted(tmp_path, cache):
    file, _ = cache
    f = _file(tmp_path / "w.pt", b"payload")
    S.sha256_file(f)
    data = json.loads(file.read_text())
    data["files"][str(f.resolve())]["sha256"] = "not-a-digest"
    file.write_text(json.dumps(data))
    with pytest.warns(S.HashCacheWarning, match="malformed"):
        assert S.sha256_file(f) == hashlib.sha256(b"payload").hexdigest()


def test_unwritable_cache_still_gives_the_digest(tmp_path, monkeypatch):
    blocker = _file(tmp_path / "not-a-folder", b"")
    monkeypatch.setenv("CREPE_CACHE", str(blocker))                        # a file where the folder should be
    monkeypatch.setattr(S, "HASH_CACHE_MIN_BYTES", 0)
    f = _file(tmp_path / "w.pt", b"payload")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", S.HashCacheWarning)
        assert S.sha256_file(f) == hashlib.sha256(b"payload").hexdigest()


def test_small_files_are_not_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("CREPE_CACHE", str(tmp_path / "cache"))
    f = _file(tmp_path / "small.csv", b"a,b\n")
    assert S.sha256_file(f) == hashlib.sha256(b"a,b\n").hexdigest()
    assert not (tmp_path / "cache").exists()


def test_deleted_files_are_forgotten(tmp_path, cache):
    file, _ = cache
    a, b = _file(tmp_path / "a.pt", b"a"), _file(tmp_path / "b.pt", b"b")
    S.sha256_file(a)
    a.unlink()
    S.sha256_file(b)
    assert list(json.loads(file.read_text())["files"]) == [str(b.resolve())]
