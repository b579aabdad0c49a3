# A secured single-machine agent: mutual TLS on the HTTP API and the agent RPC, and ACLs.
# Run it from the directory where `berth tls ca create` and `berth tls cert create -server` wrote
# their files (the paths below are relative to it), then `berth acl bootstrap` once:
#
#   berth agent -dev -config examples/hostpath/agent.hcl -config examples/secure/agent.hcl
#
# The CLI then needs the CA, a -cli certificate and the token: NOMAD_CACERT, NOMAD_CLIENT_CERT,
# NOMAD_CLIENT_KEY, NOMAD_ADDR=https://127.0.0.1:4646 and NOMAD_TOKEN (or their BERTH_* twins).
tls {
  http = true
  rpc  = true

  ca_file   = "nomad-agent-ca.pem"
  cert_file = "global-server-nomad.pem"
  key_file  = "global-server-nomad-key.pem"

  verify_server_hostname = true
  verify_https_client    = true
}

acl {
  enabled = true
}
