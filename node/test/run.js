'use strict'

// `npm test`: abstract-level's compliance suite and the package's own tests,
// in one tape run (one TAP stream, one "# tests / # pass / # fail" summary).
require('./suite')
require('./sift-test')
