/** The scopes of API keys, and which each operation needs (its OpenAPI security requirement and its check). */

/** `pets:read`: listPets and getPet; `pets:write`: createPet. */
export const API_KEY_SCOPES = ['pets:read', 'pets:write'] as const
export type ApiKeyScope = typeof API_KEY_SCOPES[number]

/** @example OPERATION_SCOPES.createPet // 'pets:write' */
export const OPERATION_SCOPES = { listPets: 'pets:read', getPet: 'pets:read', createPet: 'pets:write' } as const satisfies Record<string, ApiKeyScope>

/** The OpenAPI security requirement of an operation: the bearer key, with its scope as the role (OpenAPI 3.1). */
export function securityOf (operation: keyof typeof OPERATION_SCOPES): Array<Record<string, string[]>> {
  return [{ bearerAuth: [OPERATION_SCOPES[operation]] }]
}
