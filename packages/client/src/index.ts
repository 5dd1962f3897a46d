/**
 * The Pet Store client: `import { PetstoreClient } from '@petstore/client'`.
 * @example
 * const client = new PetstoreClient({ baseUrl: 'http://127.0.0.1:8080/v1', apiKey })
 * const pet = await client.createPet({ name: 'Rex', categoryId: 3 })
 */
export { PetstoreClient, type PetstoreClientOptions, type ListPetsOptions, type NextPageOptions, type PetPage, type CreatePetOptions, type RetryClock, type NewPet, type Pet, type PetStatus, type Int64 } from './petstore-client.js'
export { PetstoreError, isPetstoreError, type PetstoreErrorCode, type PetstoreErrorOptions } from './petstore-error.js'
