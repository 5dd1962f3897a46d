import { Type, type Static, type TSchema, type TUnsafe } from '@sinclair/typebox'

/**
 * A reference to a named schema, `{ $ref: '<its $id>' }`, typed as the schema it names:
 * the OpenAPI document shows it as a reference to the component of that name.
 * @example const body = refTo(NewPet) // { $ref: 'NewPet' }, of type NewPet
 */
export function refTo<T extends TSchema> (schema: T): TUnsafe<Static<T>> {
  if (schema.$id === undefined) throw new TypeError('refTo: the schema has no $id')
  return Type.Unsafe<Static<T>>(Type.Ref(schema.$id))
}
