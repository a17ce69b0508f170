"""sift: an LSM-tree key-value store, with plyvel's API.

Code written for plyvel ports by changing the import::

    import sift as plyvel
    db = plyvel.DB("/tmp/db", create_if_missing=True)
    db.put(b"key", b"value")

See doc/python.md in the repository for where sift differs from plyvel.
"""

from . import _sift
from ._sift import (
    CorruptionError,
    Error,
    IOError,
    Iterator,
    IteratorInvalidError,
    PrefixExtractor,
    RawIterator,
    Snapshot,
    TableWriter,
    WriteBatch,
    delimited_prefix,
    destroy_db,
    entries_checksum,
    fixed_prefix,
    repair_db,
    write_table,
    write_table_packed,
)

__all__ = [
    "DB",
    "PrefixedDB",
    "Snapshot",
    "WriteBatch",
    "Iterator",
    "RawIterator",
    "TableWriter",
    "Error",
    "IOError",
    "CorruptionError",
    "IteratorInvalidError",
    "PrefixExtractor",
    "fixed_prefix",
    "delimited_prefix",
    "destroy_db",
    "repair_db",
    "write_table",
    "write_table_packed",
    "entries_checksum",
]

__version__ = "0.1.0"

for _cls in (Error, IOError, CorruptionError, IteratorInvalidError):
    _cls.__module__ = "sift"


def _check_prefix(prefix):
    if not isinstance(prefix, bytes):
        raise TypeError(f"prefix must be bytes, not {type(prefix).__name__}")
    return prefix


class DB(_sift.DB):
    """A sift database: DB(name, create_if_missing=False, ...) opens it.

    The keywords are plyvel's (comparator excepted) plus sift's own:
    filter_kind ('blocked_bloom', 'standard_bloom', 'binary_fuse'),
    filter_allocation ('optimal', 'uniform'), allow_mmap_reads,
    use_direct_reads, filter_memory_limit (bytes of filters kept in
    memory, 0 = no limit), and the scan filters: prefix_extractor
    (sift.fixed_prefix(n) or sift.delimited_prefix(b':'); an iterator whose
    start and stop, or prefix, lie within one prefix then skips the tables
    that hold none of it), whole_key_filtering (False: prefixes only) and
    range_filter_bits_per_key (0, or 2 to 64: bounded iterators skip the
    tables holding no key between start and stop). Keywords left at None
    keep the engine's defaults.
    """

    def prefixed_db(self, prefix):
        """A view of the keys starting with `prefix`, with the prefix removed."""
        if self.closed:
            raise RuntimeError("Database is closed")
        return PrefixedDB(self, _check_prefix(prefix))

    def __repr__(self):
        closed = " (closed)" if self.closed else ""
        return f"<sift.DB with name {self.name!r}{closed} at {hex(id(self))}>"


class PrefixedDB:
    """A DB-like view that puts `prefix` before every key it is given and
    strips it from every key it returns. Made by DB.prefixed_db()."""

    __slots__ = ("_db", "_prefix")

    def __init__(self, db, prefix):
        self._db = db
        self._prefix = _check_prefix(prefix)

    @property
    def db(self):
        """The underlying DB."""
        return self._db

    @property
    def prefix(self):
        """The prefix of this view's keys."""
        return self._prefix

    def __repr__(self):
        return f"<sift.PrefixedDB with prefix {self._prefix!r} at {hex(id(self))}>"

    def _key(self, key):
        if not isinstance(key, bytes):
            raise TypeError(f"key must be bytes, not {type(key).__name__}")
        return self._prefix + key

    def get(self, key, default=None, *, verify_checksums=False, fill_cache=True):
        return self._db.get(
            self._key(key),
            default,
            verify_checksums=verify_checksums,
            fill_cache=fill_cache,
        )

    def multi_get(self, keys, *, verify_checksums=False, fill_cache=True):
        return _sift._prefixed_multi_get(
            self._db,
            self._prefix,
            keys,
            verify_checksums=verify_checksums,
            fill_cache=fill_cache,
        )

    def put(self, key, value, *, sync=False):
        self._db.put(self._key(key), value, sync=sync)

    def delete(self, key, *, sync=False):
        self._db.delete(self._key(key), sync=sync)

    def __contains__(self, key):
        return self._key(key) in self._db

    def write_batch(self, *, transaction=False, sync=False):
        return _sift._prefixed_write_batch(
            self._db, self._prefix, transaction=transaction, sync=sync
        )

    def iterator(self, **kwargs):
        """As DB.iterator(), over this view's keys (returned without the prefix)."""
        return _sift._prefixed_iterator(self._db, self._prefix, **kwargs)

    def __iter__(self):
        return self.iterator()

    def snapshot(self):
        return _sift._prefixed_snapshot(self._db, self._prefix)

    def prefixed_db(self, prefix):
        return PrefixedDB(self._db, self._prefix + _check_prefix(prefix))
