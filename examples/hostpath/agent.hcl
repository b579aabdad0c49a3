# Agent config for the quick start: `berth agent -dev -config examples/hostpath/agent.hcl`.
# The hostpath plugin keeps its volumes in this host volume, so they outlive the plugin's allocs:
# stopping, purging or updating the plugin job loses no data. A relative path lies in the agent's
# data dir (created there); on a real node give an absolute path to an existing directory.
client {
  host_volume "hostpath-data" {
    path      = "hostpath-data"
    read_only = false
  }
}
