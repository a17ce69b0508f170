'use strict'

// What abstract-level's suite does not cover: sift's own options, its read
// statistics and properties, bounds at the edges of sift's key order,
// errors mapped from sift's statuses, concurrency, misuse after close, and a
// reopen after the writing process is killed.
const test = require('tape')
const fs = require('fs')
const os = require('os')
const path = require('path')
const { spawn } = require('child_process')
const { SiftLevel } = require('..')
const binding = require('../binding')

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-level-test-'))
let counter = 0
// Ahead of tape's own 'exit' listener, which ends the process with the
// run's status and so skips the listeners after it.
process.prependListener('exit', () => fs.rmSync(root, { recursive: true, force: true }))
const location = () => path.join(root, 'db' + counter++)
const key = (i) => 'k' + String(i).padStart(6, '0')

async function fill (db, n, value = (i) => 'v' + i) {
  const ops = []
  for (let i = 0; i < n; i++) ops.push({ type: 'put', key: key(i), value: value(i) })
  await db.batch(ops)
}

test('manifest says what sift-level supports', async function (t) {
  const db = new SiftLevel(location())
  const s = db.supports
  for (const name of ['implicitSnapshots', 'explicitSnapshots', 'has', 'permanence',
    'seek', 'createIfMissing', 'errorIfExists', 'deferredOpen']) {
    t.is(s[name], true, name)
  }
  t.is(s.getSync, undefined, 'getSync is not offered')
  t.is(s.signals.iterators, true, 'iterator reads can be aborted')
  t.same(s.additionalMethods, { flush: true, compactRange: true, getProperty: true })
  for (const e of ['buffer', 'view', 'utf8']) t.is(s.encodings[e], true, e)
  await db.close()
})

test('sift options reach the engine: filter bits per key set filter memory', async function (t) {
  const memory = {}
  for (const bits of [0, 10, 20]) {
    const db = new SiftLevel(location(), {
      filterBitsPerKey: bits, filterAllocation: 'uniform', filterKind: 'standard'
    })
    await fill(db, 5000)
    await db.flush()
    memory[bits] = Number(db.getProperty('sift.filter-memory-bytes'))
    t.is(await db.get(key(1234)), 'v1234', `read back with ${bits} bits/key`)
    await db.close()
  }
  t.is(memory[0], 0, 'no filter at 0 bits/key')
  t.ok(memory[10] > 5000, `10 bits/key: ${memory[10]} bytes`)
  t.ok(memory[20] > memory[10] * 1.7, `20 bits/key: ${memory[20]} bytes`)
})

test('every filter kind, allocation, compression and read path reads back', async function (t) {
  const combos = [
    { filterKind: 'blocked', filterAllocation: 'optimal', compression: 'snappy' },
    { filterKind: 'binary-fuse', compression: 'none', cacheSize: 0 },
    { filterKind: 'standard', compression: false, mmapReads: false },
    { compression: true, mmapReads: true, blockSize: 1024, writeBufferSize: 64 * 1024 }
  ]
  for (const options of combos) {
    const db = new SiftLevel(location(), options)
    await fill(db, 3000, (i) => 'x'.repeat(i % 50) + i)
    await db.flush()
    const values = await db.getMany([key(0), key(2999), 'absent'])
    t.same(values, ['0', 'x'.repeat(2999 % 50) + 2999, undefined], JSON.stringify(options))
    t.is((await db.keys().all()).length, 3000)
    await db.close()
  }
})

test('directReads: reads through O_DIRECT, or a clear refusal from the file system', async function (t) {
  const db = new SiftLevel(location(), { directReads: true, cacheSize: 1 << 20 })
  await fill(db, 2000)
  await db.flush()
  try {
    t.is(await db.get(key(1999)), 'v1999', 'read through direct I/O')
  } catch (err) {
    t.is(err.code, 'SIFT_INVALID_ARGUMENT')
    t.ok(/direct/i.test(err.message), err.message)
  }
  await db.close()
})

// The error opening a database with these options fails with; null if it
// opens (then it is closed again).
async function openError (options) {
  const db = new SiftLevel(location(), options)
  try {
    await db.open()
  } catch (err) {
    return err
  }
  await db.close()
  return null
}

test('bad options are refused with the option named', async function (t) {
  // Out of sift's range: sift's own message names the field.
  for (const [options, field] of [[{ writeBufferSize: 10 }, /write_buffer_size/],
    [{ rangeFilterBitsPerKey: 1 }, /range_filter_bits_per_key/],
    [{ wholeKeyFiltering: false }, /whole_key_filtering/],
    [{ maxOpenFiles: 2 ** 31 - 1 }, /max_open_files/]]) {
    const err = await openError(options)
    t.is(err && err.code, 'LEVEL_DATABASE_NOT_OPEN', JSON.stringify(options))
    t.is(err && err.cause.code, 'SIFT_INVALID_ARGUMENT')
    t.ok(err && field.test(err.cause.message), err ? err.cause.message : 'opened')
  }
  // The wrong type, or a value its field cannot hold: refused before sift.
  for (const options of [{ filterKind: 'cuckoo' }, { compression: 'zstd' },
    { cacheSize: '8MB' }, { mmapReads: 1 }, { prefixLength: 0 }, { prefixLength: 1.5 },
    { prefixLength: 2, prefixDelimiter: ':' }, { prefixDelimiter: '::' },
    { prefixDelimiter: 58 }, { filterMemoryLimit: -1 }, { wholeKeyFiltering: 'no' },
    { rangeFilterBitsPerKey: '16' }, { maxOpenFiles: 100.5 }, { maxOpenFiles: 2 ** 40 },
    { blockRestartInterval: 2 ** 31 }]) {
    const err = await openError(options)
    t.ok(err && err.cause instanceof TypeError,
      `${JSON.stringify(options)}: ${err ? err.cause.message : 'opened'}`)
  }
})

test('scan filters: a prefix or range a table lacks is answered by its filter', async function (t) {
  const db = new SiftLevel(location(), { prefixLength: 2, rangeFilterBitsPerKey: 16 })
  await db.batch(['aa1', 'aa2', 'cc1', 'cc2'].map((k) => ({ type: 'put', key: k, value: k })))
  await db.flush()
  let before = db.readStats
  t.same(await db.keys({ gte: 'bb', lt: 'bc' }).all(), [], 'no key with prefix bb')
  let after = db.readStats
  t.ok(after.prefixFilterNegatives > before.prefixFilterNegatives, 'the prefix filter ruled bb out')
  t.ok(after.prefixFilterProbes > before.prefixFilterProbes, 'prefix probes counted')
  t.same(await db.keys({ gte: 'aa', lt: 'ab' }).all(), ['aa1', 'aa2'], 'prefix aa in full')
  // One value of the table's 3-byte keys, 72 above aa2: at 16 bits/key the
  // range filter's false-positive rate is below 0.002.
  before = db.readStats
  t.same(await db.keys({ gte: 'aaz', lt: 'aa{' }).all(), [], 'no key in [aaz, aa{)')
  after = db.readStats
  t.ok(after.rangeFilterNegatives > before.rangeFilterNegatives, 'the range filter ruled it out')
  t.ok(after.rangeFilterProbes > before.rangeFilterProbes, 'range probes counted')
  t.is(typeof after.rangeFilterFalsePositives, 'number')
  t.same(await db.values({ gt: 'aa1', lte: 'cc1' }).all(), ['aa2', 'cc1'], 'a range across tables')
  t.is(await db.get('cc2'), 'cc2')
  await db.close()

  // Prefixes only in the filters, by delimiter: point reads stay right.
  const byDelimiter = new SiftLevel(location(), {
    prefixDelimiter: Buffer.from(':'), wholeKeyFiltering: false
  })
  await byDelimiter.put('team:1', 'team')
  await byDelimiter.put('user:1', 'one')
  await byDelimiter.flush()
  t.is(await byDelimiter.get('user:1'), 'one')
  t.is(await byDelimiter.get('user:2'), undefined)
  // Within the table's key range [team:1, user:1], so its filter is asked.
  t.same(await byDelimiter.keys({ gte: 'tree:', lt: 'tree;' }).all(), [])
  t.ok(byDelimiter.readStats.prefixFilterNegatives >= 1, 'prefix tree: ruled out')
  await byDelimiter.close()
})

test('filterMemoryLimit: filters loaded in units, counted as filterUnitLoads', async function (t) {
  const where = location()
  const db = new SiftLevel(where, { filterMemoryLimit: 1 << 30 })
  await fill(db, 3000)
  await db.flush()
  await db.close()
  const reopened = new SiftLevel(where, { filterMemoryLimit: 1 << 30 })
  await reopened.open()
  t.ok(reopened.readStats.filterUnitLoads > 0, `units loaded at open: ${reopened.readStats.filterUnitLoads}`)
  t.is(await reopened.get(key(2999)), 'v2999')
  t.is(await reopened.get(key(5) + 'x'), undefined)
  await reopened.close()
})

test('readStats counts point reads, filter negatives and block reads', async function (t) {
  const db = new SiftLevel(location(), { filterBitsPerKey: 10, cacheSize: 0 })
  await fill(db, 10000)
  await db.flush()
  const before = db.readStats
  for (let i = 0; i < 100; i++) t.is(await db.get(key(i * 97)), 'v' + i * 97)
  for (let i = 0; i < 1000; i++) t.is(await db.get(key(i * 9) + 'x'), undefined)
  const after = db.readStats
  t.is(after.gets - before.gets, 1100, 'one get each')
  t.ok(after.filterNegatives - before.filterNegatives > 900,
    `absent keys mostly stopped by the filter: ${after.filterNegatives - before.filterNegatives}`)
  t.ok(after.blockReads - before.blockReads >= 100, 'present keys read a block each (no cache)')
  t.is(typeof after.measuredFpr, 'number')
  await db.getMany([key(1), key(2), 'nope'])
  t.is(db.readStats.gets - after.gets, 3, 'getMany counts each key')
  t.ok(/level|Level|files/.test(db.getProperty('sift.stats')), 'sift.stats property')
  t.is(db.getProperty('no.such.property'), undefined)
  await db.close()
  t.throws(() => db.readStats, /not open/, 'readStats after close throws')
})

test('range bounds next to a key: gt, lte and seek around keys with trailing zero bytes', async function (t) {
  const db = new SiftLevel(location(), { keyEncoding: 'buffer', valueEncoding: 'utf8' })
  const keys = [Buffer.from('a'), Buffer.from('a\0'), Buffer.from('a\0\0'), Buffer.from('a\x01'), Buffer.from('b')]
  await db.batch(keys.map((k) => ({ type: 'put', key: k, value: k.toString('hex') })))
  const hex = async (opts) => (await db.keys(opts).all()).map((k) => k.toString('hex'))
  t.same(await hex({ gt: Buffer.from('a') }), ['6100', '610000', '6101', '62'])
  t.same(await hex({ lte: Buffer.from('a\0') }), ['61', '6100'])
  t.same(await hex({ gt: Buffer.from('a'), lte: Buffer.from('a\0\0') }), ['6100', '610000'])
  t.same(await hex({ gt: Buffer.from('a\0'), lt: Buffer.from('b'), reverse: true }), ['6101', '610000'])
  t.same(await hex({ gte: Buffer.from('b'), lt: Buffer.from('a') }), [], 'empty range')
  const it = db.keys({ reverse: true })
  it.seek(Buffer.from('a\0\x05'))
  t.same((await it.next()).toString('hex'), '610000', 'reverse seek lands on the last key <= target')
  await it.close()
  await db.clear({ gt: Buffer.from('a'), lte: Buffer.from('a\0\0') })
  t.same(await hex({}), ['61', '6101', '62'], 'clear with the same bounds')
  await db.close()
})

test('values of every size and binary keys round-trip', async function (t) {
  const db = new SiftLevel(location(), { keyEncoding: 'view', valueEncoding: 'buffer' })
  const big = Buffer.alloc(3 << 20, 7)
  const binKey = new Uint8Array([0, 255, 0, 1])
  await db.put(binKey, big)
  await db.put(new Uint8Array([1]), Buffer.alloc(0))
  t.ok((await db.get(binKey)).equals(big), '3 MiB value')
  t.is((await db.get(new Uint8Array([1]))).length, 0, 'empty value')
  t.same(await db.has(binKey), true)
  t.same(await db.hasMany([binKey, new Uint8Array([9])]), [true, false])
  await db.close()
})

test('many reads and iterators in flight at once', async function (t) {
  const db = new SiftLevel(location(), { writeBufferSize: 64 * 1024 })
  await fill(db, 20000)
  const gets = []
  for (let i = 0; i < 2000; i++) gets.push(db.get(key((i * 7919) % 20000)))
  const scans = []
  for (let i = 0; i < 16; i++) {
    scans.push(db.iterator({ gte: key(i * 1000), limit: 500, reverse: i % 2 === 1 }).all())
  }
  const values = await Promise.all(gets)
  t.ok(values.every((v, i) => v === 'v' + (i * 7919) % 20000), '2,000 concurrent gets')
  const results = await Promise.all(scans)
  for (let i = 0; i < 16; i++) {
    const expected = i % 2 === 1 ? Math.min(500, 20000) : 500
    if (results[i].length !== expected) t.fail(`scan ${i}: ${results[i].length} entries`)
  }
  t.same(results[0][499], [key(499), 'v499'], 'forward scan ends at its limit')
  t.same(results[1][0], [key(19999), 'v19999'], 'reverse scan from the end')
  await db.close()
})

test('iterators read a snapshot taken at creation, through compactions', async function (t) {
  const db = new SiftLevel(location(), { writeBufferSize: 64 * 1024 })
  await fill(db, 5000)
  const it = db.iterator()
  const first = await it.next()
  await fill(db, 5000, () => 'overwritten')
  for (let i = 0; i < 5000; i += 2) await db.del(key(i))
  await db.compactRange()
  const rest = await it.all()
  t.same(first, [key(0), 'v0'])
  t.is(rest.length, 4999, 'every entry of the snapshot')
  t.ok(rest.every(([k, v], i) => k === key(i + 1) && v === 'v' + (i + 1)), 'old values')
  t.is((await db.keys().all()).length, 2500, 'a new iterator sees the deletes')
  await db.close()
})

test('close waits for reads in flight; later use is refused cleanly', async function (t) {
  const db = new SiftLevel(location())
  await fill(db, 1000)
  const gets = []
  for (let i = 0; i < 200; i++) gets.push(db.get(key(i)))
  const it = db.iterator()
  const nexting = it.next()
  const closing = db.close()
  const values = await Promise.all(gets)
  t.ok(values.every((v, i) => v === 'v' + i), 'reads in flight completed with their values')
  t.same(await nexting, [key(0), 'v0'], 'next() in flight completed')
  await closing
  t.is(db.status, 'closed')
  for (const [name, op] of [['get', () => db.get('k')], ['put', () => db.put('k', 'v')],
    ['iterator.next', () => it.next()], ['batch', () => db.batch([{ type: 'del', key: 'k' }])],
    ['flush', () => db.flush()]]) {
    try {
      await op()
      t.fail(name + ' after close succeeded')
    } catch (err) {
      t.ok(/NOT_OPEN/.test(err.code), `${name} after close: ${err.code}`)
    }
  }
  // Reopening the same object works, and the data is there.
  await db.open()
  t.is(await db.get(key(999)), 'v999', 'reopened')
  await db.close()
})

test('the addon refuses misuse of its own objects without crashing', async function (t) {
  const native = new binding.Database(location())
  const rejects = async (p, code, what) => {
    try {
      await p
      t.fail(what)
    } catch (err) {
      t.is(err.code, code, what)
    }
  }
  await rejects(native.get('k', true, true, null), 'LEVEL_DATABASE_NOT_OPEN', 'get before open')
  t.throws(() => new binding.Iterator(native, {}, null, true, true), /not open/, 'iterator before open')
  t.throws(() => new binding.Snapshot(native), /not open/, 'snapshot before open')
  await native.open({ createIfMissing: true })
  await rejects(native.open({}), 'LEVEL_DATABASE_NOT_CLOSED', 'second open')
  await native.put('a', '1', false)
  await rejects(native.put({}, '1', false), 'LEVEL_INVALID_KEY', 'object key')
  const it = new binding.Iterator(native, {}, null, true, true)
  const snapshot = new binding.Snapshot(native)
  t.same(await it.next(10), [[Buffer.from('a'), Buffer.from('1')]])
  await native.close()
  await rejects(it.next(1), 'LEVEL_ITERATOR_NOT_OPEN', 'iterator after close')
  await rejects(native.get('a', true, true, snapshot), 'LEVEL_DATABASE_NOT_OPEN', 'read with snapshot after close')
  snapshot.close()
  it.close()
  await native.close()
})

test('iterators and databases dropped without close are collected safely', async function (t) {
  if (typeof global.gc !== 'function') {
    t.fail('run with node --expose-gc (npm test does)')
    return
  }
  const dir = location()
  await (async () => {
    const native = new binding.Database(dir)
    await native.open({ createIfMissing: true })
    await native.put('a', '1', false)
    for (let i = 0; i < 50; i++) {
      const it = new binding.Iterator(native, {}, null, true, true)
      if (i % 2 === 0) await it.next(1)
    }
    const snapshot = new binding.Snapshot(native)
    t.ok(snapshot, 'snapshot made')
  })()
  for (let i = 0; i < 5; i++) {
    global.gc()
    await new Promise((resolve) => setImmediate(resolve))
  }
  // The collected database released its LOCK, so the directory opens again.
  const db = new SiftLevel(dir)
  await db.open()
  t.is(await db.get('a'), '1', 'reopened after collection')
  await db.close()
})

test('a database locked by another handle is refused with LEVEL_LOCKED', async function (t) {
  const dir = location()
  const a = new SiftLevel(dir)
  await a.open()
  const b = new SiftLevel(dir)
  try {
    await b.open()
    t.fail('opened twice')
  } catch (err) {
    t.is(err.cause.code, 'LEVEL_LOCKED', err.cause.message)
  }
  await a.close()
})

test('damaged table data is reported as LEVEL_CORRUPTION', async function (t) {
  const dir = location()
  const db = new SiftLevel(dir, { compression: 'none', cacheSize: 0 })
  await fill(db, 2000, (i) => 'value-' + i + '-'.repeat(40))
  await db.flush()
  await db.close()
  const tables = fs.readdirSync(dir).filter((f) => f.endsWith('.sst'))
  t.ok(tables.length > 0, 'a table on disk')
  const file = path.join(dir, tables[0])
  const bytes = fs.readFileSync(file)
  for (let i = 100; i < 4000; i += 7) bytes[i] ^= 0x5a // inside the first data blocks
  fs.writeFileSync(file, bytes)
  await db.open()
  try {
    await db.iterator().all()
    t.fail('read damaged data')
  } catch (err) {
    t.is(err.code, 'LEVEL_CORRUPTION', err.message)
  }
  await db.close()
})

test('reopen after the writing process is killed keeps every acknowledged put', async function (t) {
  const dir = location()
  const child = spawn(process.execPath, [path.join(__dirname, 'kill-child.js'), dir],
    { stdio: ['ignore', 'pipe', 'inherit'] })
  const acked = []
  let buffered = ''
  await new Promise((resolve) => {
    child.stdout.on('data', (chunk) => {
      buffered += chunk
      const lines = buffered.split('\n')
      buffered = lines.pop()
      acked.push(...lines)
      // Past a few memtable flushes (64 KiB write buffer), kill mid-stream.
      if (acked.length >= 3000 && !child.killed) {
        child.kill('SIGKILL')
      }
    })
    child.on('exit', resolve)
  })
  t.is(child.signalCode, 'SIGKILL', 'child killed')
  const db = new SiftLevel(dir, { createIfMissing: false })
  await db.open()
  const values = await db.getMany(acked)
  const missing = acked.filter((k, i) => values[i] !== 'value' + Number(k.slice(3)))
  t.same(missing, [], `all ${acked.length} acknowledged puts are there`)
  const keys = await db.keys().all()
  t.ok(keys.length >= acked.length, `${keys.length} keys after recovery`)
  t.same(keys.slice(0, acked.length), acked, 'in order, with no gaps')
  await db.close()
})

test('writes in flight at once apply in call order', async function (t) {
  const db = new SiftLevel(location())
  await db.open()
  const writes = []
  for (let i = 0; i < 2000; i++) {
    writes.push(db.put('same', String(i)))
    if (i % 3 === 0) writes.push(db.del('other' + (i - 3)))
    writes.push(db.put('other' + i, 'x'))
  }
  writes.push(db.batch([{ type: 'put', key: 'same', value: 'batch' }]))
  const closing = (async () => {
    await Promise.all(writes)
    return db.get('same')
  })()
  t.is(await closing, 'batch', 'the last write to a key wins')
  const others = await db.keys({ gte: 'other', lt: 'other~' }).all()
  t.is(others.length, 2000 - 666, 'each del applied after the put it follows')
  // Queued writes finish before a close that was asked for after them.
  const late = []
  for (let i = 0; i < 500; i++) late.push(db.put('late' + i, 'v'))
  await db.close()
  await Promise.all(late)
  await db.open()
  t.is((await db.keys({ gte: 'late', lt: 'late~' }).all()).length, 500, 'all queued writes landed')
  await db.close()
})

test('reads see every write finished before them and none called after them', async function (t) {
  const db = new SiftLevel(location())
  await db.open()
  let wrong = 0
  for (let i = 0; i < 300; i++) {
    await db.put('k', 'a' + i)
    const before = [db.get('k'), db.getMany(['k']), db.has('other' + i)]
    const it = db.iterator()
    const write = db.batch([{ type: 'put', key: 'k', value: 'b' + i }, { type: 'put', key: 'other' + i, value: 'x' }])
    const [v, many, has] = await Promise.all(before)
    const [[, iv]] = await it.all()
    if (v !== 'a' + i || many[0] !== 'a' + i || has !== false || iv !== 'a' + i) wrong++
    await write
    const after = await Promise.all([db.get('k'), db.has('other' + i)])
    if (after[0] !== 'b' + i || after[1] !== true) wrong++
  }
  t.is(wrong, 0, 'reads called before a write never see it; reads after it finished always do')
  await db.close()
})

test('the addon closes an iterator asked to close during a read, once the read is done', async function (t) {
  const native = new binding.Database(location())
  await native.open({ createIfMissing: true })
  for (let i = 0; i < 100; i++) await native.put(key(i), 'v', false)
  const it = new binding.Iterator(native, {}, null, true, false)
  const reading = it.next(50)
  it.close()
  t.is((await reading).length, 50, 'the read in flight completes')
  try {
    await it.next(1)
    t.fail('read after close')
  } catch (err) {
    t.is(err.code, 'LEVEL_ITERATOR_NOT_OPEN')
  }
  await native.close()
})

test('utf8 strings round-trip, ASCII or not, at every length around a word', async function (t) {
  const db = new SiftLevel(location())
  const values = []
  for (let n = 0; n < 20; n++) {
    values.push('a'.repeat(n), 'a'.repeat(n) + 'é', 'ü' + 'b'.repeat(n), 'x'.repeat(n) + '\u{1F600}', '\x7f'.repeat(n))
  }
  await db.batch(values.map((v, i) => ({ type: 'put', key: key(i) + v, value: v })))
  const got = await db.getMany(values.map((v, i) => key(i) + v))
  t.same(got, values, 'getMany')
  t.is(await db.get(key(7) + values[7]), values[7], 'get')
  const entries = await db.iterator().all()
  t.same(entries.map(([k, v]) => v), values, 'iterator values')
  t.same(entries.map(([k]) => k), values.map((v, i) => key(i) + v), 'iterator keys')
  await db.close()
})

test('getMany cuts values out of one answer: missing, empty, ASCII or not, every encoding', async function (t) {
  const db = new SiftLevel(location())
  const entries = [['a', 'alpha'], ['b', ''], ['c', 'x'.repeat(5000)], ['d', 'δ'], ['e', 'e']]
  await db.batch(entries.map(([k, v]) => ({ type: 'put', key: k, value: v })))
  const keys = ['a', 'nope', 'b', 'c', 'nope2', 'e']
  const want = ['alpha', undefined, '', 'x'.repeat(5000), undefined, 'e']
  t.same(await db.getMany(keys), want, 'ASCII strings, missing keys and an empty value')
  t.same(await db.getMany([...keys, 'd']), [...want, 'δ'], 'with a value that is not ASCII')
  t.same(await db.getMany(['nope', 'nope2']), [undefined, undefined], 'none found')
  const buffers = await db.getMany(keys, { valueEncoding: 'buffer' })
  t.same(buffers.map((b) => b === undefined ? b : Buffer.isBuffer(b) && b.toString()), want,
    'as Buffers')
  const views = await db.getMany(['d', 'a'], { valueEncoding: 'view' })
  t.ok(views.every((v) => v instanceof Uint8Array), 'as Uint8Arrays')
  t.same(views.map((v) => Buffer.from(v).toString()), ['δ', 'alpha'], 'view bytes')
  await db.put('j', '{"n":1}')
  t.same(await db.getMany(['j', 'a'], { valueEncoding: 'json' }).catch((e) => e.code),
    'LEVEL_DECODE_ERROR', 'json decoding still goes through abstract-level')
  t.same(await db.getMany(['j'], { valueEncoding: 'json' }), [{ n: 1 }], 'json values')
  t.same(await db.getMany([Buffer.from('a'), 'e']), ['alpha', 'e'], 'a Buffer key among strings')
  const sub = db.sublevel('s')
  await sub.put('k', 'v')
  t.same(await sub.getMany(['k', 'x']), ['v', undefined], 'through a sublevel')
  t.is(await sub.get('k'), 'v', 'get through a sublevel')
  await db.close()
})

test('reads right after a close and a reopen read the reopened database', async function (t) {
  const db = new SiftLevel(location())
  for (let round = 0; round < 20; round++) {
    await db.open()
    await db.put('round', String(round))
    const reads = []
    for (let i = 0; i < 8; i++) reads.push(db.get('round'), db.getMany(['round', 'none']))
    const got = await Promise.all(reads)
    if (!got.every((v) => v === String(round) || (Array.isArray(v) && v[0] === String(round)))) {
      t.fail(`round ${round}: ${JSON.stringify(got)}`)
    }
    await db.close()
  }
  t.pass('20 rounds of reads between reopens')
})
