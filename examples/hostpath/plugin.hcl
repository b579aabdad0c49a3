# berth's reference CSI plugin as a job: one monolith (controller + node) instance per node it
# lands on. Volumes are directories under the task's state dir; mounts are real bind mounts.
job "plugin" {
  type = "service"

  group "plugin" {
    count = 1

    task "plugin" {
      driver = "exec"

      config {
        command = "berth"
        args    = ["csi-hostpath", "--node-id=${node.unique.id}", "--state-dir=${NOMAD_TASK_DIR}/hostpath"]
      }

      csi_plugin {
        id        = "hostpath"
        type      = "monolith"
        mount_dir = "/csi"
      }
    }
  }
}
