# A batch job that claims the "demo" volume and writes a file into it.
job "writer" {
  type = "batch"

  group "writer" {
    volume "data" {
      type            = "csi"
      source          = "demo"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
    }

    task "writer" {
      driver = "exec"

      config {
        command = "/bin/sh"
        args    = ["-c", "echo hello > /data/hello.txt"]
      }

      volume_mount {
        volume      = "data"
        destination = "/data"
      }
    }
  }
}
