import { Type, type Static } from '@sinclair/typebox'
import { ERROR_STATUS } from '../domain/errors.js'
import { StringEnum } from './kinds.js'

/** The spec's Error body; `code` is one of the catalogue in docs/errors.md. */
export const ErrorBody = Type.Object({
  code: StringEnum(Object.keys(ERROR_STATUS) as Array<keyof typeof ERROR_STATUS>, { description: 'Machine-readable error code (docs/errors.md).' }),
  message: Type.String({ description: 'Human-readable description: the offending field and the rule it breaks.' }),
  status: Type.Integer({ description: 'The HTTP status code of the response.' })
}, { $id: 'Error', additionalProperties: false, description: 'The body of every error answer: a code of the catalogue, a message naming the field and its rule, the HTTP status.', examples: [{ code: 'validation_failed', message: 'limit: must be an integer from 1 to 100', status: 400 }] })
export type ErrorBody = Static<typeof ErrorBody>
