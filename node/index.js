'use strict'

const fsp = require('fs/promises')
const {
  AbstractLevel,
  AbstractIterator,
  AbstractKeyIterator,
  AbstractValueIterator,
  AbstractChainedBatch,
  AbstractSnapshot
} = require('abstract-level')
const binding = require('./binding')

const kNative = Symbol('native')
const kLocation = Symbol('location')
const kCache = Symbol('cache')
const kPosition = Symbol('position')
const kRun = Symbol('run')
const kDone = Symbol('done')
const kError = Symbol('error')
const kSignal = Symbol('signal')
const kRead = Symbol('read')
const kPlain = Symbol('plain')

// The options abstract-level passes _get and _getMany for a call without
// options on a database with utf8 keys and values.
const PLAIN_OPTIONS = Object.freeze({ keyEncoding: 'utf8', valueEncoding: 'utf8' })

function allStrings (keys) {
  for (let i = 0; i < keys.length; i++) {
    if (typeof keys[i] !== 'string') return false
  }
  return true
}

// What an aborted read rejects with: abstract-level's code and the name of
// the web platform's abort errors.
class AbortError extends Error {
  constructor (cause) {
    super('Operation has been aborted', { cause })
    this.code = 'LEVEL_ABORTED'
  }

  get name () {
    return 'AbortError'
  }
}

// sift's enumerations, by the names the options accept.
const COMPRESSION = { none: 0, snappy: 1 }
const FILTER_KIND = { standard: 1, blocked: 2, 'binary-fuse': 3 }
const FILTER_ALLOCATION = { uniform: 1, optimal: 2 }

// Open options that map to a numeric sift::Options field, checked here for
// type, and an integer field for what its C++ type can hold (a whole number
// from 0 to the largest given here); sift's Open checks ranges and names
// the field when one is outside.
const INT_MAX = 2 ** 31 - 1
const INTEGER_OPTIONS = {
  writeBufferSize: Number.MAX_SAFE_INTEGER,
  maxFileSize: Number.MAX_SAFE_INTEGER,
  blockSize: Number.MAX_SAFE_INTEGER,
  blockRestartInterval: INT_MAX,
  cacheSize: Number.MAX_SAFE_INTEGER,
  maxOpenFiles: INT_MAX,
  filterMemoryLimit: Number.MAX_SAFE_INTEGER
}
const NUMERIC_OPTIONS = ['filterBitsPerKey', 'rangeFilterBitsPerKey']
const BOOLEAN_OPTIONS = ['paranoidChecks', 'mmapReads', 'directReads', 'wholeKeyFiltering']

// The prefix extractor: prefixLength (the first n bytes) or prefixDelimiter
// (up to and including the first such byte, given as a one-byte string or
// Buffer), not both; the native side gets the length or the byte's code.
function prefixOptions (options, out) {
  const { prefixLength, prefixDelimiter } = options
  if (prefixLength !== undefined && prefixDelimiter !== undefined) {
    throw new TypeError("The 'prefixLength' and 'prefixDelimiter' options exclude each other")
  }
  if (prefixLength !== undefined) {
    if (!Number.isSafeInteger(prefixLength) || prefixLength < 1) {
      throw new TypeError("The 'prefixLength' option must be a positive integer")
    }
    out.prefixLength = prefixLength
  }
  if (prefixDelimiter !== undefined) {
    const bytes = typeof prefixDelimiter === 'string'
      ? Buffer.from(prefixDelimiter, 'utf8')
      : prefixDelimiter
    if (!(bytes instanceof Uint8Array) || bytes.length !== 1) {
      throw new TypeError("The 'prefixDelimiter' option must be one byte (a string or a Buffer)")
    }
    out.prefixDelimiter = bytes[0]
  }
}

function enumOption (options, name, table) {
  const value = options[name]
  if (value === undefined) return undefined
  if (!Object.prototype.hasOwnProperty.call(table, value)) {
    throw new TypeError(
      `The '${name}' option must be one of ${Object.keys(table).map(k => `'${k}'`).join(', ')}`
    )
  }
  return table[value]
}

// The flat options object the native open reads.
function nativeOpenOptions (options) {
  const out = {
    createIfMissing: options.createIfMissing !== false,
    errorIfExists: options.errorIfExists === true
  }
  for (const [name, max] of Object.entries(INTEGER_OPTIONS)) {
    const value = options[name]
    if (value === undefined) continue
    if (!Number.isSafeInteger(value) || value < 0 || value > max) {
      throw new TypeError(`The '${name}' option must be an integer from 0 to ${max}`)
    }
    out[name] = value
  }
  for (const name of NUMERIC_OPTIONS) {
    const value = options[name]
    if (value === undefined) continue
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw new TypeError(`The '${name}' option must be a finite number`)
    }
    out[name] = value
  }
  for (const name of BOOLEAN_OPTIONS) {
    const value = options[name]
    if (value === undefined) continue
    if (typeof value !== 'boolean') {
      throw new TypeError(`The '${name}' option must be a boolean`)
    }
    out[name] = value
  }
  // classic-level's boolean `compression` is accepted too.
  let compression = options.compression
  if (compression === true) compression = 'snappy'
  if (compression === false) compression = 'none'
  out.compression = enumOption({ compression }, 'compression', COMPRESSION)
  out.filterKind = enumOption(options, 'filterKind', FILTER_KIND)
  out.filterAllocation = enumOption(options, 'filterAllocation', FILTER_ALLOCATION)
  prefixOptions(options, out)
  return out
}

function nativeSnapshot (options) {
  return options.snapshot != null ? options.snapshot[kNative] : null
}

// The addon's getMany answers [data, ends]: the values back to back in data
// (one string or one Buffer), ends[i] where the i-th ends in data, -1 for a
// key not found. Cut here: a substring (or a view of the Buffer) per value,
// where making each value natively would cost Node-API calls per key. Data
// as an array (values not all ASCII) holds the values themselves.
function unpackValues (packed) {
  const data = packed[0]
  const ends = packed[1]
  if (ends === null) return data
  const n = ends.length
  const values = new Array(n)
  let start = 0
  if (typeof data === 'string') {
    for (let i = 0; i < n; i++) {
      const end = ends[i]
      if (end < 0) {
        values[i] = undefined
      } else {
        values[i] = data.slice(start, end)
        start = end
      }
    }
  } else {
    for (let i = 0; i < n; i++) {
      const end = ends[i]
      if (end < 0) {
        values[i] = undefined
      } else {
        values[i] = data.subarray(start, end)
        start = end
      }
    }
  }
  return values
}

class SiftLevel extends AbstractLevel {
  constructor (location, options) {
    if (typeof location !== 'string' || location === '') {
      throw new TypeError("The first argument 'location' must be a non-empty string")
    }

    super({
      // Strings go to the addon as they are and come back as strings when
      // asked for utf8; everything else as bytes.
      encodings: { buffer: true, view: true, utf8: true },
      implicitSnapshots: true,
      explicitSnapshots: true,
      has: true,
      permanence: true,
      seek: true,
      createIfMissing: true,
      errorIfExists: true,
      additionalMethods: {
        flush: true,
        compactRange: true,
        getProperty: true
      },
      signals: {
        iterators: true
      }
    }, options)

    this[kLocation] = location
    this[kNative] = new binding.Database(location)
    // With utf8 keys and values (the defaults) a string key is passed on as
    // it is and a value comes back as the string it is: get() and getMany()
    // called without options may skip abstract-level's wrapping.
    const keyEncoding = this.keyEncoding()
    const valueEncoding = this.valueEncoding()
    this[kPlain] = keyEncoding.commonName === 'utf8' && keyEncoding.format === 'utf8' &&
      valueEncoding.commonName === 'utf8' && valueEncoding.format === 'utf8'
  }

  // db.get(key) and db.getMany(keys) without options, on an open database
  // with utf8 encodings and string keys, call _get and _getMany as
  // abstract-level would (the same key, the same options) and return their
  // promise: abstract-level's async wrapper adds a promise and turns of the
  // microtask queue per call, and would only check what is checked here and
  // decode strings to themselves. Every other call goes through it.
  get (key, options) {
    if (options === undefined && typeof key === 'string' && this[kPlain] &&
        this.status === 'open') {
      return this._get(key, PLAIN_OPTIONS)
    }
    return super.get(key, options)
  }

  getMany (keys, options) {
    if (options === undefined && this[kPlain] && this.status === 'open' &&
        Array.isArray(keys) && keys.length > 0 && allStrings(keys)) {
      return this._getMany(keys, PLAIN_OPTIONS)
    }
    return super.getMany(keys, options)
  }

  get location () {
    return this[kLocation]
  }

  // sift's read counters since open (sift/read_stats.h): gets, memtableHits,
  // tablesProbed, filterNegatives, filterPositives, filterFalsePositives,
  // blockCacheHits, blockReads, bytesRead, ..., measuredFpr,
  // readAmplification.
  get readStats () {
    return this[kNative].readStats()
  }

  async _open (options) {
    const native = nativeOpenOptions(options)
    if (native.createIfMissing) {
      await fsp.mkdir(this[kLocation], { recursive: true })
    }
    return this[kNative].open(native)
  }

  async _close () {
    return this[kNative].close()
  }

  // The point operations return the addon's promise as it is (abstract-level
  // awaits it): an async wrapper would add a promise and a turn per call.
  _put (key, value, options) {
    return this[kNative].put(key, value, options.sync === true)
  }

  _del (key, options) {
    return this[kNative].del(key, options.sync === true)
  }

  _get (key, options) {
    return this[kNative].get(key, options.valueEncoding === 'utf8',
      options.fillCache !== false, nativeSnapshot(options))
  }

  _getMany (keys, options) {
    return this[kNative].getMany(keys, options.valueEncoding === 'utf8',
      options.fillCache !== false, nativeSnapshot(options)).then(unpackValues)
  }

  _has (key, options) {
    return this[kNative].has(key, nativeSnapshot(options))
  }

  _hasMany (keys, options) {
    return this[kNative].hasMany(keys, nativeSnapshot(options))
  }

  _batch (operations, options) {
    return this[kNative].batch(operations, options.sync === true)
  }

  _chainedBatch () {
    return new SiftChainedBatch(this)
  }

  async _clear (options) {
    return this[kNative].clear(options, nativeSnapshot(options))
  }

  _snapshot (options) {
    return new SiftSnapshot(this, options)
  }

  _iterator (options) {
    return new SiftIterator(this, options, true, true)
  }

  _keys (options) {
    return new SiftKeyIterator(this, options, true, false)
  }

  _values (options) {
    return new SiftValueIterator(this, options, false, true)
  }

  // Writes the memtable to a table on disk; resolves once it is durable.
  async flush () {
    if (this.status === 'opening') return this.deferAsync(() => this.flush())
    return this[kNative].flush()
  }

  // Compacts the tables holding keys in [start, end] (null or undefined: that
  // side is open); keys as the database's keyEncoding encodes them.
  async compactRange (start, end, options) {
    if (this.status === 'opening') {
      return this.deferAsync(() => this.compactRange(start, end, options))
    }
    const keyEncoding = this.keyEncoding(options && options.keyEncoding)
    const encode = (k) => k == null ? null : keyEncoding.encode(k)
    return this[kNative].compactRange(encode(start), encode(end))
  }

  // One of sift's properties as text (sift.stats, sift.num-files-at-level<N>,
  // sift.filter-memory-bytes ...), or undefined for an unknown name.
  getProperty (name) {
    return this[kNative].getProperty(name)
  }
}

class SiftSnapshot extends AbstractSnapshot {
  // options.owner is the database (or sublevel) that closes the snapshot
  // with itself; the snapshot is of `db`, the root database.
  constructor (db, options) {
    super(options)
    this[kNative] = new binding.Snapshot(db[kNative])
  }

  async _close () {
    this[kNative].close()
  }
}

class SiftChainedBatch extends AbstractChainedBatch {
  constructor (db) {
    super(db)
    this[kNative] = new binding.Batch()
  }

  _put (key, value, options) {
    this[kNative].put(key, value)
  }

  _del (key, options) {
    this[kNative].del(key)
  }

  _clear () {
    this[kNative].clear()
  }

  async _write (options) {
    return this.db[kNative].write(this[kNative], options.sync === true)
  }

  async _close () {
    this[kNative].clear()
  }
}

// The reading half shared by the three iterator classes (entries, keys,
// values). next() reads runs ahead, starting short (a caller that wants one
// entry pays for a few) and growing to 1,000 entries per trip to the thread
// pool; nextv() and all() ask for what they need in one trip.
const FIRST_RUN = 8
const MAX_RUN = 1000

function iteratorClass (Base) {
  return class extends Base {
    constructor (db, options, keys, values) {
      super(db, options)
      // abstract-level has attached this iterator to the database already, so
      // a failure here (a closed snapshot) must leave an object it can close;
      // the error surfaces on the first read.
      try {
        this[kNative] = new binding.Iterator(db[kNative], options,
          nativeSnapshot(options), keys, values)
        this[kError] = null
      } catch (err) {
        this[kNative] = null
        this[kError] = err
      }
      this[kCache] = []
      this[kPosition] = 0
      this[kRun] = FIRST_RUN
      this[kDone] = false
      this[kSignal] = options.signal || null
    }

    // A read of the addon, rejected with LEVEL_ABORTED as soon as the
    // iterator's signal aborts. The read itself runs to its end on the pool
    // (it is one bounded run); its result is dropped, and abstract-level
    // refuses further reads of an aborted iterator.
    [kRead] (size) {
      const promise = this[kNative].next(size)
      const signal = this[kSignal]
      if (signal === null) return promise
      return new Promise((resolve, reject) => {
        const onAbort = () => reject(new AbortError(signal.reason))
        if (signal.aborted) return onAbort()
        signal.addEventListener('abort', onAbort, { once: true })
        promise.then((items) => {
          signal.removeEventListener('abort', onAbort)
          resolve(items)
        }, (err) => {
          signal.removeEventListener('abort', onAbort)
          reject(err)
        })
      })
    }

    _seek (target, options) {
      if (this[kNative] === null) return
      this[kNative].seek(target)
      this[kCache] = []
      this[kPosition] = 0
      this[kRun] = FIRST_RUN
      this[kDone] = false
    }

    async _next () {
      if (this[kPosition] < this[kCache].length) {
        return this[kCache][this[kPosition]++]
      }
      if (this[kDone]) return undefined
      if (this[kNative] === null) throw this[kError]
      const run = this[kRun]
      const items = await this[kRead](run)
      this[kRun] = Math.min(run * 4, MAX_RUN)
      // A short run means the end (of the range, the limit or the data).
      if (items.length < run) this[kDone] = true
      this[kCache] = items
      this[kPosition] = 0
      return items.length > 0 ? items[this[kPosition]++] : undefined
    }

    async _nextv (size, options) {
      const cached = this[kCache].length - this[kPosition]
      if (cached > 0) {
        const n = Math.min(size, cached)
        const chunk = this[kCache].slice(this[kPosition], this[kPosition] + n)
        this[kPosition] += n
        return chunk
      }
      if (this[kDone]) return []
      if (this[kNative] === null) throw this[kError]
      const items = await this[kRead](size)
      if (items.length < size) this[kDone] = true
      return items
    }

    async _all (options) {
      const head = this[kCache].slice(this[kPosition])
      this[kCache] = []
      this[kPosition] = 0
      if (this[kDone]) return head
      if (this[kNative] === null) throw this[kError]
      this[kDone] = true
      // abstract-level stops calling once the limit is met, and the addon
      // itself never returns more than the limit: ask for everything.
      const rest = await this[kRead](2 ** 30)
      return head.length === 0 ? rest : head.concat(rest)
    }

    async _close () {
      this[kCache] = []
      this[kSignal] = null
      if (this[kNative] !== null) this[kNative].close()
    }
  }
}

const SiftIterator = iteratorClass(AbstractIterator)
const SiftKeyIterator = iteratorClass(AbstractKeyIterator)
const SiftValueIterator = iteratorClass(AbstractValueIterator)

exports.SiftLevel = SiftLevel
