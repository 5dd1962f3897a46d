/**
 * What every kind of test shares, whatever it starts: where the repository is, and the one API
 * key every test server accepts.
 */
import { basename, dirname } from 'node:path'
import { fileURLToPath } from 'node:url'

/** Where `npm test` runs the tests from: test/, src/ and the client's sources compiled, the same tree inside. */
const TEST_BUILD = '.test-build'
const ABOVE_SUPPORT = fileURLToPath(new URL('../..', import.meta.url))
/** The repository's root, whether this file runs from test/support/ or from TEST_BUILD: the CLI's working directory unless a test gives another. */
export const ROOT = basename(ABOVE_SUPPORT) === TEST_BUILD ? dirname(ABOVE_SUPPORT) : ABOVE_SUPPORT
/** The one API key every test server, in process or child, accepts. */
export const TEST_KEY = 'test-key-0123456789abcdef'
