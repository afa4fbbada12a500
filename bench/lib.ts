/**
 * Shared by the benchmarks: run settings (lib/config.ts), statistics (lib/measure.ts), allocation and GC
 * per message (lib/alloc.ts), the processes
 * they run (lib/processes.ts), the report (lib/report.ts), and the C library's programs (lib/capi.ts).
 */
export * from './lib/alloc.js';
export * from './lib/capi.js';
export * from './lib/config.js';
export * from './lib/measure.js';
export * from './lib/processes.js';
export * from './lib/report.js';
