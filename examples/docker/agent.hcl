# Agent config for the docker quick start:
#   berth agent -dev -config examples/docker/agent.hcl
# The docker driver talks to the Docker Engine on its socket (Nomad's default endpoint). CSI
# plugins run privileged (they mount), and the hostpath plugin's controller and node tasks share
# one host directory for their volumes, so privileged containers and host-path volumes are
# allowed here, as Nomad's CSI demos configure their clients.
plugin "docker" {
  config {
    endpoint         = "unix:///var/run/docker.sock"
    allow_privileged = true
    volumes {
      enabled = true
    }
  }
}
