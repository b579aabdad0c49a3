/** The fake CSI plugin for tests: see plugin.ts. */
export * from "./behaviour.js";
export * from "./plugin.js";
export { FakeState, type FakeVolume } from "./state.js";
