/**
 * The Grafana dashboard of deploy/grafana as the tests read it: its panels and every query,
 * which test/deploy/prometheus.test.ts evaluates in a real Prometheus.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { ROOT } from './constants.js'

export interface Target { refId: string, expr: string, datasource?: { type: string, uid: string } }
export interface Panel { id: number, type: string, title: string, datasource?: { type: string, uid: string }, targets?: Target[], gridPos: Record<string, number> }
export interface Dashboard {
  schemaVersion: number
  uid: string
  title: string
  templating: { list: Array<{ name: string, type: string, query: string }> }
  panels: Panel[]
}

export const DASHBOARD_FILE = join(ROOT, 'deploy/grafana/petstore.json')

export function readDashboard (): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard
}

/** Every query of the dashboard, as written: `panel title: expr` names them in messages. */
export function dashboardQueries (): Array<{ panel: string, expr: string }> {
  return readDashboard().panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })))
}
