/**
 * Objects of a CustomResourceDefinition checked as the API server checks them: the version's
 * openAPIV3Schema as JSON Schema (ajv), with the server's structural rules (an unknown field is
 * refused, as kubectl's strict field validation refuses it), and the schema's CEL rules
 * (`x-kubernetes-validations`), which no JSON Schema validator runs, listed for a test to hold
 * assertions of its own against.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Ajv, type ErrorObject } from 'ajv'
import { parse } from 'yaml'
import { ROOT } from './constants.js'

export const CRD_DIR = join(ROOT, 'test/fixtures/crds')

type Schema = Record<string, unknown> & { properties?: Record<string, Schema>, items?: Schema, additionalProperties?: Schema | boolean }

interface CustomResourceDefinition {
  spec: { group: string, names: { kind: string }, versions: Array<{ name: string, schema: { openAPIV3Schema: Schema } }> }
}

/** One CEL rule of a schema, where it applies: `path` runs from the object's root, `[]` for each item of a list. */
export interface CelRule { path: string[], rule: string, message: string }

/** A CRD's version, read from test/fixtures/crds: its schema, a validator and its CEL rules. */
export interface CrdVersion {
  apiVersion: string
  kind: string
  /** The errors of `object` against the schema, as `path: message`; empty when valid. */
  validate: (object: unknown) => string[]
  celRules: CelRule[]
}

/**
 * The schema as the API server applies it: fields a schema lists are the only ones allowed (unless
 * x-kubernetes-preserve-unknown-fields says otherwise), int-or-string is either, formats are the
 * server's own (int32 and int64 only bound numbers, which `type: integer` already checks).
 */
function structural (schema: Schema): Schema {
  const out: Schema = {}
  for (const [key, value] of Object.entries(schema)) {
    if (key.startsWith('x-kubernetes-') || key === 'format' || key === 'description') continue
    if (key === 'properties') out.properties = Object.fromEntries(Object.entries(value as Record<string, Schema>).map(([name, sub]) => [name, structural(sub)]))
    else if (key === 'items' || (key === 'additionalProperties' && typeof value === 'object')) out[key] = structural(value as Schema)
    else out[key] = value
  }
  if (schema['x-kubernetes-int-or-string'] === true) {
    delete out.type
    out.anyOf = [{ type: 'integer' }, { type: 'string' }]
  }
  if (out.properties !== undefined && out.additionalProperties === undefined && schema['x-kubernetes-preserve-unknown-fields'] !== true) {
    out.additionalProperties = false
  }
  return out
}

function celRulesOf (schema: Schema, path: string[] = []): CelRule[] {
  const own = ((schema['x-kubernetes-validations'] ?? []) as Array<{ rule: string, message: string }>).map(({ rule, message }) => ({ path, rule, message }))
  const below = [
    ...Object.entries(schema.properties ?? {}).flatMap(([name, sub]) => celRulesOf(sub, [...path, name])),
    ...(schema.items === undefined ? [] : celRulesOf(schema.items, [...path, '[]'])),
    ...(typeof schema.additionalProperties === 'object' ? celRulesOf(schema.additionalProperties, [...path, '{}']) : [])
  ]
  return [...own, ...below]
}

const describeError = (error: ErrorObject): string => `${error.instancePath === '' ? '/' : error.instancePath}: ${error.message ?? error.keyword}${error.keyword === 'additionalProperties' ? ` (${String((error.params as { additionalProperty: string }).additionalProperty)})` : ''}`

/**
 * @example const cluster = readCrd('cloudnative-pg/postgresql.cnpg.io_clusters.yaml', 'v1'); assert.deepEqual(cluster.validate(object), [])
 */
export function readCrd (file: string, version: string): CrdVersion {
  const crd = parse(readFileSync(join(CRD_DIR, file), 'utf8')) as CustomResourceDefinition
  const served = crd.spec.versions.find((candidate) => candidate.name === version)
  if (served === undefined) throw new Error(`${file} serves no version ${version}`)
  const schema = served.schema.openAPIV3Schema
  const validator = new Ajv({ allErrors: true, strict: false }).compile(structural(schema))
  return {
    apiVersion: `${crd.spec.group}/${version}`,
    kind: crd.spec.names.kind,
    validate: (object) => validator(object) ? [] : (validator.errors ?? []).map(describeError),
    celRules: celRulesOf(schema)
  }
}

/** The values at `path` in `object` (`[]` each item of a list, `{}` each value of a map); none where it is absent. */
export function valuesAt (object: unknown, path: string[]): unknown[] {
  if (path.length === 0) return object === undefined ? [] : [object]
  if (object === null || typeof object !== 'object') return []
  const [head, ...rest] = path
  if (head === '[]') return Array.isArray(object) ? object.flatMap((item) => valuesAt(item, rest)) : []
  if (head === '{}') return Object.values(object).flatMap((value) => valuesAt(value, rest))
  return valuesAt((object as Record<string, unknown>)[head!], rest)
}
