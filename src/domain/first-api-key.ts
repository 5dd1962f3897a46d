/**
 * The first key of a new installation: with no key configured and none issued, one is
 * issued, so a fresh `npm start` serves a caller at once instead of answering only 401s.
 */
import type { Store } from '../store/store.js'
import { issueApiKey } from './api-keys/lifecycle.js'

/** The name the first key goes by in metrics and `petstore keys list`. */
const FIRST_KEY_NAME = 'default'

/**
 * Issues the first key when no key exists anywhere.
 * @returns the key issued, to be shown once; undefined when a key existed (or another instance issued it at the same moment)
 * @example const key = await issueFirstApiKey(store, config.apiKeys.length)
 */
export async function issueFirstApiKey (store: Store, configuredKeys: number): Promise<string | undefined> {
  if (configuredKeys > 0 || (await store.listApiKeys()).length > 0) return undefined
  try {
    return await issueApiKey(store, { name: FIRST_KEY_NAME })
  } catch (err) {
    // Another instance issued it at the same moment; else no key exists, and serving would answer only 401s.
    if ((await store.listApiKeys()).length > 0) return undefined
    throw err
  }
}
