/**
 * Debian's Chromium, driven by playwright-core: the browser of the CORS, docs page and client
 * tests, and a leg of its own in test/legs.test.ts.
 */
import type { Browser } from 'playwright-core'
import { programMissing } from './programs.js'

export const CHROMIUM = '/usr/bin/chromium'

/**
 * Why Chromium cannot run here, or false when it can.
 * @example const missing = chromiumMissing(); describe('…', { skip: missing === false ? false : `docs page tests skipped: ${missing}` }, …)
 */
export function chromiumMissing (): string | false {
  return programMissing(CHROMIUM, 'chromium')
}

/**
 * Chromium, headless, with nothing of its own on the network.
 * @example const browser = await launchChromium(); const page = await browser.newPage()
 */
export async function launchChromium (): Promise<Browser> {
  // Loaded here, not at the top: every client test imports this module (through server-support), and playwright-core takes 0.6 to 0.8 s to load.
  const { chromium } = await import('playwright-core')
  return await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking']
  })
}
