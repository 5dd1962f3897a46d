/**
 * The schemas the OpenAPI document names as components (`#/components/schemas/Pet`, …):
 * each has an `$id`, is registered once with Fastify (`app.addSchema`) and referenced by
 * `$ref` from the routes, so code generators in any language produce named models.
 */
import type { TSchema } from '@sinclair/typebox'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import { ErrorBody } from './error.js'
import { NewPet, Pet, PetStatus, Pets } from './pets.js'

export const COMPONENTS: readonly TSchema[] = [PetStatus, Pet, Pets, NewPet, ErrorBody]

/**
 * The compiled check of a schema, the references it holds resolved against the components.
 * @example const checkPet = compileSchema(Pet); checkPet.Check({ id: 1, name: 'Rex', categoryId: 3, status: 'sold' }) // true
 */
export function compileSchema<T extends TSchema> (schema: T): TypeCheck<T> {
  return TypeCompiler.Compile(schema, [...COMPONENTS])
}
