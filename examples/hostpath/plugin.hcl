# berth's reference CSI plugin as a job: one monolith (controller + node) instance per node it
# lands on. Volumes are directories in the node's "hostpath-data" host volume (see agent.hcl), so
# they survive a plugin update or a purge of this job; mounts are real bind mounts.
job "plugin" {
  type = "service"

  group "plugin" {
    count = 1

    volume "storage" {
      type   = "host"
      source = "hostpath-data"
    }

    task "plugin" {
      driver = "exec"

      config {
        command = "berth"
        args = [
          "csi-hostpath",
          "--endpoint=${CSI_ENDPOINT}",
          "--node-id=${node.unique.id}",
          "--state-dir=/srv/hostpath",
        ]
      }

      volume_mount {
        volume      = "storage"
        destination = "/srv/hostpath"
      }

      csi_plugin {
        id        = "hostpath"
        type      = "monolith"
        mount_dir = "/csi"
      }
    }
  }
}
