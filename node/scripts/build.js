'use strict'

// Builds the addon with CMake into <repository>/build/node (or
// SIFT_LEVEL_BUILD_DIR): configured once, then incremental. Runs as the
// package's install script, so `npm install` in node/ (or `npm install ./node`
// from the repository) builds it. No download: Node's headers come with Node
// (/usr/include/node), node-addon-api from npm. With SIFT_ENGINE_PREFIX set,
// the addon links the sift package installed in that prefix (a Release build
// with position-independent static libraries) instead of building the engine.
const { spawnSync } = require('child_process')
const fs = require('fs')
const path = require('path')

const source = path.join(__dirname, '..')
const build = process.env.SIFT_LEVEL_BUILD_DIR ||
  path.join(source, '..', 'build', 'node')
const jobs = process.env.SIFT_BUILD_JOBS || '2'
const engine = process.env.SIFT_ENGINE_PREFIX
  ? path.resolve(process.env.SIFT_ENGINE_PREFIX)
  : ''

function run (args) {
  const result = spawnSync('cmake', args, { stdio: 'inherit' })
  if (result.error) {
    console.error(`sift-level: cannot run cmake: ${result.error.message}`)
    process.exit(1)
  }
  if (result.status !== 0) process.exit(result.status ?? 1)
}

// node-addon-api where Node's resolution finds it: node/node_modules after
// `npm install` in node/, the project's node_modules when the package is
// installed from elsewhere (npm may hoist it there).
let addonApi
try {
  addonApi = path.dirname(require.resolve('node-addon-api/package.json'))
} catch (err) {
  console.error('sift-level: node-addon-api is not installed (npm install installs it)')
  process.exit(1)
}

// node-addon-api's directory and the engine's prefix (empty: build the
// engine) are passed on every configure: the tree may outlive the
// node_modules it was first configured with, and may switch engines.
const configure = ['-S', source, '-B', build, `-DNODE_ADDON_API_DIR=${addonApi}`,
  `-DSIFT_ENGINE_PREFIX=${engine}`]
if (!fs.existsSync(path.join(build, 'CMakeCache.txt'))) {
  const generator = spawnSync('ninja', ['--version']).status === 0
    ? ['-G', 'Ninja']
    : []
  configure.push('-DCMAKE_BUILD_TYPE=Release', ...generator)
}
run(configure)
run(['--build', build, '-j', jobs])
