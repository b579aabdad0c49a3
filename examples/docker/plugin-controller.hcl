# berth's hostpath CSI plugin, controller half, as a docker task (as Nomad's CSI demos deploy a
# controller: a service job). Its volumes are directories in /var/lib/berth-hostpath on the host,
# shared with the node plugin (plugin-nodes.hcl). It is given no --node-id: a hostpath controller
# with one would create volumes reachable only from its own node (topology berth.io/hostname).
job "plugin-hostpath-controller" {
  type = "service"

  group "controller" {
    task "plugin" {
      driver = "docker"

      config {
        image   = "berth/hostpath:local"
        command = "/usr/bin/node"
        args = [
          "/berth/bin/berth",
          "csi-hostpath",
          "--mode=controller",
          "--endpoint=${CSI_ENDPOINT}",
          "--state-dir=/srv/hostpath",
        ]
        volumes = ["/var/lib/berth-hostpath:/srv/hostpath"]
      }

      csi_plugin {
        id        = "hostpath"
        type      = "controller"
        mount_dir = "/csi"
      }

      resources {
        cpu    = 100
        memory = 128
      }
    }
  }
}
