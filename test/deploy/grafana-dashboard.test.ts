import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { dashboardQueries, readDashboard } from '../support/dashboard.js'

// Panel types Grafana ships itself: no plugin to install.
const CORE_PANELS = new Set(['row', 'timeseries', 'stat', 'table', 'gauge', 'bargauge', 'text'])
// Grafana's own syntax for the variable, not a template literal.
const DATASOURCE = { type: 'prometheus', uid: '$' + '{datasource}' }

describe('deploy/grafana/petstore.json', () => {
  const dashboard = readDashboard()
  const panels = dashboard.panels.filter((panel) => panel.type !== 'row')
  const queries = dashboardQueries().map((query) => query.expr)

  it('is a dashboard of schemaVersion 38 or newer, core panel types only', () => {
    assert.ok(dashboard.schemaVersion >= 38, `schemaVersion ${dashboard.schemaVersion}`)
    assert.equal(dashboard.uid, 'petstore')
    for (const panel of dashboard.panels) assert.ok(CORE_PANELS.has(panel.type), `${panel.title}: ${panel.type} is a core panel type`)
    assert.equal(new Set(dashboard.panels.map((panel) => panel.id)).size, dashboard.panels.length, 'panel ids are unique')
    for (const panel of dashboard.panels) assert.ok(['x', 'y', 'w', 'h'].every((key) => typeof panel.gridPos[key] === 'number'), `${panel.title}: gridPos`)
  })

  it('reads Prometheus through a datasource variable, in every panel and query', () => {
    const variable = dashboard.templating.list.find((item) => item.type === 'datasource')
    assert.deepEqual({ name: variable?.name, query: variable?.query }, { name: 'datasource', query: 'prometheus' })
    for (const panel of panels) {
      assert.deepEqual(panel.datasource, DATASOURCE, panel.title)
      assert.ok((panel.targets ?? []).length > 0, `${panel.title}: a query`)
      for (const target of panel.targets ?? []) assert.deepEqual(target.datasource, panel.datasource, `${panel.title} ${target.refId}`)
    }
  })

  it('shows per operation the rate, errors and p50/p99; saturation and refusals; authentication; keys; the last backup', () => {
    const shown = (pattern: RegExp, what: string): void => assert.ok(queries.some((query) => pattern.test(query)), what)
    shown(/^sum by \(operation\) \(rate\(petstore_http_requests_total\{operation=~"listPets\|createPet\|getPet"\}/, 'rate per operation')
    shown(/sum by \(operation\) \(rate\(petstore_http_requests_total\{[^}]*status=~"5\.\."/, 'errors per operation')
    shown(/histogram_quantile\(0\.5, sum by \(operation, le\)/, 'p50 per operation')
    shown(/histogram_quantile\(0\.99, sum by \(operation, le\)/, 'p99 per operation')
    shown(/petstore_nodejs_eventloop_lag_p99_seconds/, 'event loop lag')
    shown(/petstore_process_resident_memory_bytes/, 'memory')
    shown(/petstore_store_pool_waiting_clients/, 'the pool')
    shown(/sum by \(reason\) \(rate\(petstore_http_refusals_total/, 'refusals for load, by reason')
    shown(/status="401"/, '401s')
    shown(/petstore_auth_throttled_total/, 'throttled forged keys')
    shown(/status="429"/, '429s')
    shown(/petstore_api_key_expiry_timestamp_seconds/, 'keys expiring')
    shown(/petstore_backup_last_success_timestamp_seconds/, 'the last backup')
    shown(/petstore:slo_errors:ratio_rate/, 'the availability SLI')
    shown(/petstore:slo_slow:ratio_rate/, 'the latency SLI')
  })

  it('uses no Grafana variable in a query, so that Prometheus evaluates each as it is written', () => {
    for (const query of queries) assert.doesNotMatch(query, /\$/, query)
  })
})
