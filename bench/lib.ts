/**
 * Shared by the benchmarks: run settings (lib/config.ts), statistics (lib/measure.ts), the processes
 * they run (lib/processes.ts), and the report (lib/report.ts).
 */
export * from './lib/config.js';
export * from './lib/measure.js';
export * from './lib/processes.js';
export * from './lib/report.js';
