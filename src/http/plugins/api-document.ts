/**
 * The API's contract, no key needed: the OpenAPI document at /v1/openapi.json (and .yaml), generated
 * from the schemas of the routes added after this plugin, and the interactive docs page at /docs
 * that renders it.
 */
import swagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import swaggerUi, { type FastifySwaggerUiOptions } from '@fastify/swagger-ui'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { errorCatalogueMarkdown } from '../../schemas/error.js'
import { baseUrlOf } from '../public-url.js'

/** The service's name: the OpenAPI document's title, and the docs page's. */
const API_TITLE = 'Pet Store'

/** The OpenAPI document's description: what the API does, and every error code it answers with. */
const API_DESCRIPTION = 'A pet store catalogue: list animals, add an animal, fetch one (deprecated). ' +
  'Every call needs a bearer API key. Every error is the `Error` body, `{code, message, status}`; ' +
  'a client branches on `code`, never on `message`. The codes, with their status and meaning:\n\n' + errorCatalogueMarkdown()

/** The OpenAPI document's collector: it is generated from the schemas of the routes added after it. */
const SWAGGER_OPTIONS: FastifyDynamicSwaggerOptions = {
  // A component is named by its schema's $id (Pet, NewPet, …) rather than def-0, def-1.
  refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => typeof json.$id === 'string' ? json.$id : `def-${i}` },
  openapi: {
    openapi: '3.1.0',
    info: {
      title: API_TITLE,
      version: '1.0.0',
      license: { name: 'MIT', identifier: 'MIT' },
      description: API_DESCRIPTION
    },
    tags: [{ name: 'pets', description: 'The animals of the catalogue.' }],
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'The API key: `Authorization: Bearer <API key>`.' }
      }
    },
    security: [{ bearerAuth: [] }],
    // Paths are relative to the base address, which ends in /v1 (the spec's servers): /pets, not /v1/pets.
    servers: [{ url: '/v1' }]
  }
}

/**
 * The docs page's own script, run after the package's initializer has set its load handler and
 * before that handler calls SwaggerUIBundle: the call gets the API's document, /v1/openapi.json
 * (the package's page asks for its own copy, ./json), and a plugin that names a referenced model
 * where Swagger UI's OpenAPI 3.1 view says `object` or `any`, so `Pets` reads `array<Pet>`
 * (swagger-ui issues 9593 and 10794).
 */
const DOCS_PAGE_SCRIPT = `'use strict'
;(() => {
  const nameOf = (schema) => {
    const ref = schema?.$$ref ?? schema?.$ref
    return typeof ref === 'string' ? /#\\/components\\/schemas\\/([^/]+)$/.exec(ref)?.[1] : undefined
  }
  const namedModels = (system) => {
    const getType = (schema) => {
      const items = nameOf(schema?.items)
      return nameOf(schema) ?? (items === undefined ? system.fn.jsonSchema202012.getType(schema) : 'array<' + items + '>')
    }
    return {
      wrapComponents: {
        withJSONSchema202012SystemContext: (original) => (component, overrides = {}) =>
          original(component, { ...overrides, fn: { ...overrides.fn, getType } })
      }
    }
  }
  const bundle = window.SwaggerUIBundle
  window.SwaggerUIBundle = Object.assign((config) => bundle({
    ...config,
    url: new URL('../v1/openapi.json', config.url).href,
    plugins: [...config.plugins, namedModels]
  }), bundle)
})()
`

/** The docs page at /docs: Swagger UI from the package's own copy (no CDN), under the service's name, showing /v1/openapi.json. */
const DOCS_PAGE_OPTIONS: FastifySwaggerUiOptions = {
  routePrefix: '/docs',
  theme: {
    title: `${API_TITLE} API reference`,
    js: [{ filename: 'docs-page.js', content: DOCS_PAGE_SCRIPT }],
    // A model's name keeps its capitals where Swagger UI writes a type (`array<Pet>`).
    css: [{ filename: 'docs-page.css', content: '.swagger-ui .json-schema-2020-12__attribute--primary { text-transform: none; }' }]
  },
  staticCSP: true,
  // Nobody frames the docs page, not even this origin (as X-Frame-Options: DENY says).
  transformStaticCSP: (header) => header.replace("frame-ancestors 'self'", "frame-ancestors 'none'"),
  uiConfig: {
    // No top bar: no Fastify logo, no box to load another document.
    layout: 'BaseLayout',
    deepLinking: true,
    tryItOutEnabled: true,
    displayRequestDuration: true
  },
  uiHooks: {
    // The package's copies of the document lead to the one document.
    onRequest: async (request, reply) => {
      const format = /\/(json|yaml)$/.exec(request.routeOptions.url ?? '')?.[1]
      if (format !== undefined) return await reply.redirect(`../v1/openapi.${format}`)
    }
  }
}

export interface ApiDocumentOptions {
  publicBaseUrl: string | undefined
  stagingBaseUrl: string | undefined
}

/** The OpenAPI document with `servers` for this deployment (production, then staging). */
function openApiDocumentFor (app: FastifyInstance, request: FastifyRequest, options: ApiDocumentOptions): Record<string, unknown> {
  const servers = [{ url: baseUrlOf(request, options.publicBaseUrl), description: 'Production' }]
  if (options.stagingBaseUrl !== undefined) servers.push({ url: options.stagingBaseUrl, description: 'Staging' })
  return { ...app.swagger(), servers }
}

async function apiDocumentPlugin (app: FastifyInstance, options: ApiDocumentOptions): Promise<void> {
  await app.register(swagger, SWAGGER_OPTIONS)
  const hide = { hide: true }
  app.get('/v1/openapi.json', { schema: hide, config: { operation: 'openapi' } }, async (request) =>
    openApiDocumentFor(app, request, options))
  app.get('/v1/openapi.yaml', { schema: hide, config: { operation: 'openapi' } }, async (request, reply) => {
    // The YAML writer is loaded on the first request for it, not carried by every instance.
    const { stringify } = await import('yaml')
    reply.type('application/yaml')
    return stringify(openApiDocumentFor(app, request, options))
  })
  await app.register(swaggerUi, DOCS_PAGE_OPTIONS)
}

/** @example await app.register(apiDocument, { publicBaseUrl, stagingBaseUrl }) // after the catch-all, before the API's routes */
export const apiDocument = fp<ApiDocumentOptions>(apiDocumentPlugin, { name: 'petstore-api-document' })
