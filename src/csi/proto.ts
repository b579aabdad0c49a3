/**
 * Loads proto/csi.proto at runtime (no generated code, nothing copied into dist/). The loader
 * options are part of the contract every file in src/csi relies on:
 * - keepCase: field names stay snake_case exactly as on the wire, so conversion code names them
 *   the way the spec does;
 * - longs: Number: int64 byte counts fit comfortably below 2^53;
 * - enums: String: capabilities and access modes read as their spec names;
 * - defaults: true: absent scalars/maps/repeated fields decode to ""/0/{}/[] and absent messages
 *   to null, so a plugin that omits an optional field never yields `undefined` surprises;
 * - oneofs: true: the set member of a oneof is named in a virtual field (e.g. `access_type`).
 * google/protobuf/{wrappers,timestamp}.proto are built into protobufjs, so no includeDirs needed.
 */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
};

/** Finds `<package root>/proto/csi.proto` walking up from this module (src/csi or dist/src/csi). */
export function csiProtoPath(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, "proto", "csi.proto");
    if (fs.existsSync(candidate)) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error("proto/csi.proto not found above " + fileURLToPath(import.meta.url));
    dir = parent;
  }
}

export interface CsiGrpc {
  Identity: grpc.ServiceClientConstructor;
  Controller: grpc.ServiceClientConstructor;
  Node: grpc.ServiceClientConstructor;
}

let cached: CsiGrpc | undefined;

/** The csi.v1 service constructors (each has `.service`, the definition a server registers). */
export function loadCsi(): CsiGrpc {
  if (cached) return cached;
  const def = protoLoader.loadSync(csiProtoPath(), LOADER_OPTIONS);
  const root = grpc.loadPackageDefinition(def);
  const v1 = (root.csi as grpc.GrpcObject | undefined)?.v1 as grpc.GrpcObject | undefined;
  if (!v1) throw new Error("csi.proto does not declare package csi.v1");
  const service = (name: string): grpc.ServiceClientConstructor => {
    const ctor = v1[name];
    if (typeof ctor !== "function" || !("service" in ctor)) {
      throw new Error(`csi.proto does not declare service csi.v1.${name}`);
    }
    return ctor;
  };
  cached = { Identity: service("Identity"), Controller: service("Controller"), Node: service("Node") };
  return cached;
}

/** `unix:///abs/path`, `unix:/abs/path` or a bare absolute path → the socket path. */
export function socketPathOf(endpoint: string): string {
  let p = endpoint;
  if (p.startsWith("unix://")) p = p.slice("unix://".length);
  else if (p.startsWith("unix:")) p = p.slice("unix:".length);
  if (!path.isAbsolute(p)) throw new Error(`CSI endpoint must be an absolute unix socket path: ${endpoint}`);
  return p;
}

/** The grpc-js target for a socket path. */
export function grpcTarget(endpoint: string): string {
  return "unix://" + socketPathOf(endpoint);
}
