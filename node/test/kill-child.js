'use strict'

// Child of the reopen-after-kill test: writes keys one awaited put at a
// time, reporting each acknowledged one on stdout, until it is killed.
const { SiftLevel } = require('..')

async function main () {
  const db = new SiftLevel(process.argv[2], { writeBufferSize: 64 * 1024 })
  await db.open()
  for (let i = 0; ; i++) {
    const key = 'key' + String(i).padStart(8, '0')
    await db.put(key, 'value' + i)
    process.stdout.write(key + '\n')
  }
}

main().catch((err) => {
  console.error(err)
  process.exit(1)
})
