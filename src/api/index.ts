/** berth's HTTP API client, its DTOs and the spec parsers, for the CLI and the UI. */
export { ApiClient } from "./client.js";
export type { ApiClientOptions, ApiTransport, ListOptions } from "./transport.js";
export { execInAlloc, streamLogs, type ExecResult, type LogQuery } from "./alloc_stream.js";
export { API_ERROR_CODES, ApiError, ConnectionError, hasErrorCode, type ApiErrorCode } from "./errors.js";
export { DEFAULT_ADDRESS, resolveAddress, resolveConnection, type Connection } from "./address.js";
export type { ConnectionFlags } from "./address.js";
export type { ApiTlsOptions } from "./tls.js";
export { parseJobSpec, parseVolumeSpec, parseDuration, parseSize, SpecError } from "./specs/index.js";
export type { HclInputs } from "./specs/index.js";
export type * from "./types.js";
