import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, it } from 'node:test'
import { parse } from 'yaml'
import { ROOT } from '../support/constants.js'
import { findTool } from '../support/prometheus-tools.js'

const DIR = join(ROOT, 'deploy/prometheus')
const RULES = 'petstore.rules.yml'
const TESTS = 'petstore.rules.test.yml'

interface Rule { alert?: string, record?: string, labels?: Record<string, string>, annotations?: Record<string, string> }
interface RuleTest { name: string, alert_rule_test?: Array<{ alertname: string, exp_alerts: unknown[] }> }

const rules = (parse(readFileSync(join(DIR, RULES), 'utf8')) as { groups: Array<{ rules: Rule[] }> }).groups.flatMap((group) => group.rules)
const alerts = rules.filter((rule) => rule.alert !== undefined)
const promtool = findTool('promtool', 'promtool rule tests')

/** Runs promtool in deploy/prometheus; its output on failure. */
function runPromtool (args: string[]): { status: number | null, output: string } {
  const result = spawnSync(promtool!, args, { cwd: DIR, encoding: 'utf8' })
  return { status: result.status, output: `${result.stdout}${result.stderr}` }
}

describe('deploy/prometheus: the rules with promtool', { skip: promtool === undefined }, () => {
  it('passes promtool check rules', () => {
    const { status, output } = runPromtool(['check', 'rules', RULES])
    assert.equal(status, 0, output)
    console.log(output.trim())
  })

  it('passes promtool test rules', () => {
    const { status, output } = runPromtool(['test', 'rules', TESTS])
    assert.equal(status, 0, output)
    console.log(output.trim())
  })
})

describe('deploy/prometheus: what every alert carries', () => {
  const tests = (parse(readFileSync(join(DIR, TESTS), 'utf8')) as { tests: RuleTest[] }).tests
  const cases = tests.flatMap((test) => test.alert_rule_test ?? [])

  it('has, for every alert, a case where it fires and one where it stays silent', () => {
    assert.ok(alerts.length >= 11)
    for (const { alert } of alerts) {
      const own = cases.filter((c) => c.alertname === alert)
      assert.ok(own.some((c) => c.exp_alerts.length > 0), `${alert}: a case where it fires`)
      assert.ok(own.some((c) => c.exp_alerts.length === 0), `${alert}: a case where it stays silent`)
    }
  })

  it('gives every alert a severity, a summary, a description and its runbook section', () => {
    const sections = new Set(readFileSync(join(ROOT, 'docs/runbook.md'), 'utf8').split('\n')
      .filter((line) => line.startsWith('## ')).map((line) => line.slice(3).trim().toLowerCase()))
    assert.deepEqual([...sections].sort(), alerts.map((rule) => rule.alert!.toLowerCase()).sort(), 'one runbook section per alert, no other')
    for (const { alert, labels, annotations } of alerts) {
      assert.match(labels?.severity ?? '', /^(page|ticket)$/, `${alert}: severity`)
      assert.ok((annotations?.summary ?? '') !== '', `${alert}: summary`)
      assert.ok((annotations?.description ?? '') !== '', `${alert}: description`)
      assert.equal(annotations?.runbook_url, `docs/runbook.md#${alert!.toLowerCase()}`, `${alert}: runbook_url`)
    }
  })
})
