import type { Migration } from '../migrations.js'

/** SQLite schema, one entry per version; applied in order, never edited once released. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    sql: `
      CREATE TABLE pets (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        category_id INTEGER NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('available', 'pending', 'sold'))
      );
      -- listPets by status pages by id: one index seek whatever the depth.
      CREATE INDEX pets_status_id ON pets (status, id);

      CREATE TABLE api_keys (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        key_hash TEXT NOT NULL UNIQUE,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      );

      CREATE TABLE idempotency_keys (
        scope TEXT NOT NULL,
        key TEXT NOT NULL,
        fingerprint TEXT NOT NULL,
        pet_id INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (scope, key)
      );
      CREATE INDEX idempotency_keys_created_at ON idempotency_keys (created_at);

      CREATE TABLE secrets (
        name TEXT PRIMARY KEY,
        value BLOB NOT NULL
      );
    `
  },
  {
    version: 3,
    sql: `
      -- One row per checked backup (petstore backup): the metrics listener exports the newest.
      CREATE TABLE backups (
        id INTEGER PRIMARY KEY,
        taken_at TEXT NOT NULL,
        file TEXT NOT NULL,
        bytes INTEGER NOT NULL,
        animals INTEGER NOT NULL
      );
    `
  }
]
