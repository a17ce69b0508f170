'use strict'

// abstract-level's own compliance suite, each database in a fresh temporary
// directory (removed when the process exits).
const test = require('tape')
const fs = require('fs')
const os = require('os')
const path = require('path')
const suite = require('abstract-level/test')
const { SiftLevel } = require('..')

const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sift-level-suite-'))
let counter = 0
// Ahead of tape's 'exit' listener, which ends the process (see sift-test.js).
process.prependListener('exit', () => fs.rmSync(root, { recursive: true, force: true }))

suite({
  test,
  factory (options) {
    return new SiftLevel(path.join(root, String(counter++)), options)
  }
})
