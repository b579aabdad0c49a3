/**
 * The jobspecs `berth job init` writes: berth's own example, in Nomad's idioms, runnable on a
 * `berth agent -dev` as it is (exec driver, no image). The long one explains each stanza.
 */
export const EXAMPLE_JOB_SHORT = `job "example" {
  type = "service"

  group "web" {
    count = 1

    task "server" {
      driver = "exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo serving from $NOMAD_ALLOC_ID; exec sleep 3600"]
      }

      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`;

export const EXAMPLE_JOB = `# A service job: berth keeps "count" copies of each group running and replaces
# them when the job changes. Submit it with \`berth job run example.nomad.hcl\`.
job "example" {
  # Nodes in these datacenters may run it ("dc1" is the dev agent's).
  datacenters = ["dc1"]
  type        = "service"

  # How a new version replaces the old allocs: one at a time, each healthy for
  # 10s before the next. With a single-writer volume the old alloc is stopped
  # and its claim released before its replacement starts.
  update {
    max_parallel     = 1
    min_healthy_time = "10s"
    healthy_deadline = "3m"
    auto_revert      = false
    canary           = 0
  }

  group "web" {
    count = 1

    # Restart a failed task twice within 30 minutes, then fail the alloc.
    restart {
      attempts = 2
      interval = "30m"
      delay    = "15s"
      mode     = "fail"
    }

    # A CSI volume for the group's tasks (register or create it first, see
    # \`berth volume init\`):
    #
    # volume "data" {
    #   type            = "csi"
    #   source          = "demo"
    #   access_mode     = "single-node-writer"
    #   attachment_mode = "file-system"
    # }

    task "server" {
      driver = "exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo serving from $NOMAD_ALLOC_ID; exec sleep 3600"]
      }

      # volume_mount {
      #   volume      = "data"
      #   destination = "/srv/data"
      # }

      # CPU in MHz and memory in MiB, enforced with cgroups; the scheduler
      # places the alloc only on a node with this much to spare.
      resources {
        cpu    = 100
        memory = 64
      }
    }
  }
}
`;
