/**
 * The failover test of test/ha/failover.test.ts a second time, its instances on both nodes
 * directly in libpq's multi-host form (no target_session_attrs: read-write) instead of HAProxy,
 * as pg_auto_failover and Patroni without a proxy are reached. Ports of its own.
 */
process.env.HA_FAILOVER_VIA = 'multi-host'
process.env.HA_CLUSTER_BASE_PORT ??= '18750'
await import('./failover.test.js')
