/**
 * Whether one of softdpu's promise adapters (`submitAsync`, a message iterator, a state or event wait)
 * settled a promise since a busy `run()` last looked. Its continuations run only once the driver's burst
 * has returned to the event loop, so a busy driver that did work yields at its next idle poll when this
 * is set, and otherwise only once the work pauses (pe-driver.ts spin). One flag per thread: an engine
 * that sees another engine's settle yields once more than it needed, nothing worse.
 */
export const settled = { any: false };
