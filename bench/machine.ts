/**
 * The facts of the machine a report was measured on: without them a figure
 * cannot be compared with another.
 */
import { readFileSync } from 'node:fs'
import { availableParallelism, cpus, loadavg, release, totalmem } from 'node:os'

export interface MachineFacts {
  cpuModel: string
  cores: number
  memoryGiB: number
  kernel: string
  node: string
  /** The 1-minute load average when the bench began: a busy neighbour shows here. */
  loadAverage: number
  date: string
}

function cpuModel (): string {
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))
    if (match !== null) return match[1]!.trim()
  } catch {}
  return cpus()[0]?.model ?? 'unknown'
}

/**
 * Reads the facts now.
 * @example machineFacts().cpuModel // 'AMD EPYC'
 */
export function machineFacts (): MachineFacts {
  return {
    cpuModel: cpuModel(),
    cores: availableParallelism(),
    memoryGiB: Math.round(totalmem() / 2 ** 30 * 10) / 10,
    kernel: `${process.platform} ${release()}`,
    node: process.version,
    loadAverage: loadavg()[0]!,
    date: new Date().toISOString()
  }
}
