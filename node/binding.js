'use strict'

// Loads the addon built by scripts/build.js (CMake) into the repository's
// build/node tree, or from SIFT_LEVEL_BUILD_DIR when set.
const path = require('path')

const dir = process.env.SIFT_LEVEL_BUILD_DIR ||
  path.join(__dirname, '..', 'build', 'node')
const file = path.join(dir, 'sift_level.node')

try {
  module.exports = require(file)
} catch (err) {
  throw new Error(
    `sift-level: cannot load the native addon ${file} (${err.message}); ` +
    'build it with `npm install` (or `npm run build`) in the package directory',
    { cause: err }
  )
}
