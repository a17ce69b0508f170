'use strict'

// sift-level against classic-level (LevelDB), side by side in one run, both
// through abstract-level's public API with their default options (a 10
// bits/key Bloom filter and an 8 MiB block cache each).
//
//   node bench.js [--keys 1000000] [--reads 200000] [--inflight 4] [--dir DIR]
//                 [--engines sift-level,classic-level] [--skip put]
//                 [--package DIR]
//
// --engines runs only the engines named, --skip leaves out workloads by name
// (put, batch is always run: it loads the database the reads read), and
// --package loads sift-level from another copy of the package (A/B runs of
// two builds: SIFT_LEVEL_BUILD_DIR names the addon's build directory).
//
// Keys are 16 bytes, values 100 bytes, utf8 strings. Workloads:
//   put          --keys awaited puts in random order into an empty database
//   batch        the same keys in batches of 1,000 (this database is then
//                compacted and read by the rest)
//   get present  --reads gets of random present keys
//   get absent   --reads gets of absent keys that fall between present ones
//   getMany 32   --reads keys, 32 random present keys per call
//   iterate      one for-await over the whole database
// Point operations keep --inflight calls in flight. Rates are operations (or
// keys, or entries) per second.
const fs = require('fs')
const os = require('os')
const path = require('path')
const { ClassicLevel } = require('classic-level')
const { SiftLevel } = require(path.resolve(arg('package', path.join(__dirname, '..', '..', 'node'))))

function arg (name, fallback) {
  const i = process.argv.indexOf('--' + name)
  return i >= 0 ? process.argv[i + 1] : fallback
}
const N = Number(arg('keys', 1000000))
const READS = Number(arg('reads', Math.min(N, 200000)))
const INFLIGHT = Number(arg('inflight', 4))
const BATCH = 1000
const SKIP = new Set(arg('skip', '').split(',').filter(Boolean))
const root = fs.mkdtempSync(path.join(arg('dir', os.tmpdir()), 'sift-level-bench-'))

// Present keys are even numbers, absent ones odd: both spread over the key
// range, so an absent key is never ruled out by a table's key range alone.
const pad = (n) => 'key' + String(n).padStart(13, '0') // 16 bytes
const present = (i) => pad(2 * i)
const absent = (i) => pad(2 * i + 1)

// A fixed pseudo-random sequence (xorshift), the same for both engines.
function rng (seed) {
  let x = seed >>> 0 || 1
  return () => {
    x ^= x << 13; x >>>= 0
    x ^= x >>> 17
    x ^= x << 5; x >>>= 0
    return x
  }
}
const VALUE_POOL = (() => {
  const r = rng(7)
  let s = ''
  while (s.length < 4096 + 100) s += (r() % 1e9).toString(36)
  return s
})()
const value = (i) => VALUE_POOL.substr(i % 4096, 100)

// A permutation of 0..N-1 (random insertion order).
function permutation (n, seed) {
  const p = new Uint32Array(n)
  for (let i = 0; i < n; i++) p[i] = i
  const r = rng(seed)
  for (let i = n - 1; i > 0; i--) {
    const j = r() % (i + 1)
    const t = p[i]; p[i] = p[j]; p[j] = t
  }
  return p
}

// Runs `count` calls of op(i), keeping INFLIGHT of them in flight.
async function pump (count, op) {
  let next = 0
  async function lane () {
    while (next < count) await op(next++)
  }
  const lanes = []
  for (let i = 0; i < INFLIGHT; i++) lanes.push(lane())
  await Promise.all(lanes)
}

async function timed (fn) {
  const start = process.hrtime.bigint()
  const units = await fn()
  return units / (Number(process.hrtime.bigint() - start) / 1e9)
}

const allEngines = {
  'sift-level': (dir) => new SiftLevel(dir),
  'classic-level': (dir) => new ClassicLevel(dir)
}
const engines = Object.fromEntries(Object.entries(allEngines).filter(([name]) =>
  arg('engines', Object.keys(allEngines).join(',')).split(',').includes(name)))
const results = {} // workload -> engine -> ops/s
const record = (workload, engine, rate) => {
  results[workload] = results[workload] || {}
  results[workload][engine] = rate
  console.error(`  ${engine.padEnd(14)} ${workload.padEnd(12)} ${Math.round(rate)} /s`)
}

async function main () {
  console.error(`${N} keys, ${READS} reads, ${INFLIGHT} in flight, in ${root}`)
  const order = permutation(N, 42)

  for (const [name, make] of Object.entries(engines)) {
    if (SKIP.has('put')) break
    const db = make(path.join(root, name + '-put'))
    await db.open()
    record('put', name, await timed(async () => {
      await pump(N, (i) => db.put(present(order[i]), value(order[i])))
      return N
    }))
    await db.close()
    fs.rmSync(path.join(root, name + '-put'), { recursive: true, force: true })
  }

  const dbs = {}
  for (const [name, make] of Object.entries(engines)) {
    const db = dbs[name] = make(path.join(root, name))
    await db.open()
    record('batch 1000', name, await timed(async () => {
      for (let b = 0; b < N; b += BATCH) {
        const ops = []
        for (let i = b; i < Math.min(N, b + BATCH); i++) {
          ops.push({ type: 'put', key: present(order[i]), value: value(order[i]) })
        }
        await db.batch(ops)
      }
      return N
    }))
    // Both trees settled the same way before they are read.
    await db.compactRange(present(0), present(N))
  }

  for (const [name, db] of Object.entries(dbs)) {
    const r = rng(99)
    const picks = Array.from({ length: READS }, () => r() % N)
    if (!SKIP.has('get')) {
      let missing = 0
      record('get present', name, await timed(async () => {
        await pump(READS, async (i) => {
          if ((await db.get(present(picks[i]))) === undefined) missing++
        })
        return READS
      }))
      if (missing > 0) throw new Error(`${name}: ${missing} present keys not found`)
      let found = 0
      record('get absent', name, await timed(async () => {
        await pump(READS, async (i) => {
          if ((await db.get(absent(picks[i]))) !== undefined) found++
        })
        return READS
      }))
      if (found > 0) throw new Error(`${name}: ${found} absent keys found`)
    }
    if (!SKIP.has('getMany')) {
      const calls = Math.ceil(READS / 32)
      let missing = 0
      record('getMany 32', name, await timed(async () => {
        await pump(calls, async (c) => {
          const keys = []
          for (let j = 0; j < 32; j++) keys.push(present(picks[(c * 32 + j) % READS]))
          const values = await db.getMany(keys)
          if (values.includes(undefined)) missing++
        })
        return calls * 32
      }))
      if (missing > 0) throw new Error(`${name}: getMany missed present keys`)
    }
    if (!SKIP.has('iterate')) {
      let entries = 0
      record('iterate', name, await timed(async () => {
        for await (const [k, v] of db.iterator()) { // eslint-disable-line no-unused-vars
          entries++
        }
        return entries
      }))
      if (entries !== N) throw new Error(`${name}: iterated ${entries} of ${N} entries`)
    }
  }
  for (const db of Object.values(dbs)) await db.close()

  const names = Object.keys(engines)
  const allNames = Object.keys(allEngines)
  const rows = [['workload', ...names.map((n) => n + ' ops/s'), 'sift/classic']]
  for (const [workload, byEngine] of Object.entries(results)) {
    const [sift, classic] = allNames.map((n) => byEngine[n])
    rows.push([workload, ...names.map((n) => Math.round(byEngine[n]).toLocaleString('en-US')),
      sift && classic ? (sift / classic).toFixed(2) + 'x' : '-'])
  }
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)))
  const line = (r) => '| ' + r.map((cell, c) => c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c])).join(' | ') + ' |'
  console.log(`${N.toLocaleString('en-US')} keys (16 B keys, 100 B values), ${READS.toLocaleString('en-US')} reads, ${INFLIGHT} in flight; node ${process.version}`)
  console.log(line(rows[0]))
  console.log('|' + widths.map((w, c) => (c === 0 ? '-' : '') + '-'.repeat(w + 1) + (c === 0 ? '' : ':')).join('|') + '|')
  for (const r of rows.slice(1)) console.log(line(r))
}

main().then(
  () => fs.rmSync(root, { recursive: true, force: true }),
  (err) => {
    fs.rmSync(root, { recursive: true, force: true })
    console.error(err)
    process.exit(1)
  })
