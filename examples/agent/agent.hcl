# A single-node cluster in Nomad's agent configuration language: `berth agent -config agent.hcl`
# runs a server and a node agent with no other flag (flags given as well win over this file).
# data_dir must be absolute; berth creates it.
name       = "node-1"
datacenter = "dc1"
data_dir   = "/var/lib/berth"
bind_addr  = "127.0.0.1"   # berth's default; Nomad's is 0.0.0.0
log_level  = "INFO"

ports {
  http = 4646   # the HTTP API and the node agents' RPC
  rpc  = 4647   # node agents' RPC too, where Nomad clients dial (`servers = ["host"]` means host:4647)
}

server {
  enabled          = true
  bootstrap_expect = 1
}

client {
  enabled = true

  host_volume "hostpath-data" {
    path = "hostpath-data"   # relative: made inside data_dir
  }

  meta {
    rack = "r1"
  }
}

# raw_exec runs tasks unisolated as the agent's user (root). It is disabled unless enabled here, as
# in Nomad (`berth agent -dev` enables it).
# plugin "raw_exec" {
#   config {
#     enabled = true
#   }
# }
