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
    // Keys as teams use them (scopes, expiry, per-key limit, last use, rotation). A name holds a current
    // key and rotated-out ones: its UNIQUE goes, which in SQLite means rebuilding the table.
    version: 2,
    sql: `
      CREATE TABLE api_keys_v2 (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        key_hash TEXT NOT NULL UNIQUE,
        scopes TEXT NOT NULL,
        created_at TEXT NOT NULL,
        expires_at TEXT,
        lifetime_seconds INTEGER,
        rate_limit INTEGER,
        last_used_at TEXT,
        retires_at TEXT,
        revoked_at TEXT
      );
      INSERT INTO api_keys_v2 (id, name, key_hash, scopes, created_at, revoked_at)
        SELECT id, name, key_hash, 'pets:read,pets:write', created_at, revoked_at FROM api_keys;
      DROP TABLE api_keys;
      ALTER TABLE api_keys_v2 RENAME TO api_keys;
      -- One current key per name; rotated-out keys (retires_at set) wait out their grace beside it.
      CREATE UNIQUE INDEX api_keys_current_name ON api_keys (name) WHERE retires_at IS NULL;
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
