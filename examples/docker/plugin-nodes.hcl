# berth's hostpath CSI plugin, node half, as a docker task on every node (as Nomad's CSI demos
# deploy node plugins: a system job). It mounts, so it runs privileged; the driver binds its
# socket dir and the node's staging/publish dir with rshared propagation, so the bind mounts it
# makes reach the host and the tasks using its volumes.
job "plugin-hostpath-nodes" {
  type = "system"

  group "nodes" {
    task "plugin" {
      driver = "docker"

      config {
        image   = "berth/hostpath:local"
        command = "/usr/bin/node"
        args = [
          "/berth/bin/berth",
          "csi-hostpath",
          "--mode=node",
          "--endpoint=${CSI_ENDPOINT}",
          "--node-id=${node.unique.id}",
          "--state-dir=/srv/hostpath",
        ]
        privileged = true
        volumes    = ["/var/lib/berth-hostpath:/srv/hostpath"]
      }

      csi_plugin {
        id        = "hostpath"
        type      = "node"
        mount_dir = "/csi"
      }

      resources {
        cpu    = 100
        memory = 128
      }
    }
  }
}
