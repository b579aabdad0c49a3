# A consumer in a container: writes the time into the CSI volume every second.
job "writer" {
  group "writer" {
    volume "data" {
      type            = "csi"
      source          = "demo"
      access_mode     = "single-node-writer"
      attachment_mode = "file-system"
    }

    task "writer" {
      driver = "docker"

      config {
        image   = "berth/hostpath:local"
        command = "/bin/sh"
        args    = ["-c", "while :; do date >> /data/log.txt; sleep 1; done"]
      }

      volume_mount {
        volume      = "data"
        destination = "/data"
      }
    }
  }
}
