/**
 * CSI volumes (`GET /v1/volumes?type=csi&namespace=*`): who holds each, and its plugin's health.
 * Paged and filtered by the server (usePagedList), in the list's own order (namespace, then ID).
 */
import { qs } from "../api.js";
import { usePagedList } from "../blocking.js";
import { Badge, Loaded, Page, Table } from "../components.js";
import { PagerControls } from "../pager.js";
import { plural, ratio } from "../format.js";
import { Link, paths } from "../router.js";
import type { CSIVolumeListStub } from "../types.js";

/** "1 writer, 2 readers"; "none" when nothing holds the volume. */
export function claimsText(readers: number, writers: number): string {
  const parts: string[] = [];
  if (writers > 0) parts.push(plural(writers, "writer"));
  if (readers > 0) parts.push(plural(readers, "reader"));
  return parts.length === 0 ? "none" : parts.join(", ");
}

export function VolumesPage() {
  const vols = usePagedList<CSIVolumeListStub>(`/v1/volumes${qs({ type: "csi", namespace: "*" })}`);
  return (
    <Page title="CSI volumes">
      <PagerControls list={vols} label="CSI volumes" example={'PluginID == "hostpath" and Schedulable'} />
      <Loaded
        live={vols.live}
        render={(list) => (
          <Table
            label="CSI volumes"
            rows={list}
            rowKey={(v) => `${v.Namespace}/${v.ID}`}
            empty="No CSI volumes. Create one with `berth volume create FILE`."
            cols={[
              ["ID", (v) => <Link to={paths.volume(v.ID, v.Namespace)}>{v.ID}</Link>],
              ["Name", (v) => v.Name],
              ["Namespace", (v) => v.Namespace],
              ["Plugin", (v) => <Link to={paths.plugin(v.PluginID)}>{v.PluginID}</Link>],
              ["Schedulable", (v) => <Badge value={v.Schedulable} />],
              ["Access mode", (v) => v.AccessMode || "–"],
              ["Claims", (v) => claimsText(v.CurrentReaders, v.CurrentWriters)],
              [
                "Controllers",
                (v) => (v.ControllerRequired ? ratio(v.ControllersHealthy, v.ControllersExpected) : "–"),
              ],
              ["Nodes", (v) => ratio(v.NodesHealthy, v.NodesExpected)],
            ]}
          />
        )}
      />
    </Page>
  );
}
