/**
 * The error of a spec or config file that cannot be read: its message names the file and the place
 * in it. It lives in this pure layer so the HCL 1 reader (and everything above it: api/'s spec
 * decoders, the server's ACL policies) throws one type callers can tell apart.
 */
export class SpecError extends Error {
  override readonly name = "SpecError";
}
