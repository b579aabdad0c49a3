/** Test helpers for asserting that nothing is left mounted under a test's temp dir. */
export { mountsUnder } from "../../src/internal/mountinfo.js";
