"""sift.write_table (a whole partition in one call) and sift.entries_checksum."""
import os
import random

import pytest

import sift


def test_write_table_sorts_and_keeps_the_last_entry_of_a_key(tmp_path, db):
    rng = random.Random(7)
    keys = [b"k%04d" % rng.randrange(500) for _ in range(3000)]
    values = [b"v%05d" % i for i in range(len(keys))]
    want = {}
    for k, v in zip(keys, values):
        want[k] = v  # as repeated puts leave it
    path = str(tmp_path / "t.sst")
    info = sift.write_table(path, keys, values, block_size=512, compression=None)
    assert info["path"] == path
    assert info["num_entries"] == len(want)
    assert info["duplicates"] == len(keys) - len(want)
    assert info["smallest_key"] == min(want) and info["largest_key"] == max(want)
    assert info["file_size"] == os.path.getsize(path)
    items = sorted(want.items())
    assert info["checksum"] == sift.entries_checksum([k for k, _ in items], [v for _, v in items])
    db.ingest([path])
    assert list(db) == items


def test_write_table_arguments(tmp_path):
    path = str(tmp_path / "t.sst")
    assert sift.write_table(path, [], []) is None
    assert not os.path.exists(path)
    with pytest.raises(TypeError, match="key at position 1 must be bytes, not str"):
        sift.write_table(path, [b"a", "b"], [b"1", b"2"])
    with pytest.raises(TypeError, match="value at position 0"):
        sift.write_table(path, [b"a"], ["1"])
    with pytest.raises(ValueError, match="differ in length"):
        sift.write_table(path, [b"a", b"b"], [b"1"])
    with pytest.raises(TypeError):
        sift.write_table(path, 5, [b"1"])
    with pytest.raises(ValueError):
        sift.write_table(path, [b"a"], [b"1"], compression="lz4")
    assert not os.path.exists(path)
    with pytest.raises(sift.IOError):
        sift.write_table(str(tmp_path / "missing" / "t.sst"), [b"a"], [b"1"])
    # Values may be any buffer; a tuple and a generator-free sequence both work.
    info = sift.write_table(path, (b"b", b"a"), [bytearray(b"2"), memoryview(b"1")])
    assert info["num_entries"] == 2 and info["smallest_key"] == b"a"


def test_entries_checksum_is_a_sum_over_entries():
    a = sift.entries_checksum([b"a", b"b"], [b"1", b"2"])
    assert a == sift.entries_checksum([b"b", b"a"], [b"2", b"1"])
    assert a == (sift.entries_checksum([b"a"], [b"1"]) + sift.entries_checksum([b"b"], [b"2"])) % (1 << 64)
    assert a != sift.entries_checksum([b"a", b"b"], [b"1", b"3"])
    # The key/value split matters: ("ab", "") is not ("a", "b").
    assert sift.entries_checksum([b"ab"], [b""]) != sift.entries_checksum([b"a"], [b"b"])
    assert sift.entries_checksum([], []) == 0


def test_write_table_packed_matches_write_table(tmp_path):
    np = pytest.importorskip("numpy")
    rng = random.Random(9)
    keys = [b"p%03d" % rng.randrange(200) + b"\0" * rng.randrange(3) for _ in range(1000)]
    values = [bytes(rng.randrange(256) for _ in range(rng.randrange(20))) for _ in keys]
    lengths = lambda xs: np.array([len(x) for x in xs], dtype=np.int64)  # noqa: E731
    packed = sift.write_table_packed(str(tmp_path / "p.sst"), b"".join(keys), lengths(keys),
                                     b"".join(values), lengths(values))
    plain = sift.write_table(str(tmp_path / "q.sst"), keys, values)
    for field in ("smallest_key", "largest_key", "num_entries", "checksum", "duplicates"):
        assert packed[field] == plain[field], field
    assert sift.write_table_packed(str(tmp_path / "e.sst"), b"", np.zeros(0, np.int64), b"",
                                   np.zeros(0, np.int64)) is None
    with pytest.raises(ValueError, match="add up to 3 bytes of 4"):
        sift.write_table_packed(str(tmp_path / "x.sst"), b"abcd", np.array([1, 2]), b"xy",
                                np.array([1, 1]))
    with pytest.raises(ValueError, match="run past"):
        sift.write_table_packed(str(tmp_path / "x.sst"), b"ab", np.array([1, -1]), b"xy",
                                np.array([1, 1]))
    with pytest.raises(ValueError, match="differ in length"):
        sift.write_table_packed(str(tmp_path / "x.sst"), b"ab", np.array([1, 1]), b"x",
                                np.array([1]))
    with pytest.raises(TypeError, match="int64"):
        sift.write_table_packed(str(tmp_path / "x.sst"), b"ab", np.array([1, 1], np.int32),
                                b"xy", np.array([1, 1]))
    with pytest.raises(TypeError, match="bytes-like"):
        sift.write_table_packed(str(tmp_path / "x.sst"), "ab", np.array([1, 1]), b"xy",
                                np.array([1, 1]))
    assert not os.path.exists(tmp_path / "x.sst")


def test_split_packed_pieces_and_merged_write(tmp_path, db):
    import numpy as np
    from sift import _sift

    rng = random.Random(11)
    bounds = [b"k0100", b"k0250", b"k0250\x00", b"k0400"]
    parts, want = [], {}
    for _ in range(3):  # three input partitions, keys repeating within and across them
        keys = [b"k%04d" % rng.randrange(500) for _ in range(2000)] + [b"", b"k", b"k0250"]
        values = [b"v%06d" % rng.randrange(10**6) for _ in keys]
        for k, v in zip(keys, values):
            want[k] = v
        pieces = _sift.split_packed(keys, values, bounds)
        assert [p[0] for p in pieces] == sorted({p[0] for p in pieces})
        for j, kbuf, klen, vbuf, vlen in pieces:
            kl = np.frombuffer(klen, dtype=np.int64)
            vl = np.frombuffer(vlen, dtype=np.int64)
            ks = [kbuf[a - n:a] for a, n in zip(np.cumsum(kl), kl)]
            vs = [vbuf[a - n:a] for a, n in zip(np.cumsum(vl), vl)]
            # The rows of piece j, sorted by key, one key's rows in input order.
            rows = [(k, v) for k, v in zip(keys, values)
                    if (j == 0 or k >= bounds[j - 1]) and (j == len(bounds) or k < bounds[j])]
            assert list(zip(ks, vs)) == sorted(rows, key=lambda r: r[0])
        parts.append(pieces)
    with pytest.raises(ValueError):
        _sift.split_packed([b"a"], [b"b"], [b"y", b"x"])
    with pytest.raises(TypeError):
        _sift.split_packed(["a"], [b"b"], [])
    # The pieces of each output partition, in input order, are runs in key
    # order: the table writer merges them and keeps the last row of a key.
    for j in range(len(bounds) + 1):
        mine = [p for pieces in parts for p in pieces if p[0] == j]
        if not mine:
            continue
        path = str(tmp_path / f"p{j}.sst")
        info = sift.write_table_packed(
            path, b"".join(p[1] for p in mine),
            np.frombuffer(b"".join(p[2] for p in mine), dtype=np.int64),
            b"".join(p[3] for p in mine),
            np.frombuffer(b"".join(p[4] for p in mine), dtype=np.int64))
        db.ingest([path])
    assert list(db) == sorted(want.items())


def test_sample_keys_is_the_bottom_k_by_hash():
    import numpy as np
    from sift import _sift

    rng = random.Random(5)
    keys = [b"s%05d" % rng.randrange(3000) for _ in range(10000)]  # repeated keys
    values = [b"x" * rng.randrange(1, 40) for _ in keys]
    first = {}
    for k, v in zip(keys, values):
        first.setdefault(k, len(k) + len(v))
    for k in (0, 1, 100, 2999, 3000, 50000):
        hashes, sampled, sizes = _sift.sample_keys(keys, values, k)
        h = np.frombuffer(hashes, dtype=np.uint64)
        assert len(h) == len(sampled) == min(k, len(first))
        assert list(h) == sorted(set(h))
        assert len(set(sampled)) == len(sampled)
        assert list(np.frombuffer(sizes, dtype=np.int64)) == [first[s] for s in sampled]
        if k and k < len(first):
            # Every key left out hashes above every key taken.
            full_h, full_keys, _ = _sift.sample_keys(keys, values, len(first))
            full = dict(zip(full_keys, np.frombuffer(full_h, dtype=np.uint64)))
            taken = set(sampled)
            assert max(full[s] for s in taken) < min(v for s, v in full.items() if s not in taken)


def test_write_table_packed_takes_lists_of_buffers(tmp_path, db):
    import numpy as np

    keys = [b"b", b"", b"a", b"c", b"a"]
    values = [b"1", b"2", b"", b"4", b"5"]
    kl = np.array([len(k) for k in keys], dtype=np.int64)
    vl = np.array([len(v) for v in values], dtype=np.int64)
    kparts = [b"b", b"", bytearray(b"a"), np.frombuffer(b"ca", dtype=np.uint8)]
    vparts = (b"12", b"", b"45")
    info = sift.write_table_packed(str(tmp_path / "t.sst"), kparts, kl, vparts, vl)
    assert info["num_entries"] == 4 and info["duplicates"] == 1
    db.ingest([info["path"]])
    assert list(db) == [(b"", b"2"), (b"a", b"5"), (b"b", b"1"), (b"c", b"4")]
    with pytest.raises(ValueError):  # an entry would span two buffers
        sift.write_table_packed(str(tmp_path / "u.sst"), [b"ab", b"c"],
                                np.array([1, 2], dtype=np.int64), [b"xy"],
                                np.array([1, 1], dtype=np.int64))
    assert not os.path.exists(tmp_path / "u.sst")
