/**
 * The shapes of the animals interface, written once: they validate requests,
 * serialize responses, type the code and the client, and make the OpenAPI document.
 */
import { Type, type Static } from '@sinclair/typebox'
import { DecimalInteger, Int64, StringEnum, Text } from './kinds.js'
import { refTo } from './ref.js'

export const PET_STATUSES = ['available', 'pending', 'sold'] as const

export const PetStatus = StringEnum(PET_STATUSES, { $id: 'PetStatus', description: 'Availability of the animal.' })
export type PetStatus = Static<typeof PetStatus>

const name = Text({
  minLength: 1,
  maxLength: 255,
  description: "The animal's name: 1 to 255 Unicode code points, not only white space, no control character.",
  examples: ['Rex']
})
const categoryId = Int64({
  minimum: 1,
  description: 'Identifier of the category the animal belongs to (1 to 9223372036854775807, exact).',
  examples: [3]
})

export const NewPet = Type.Object({
  name,
  categoryId,
  // The default is said in words: code generators (openapi-typescript) make a field with a `default` required.
  status: Type.Optional(refTo(PetStatus))
}, {
  $id: 'NewPet',
  additionalProperties: false,
  description: 'An animal to add. `id` is assigned by the service and cannot be sent; `status` is `available` when omitted.',
  examples: [{ name: 'Rex', categoryId: 3, status: 'available' }]
})
export type NewPet = Static<typeof NewPet>

export const Pet = Type.Object({
  id: Int64({ minimum: 1, description: 'Unique identifier assigned by the service on creation.', examples: [42] }),
  name,
  categoryId,
  status: refTo(PetStatus)
}, {
  $id: 'Pet',
  additionalProperties: false,
  description: 'An animal of the catalogue.',
  examples: [{ id: 42, name: 'Rex', categoryId: 3, status: 'available' }]
})
export type Pet = Static<typeof Pet>

export const Pets = Type.Array(refTo(Pet), {
  $id: 'Pets',
  description: 'Animals in ascending id order.',
  examples: [[{ id: 42, name: 'Rex', categoryId: 3, status: 'available' }, { id: 43, name: 'Tom', categoryId: 1, status: 'sold' }]]
})

export const LIMIT_DEFAULT = 20

export const ListPetsQuery = Type.Object({
  limit: Type.Optional(DecimalInteger({ minimum: 1, maximum: 100, default: LIMIT_DEFAULT, description: 'Maximum number of animals returned.' })),
  status: Type.Optional(StringEnum(PET_STATUSES, { description: 'Restricts results to animals with that status.' })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Where the page starts: copied from the `Link: rel="next"` header of the previous page. Opaque.' }))
})
export type ListPetsQuery = Static<typeof ListPetsQuery>

export const PetParams = Type.Object({
  petId: DecimalInteger({ minimum: 1, description: 'Identifier of the animal to fetch.' })
})
export type PetParams = Static<typeof PetParams>
