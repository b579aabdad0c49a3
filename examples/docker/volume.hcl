# A volume created through the hostpath plugin: `berth volume create examples/hostpath/volume.hcl`.
id        = "demo"
name      = "demo"
type      = "csi"
plugin_id = "hostpath"

capacity_min = "10MiB"
capacity_max = "1GiB"

capability {
  access_mode     = "single-node-writer"
  attachment_mode = "file-system"
}
