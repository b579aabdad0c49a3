/**
 * berth's web UI: a single page served by the agent at /ui (ui/build.mjs bundles it; the agent's
 * src/server/http/ui_static.ts serves it). It reads and acts only through the agent's HTTP API, as
 * the CLI does, with the ACL token the user entered.
 */
import "./style.css";
import { render } from "preact";
import { useEffect } from "preact/hooks";
import { getToken } from "./api.js";
import { Link, match, navigate, paths, usePath } from "./router.js";
import { AllocPage } from "./pages/alloc.js";
import { ClientPage, ClientsPage } from "./pages/clients.js";
import { DeploymentsPage } from "./pages/deployments.js";
import { EvaluationsPage } from "./pages/evaluations.js";
import { JobPage, JobsPage } from "./pages/jobs.js";
import { PluginPage, PluginsPage } from "./pages/plugins.js";
import { TokensPage } from "./pages/tokens.js";
import { VolumePage } from "./pages/volume.js";
import { VolumesPage } from "./pages/volumes.js";

const NAV: [string, string, string[]][] = [
  ["Jobs", paths.jobs(), ["/jobs", "/allocations"]],
  ["Clients", paths.clients(), ["/clients"]],
  ["Volumes", paths.volumes(), ["/storage/volumes"]],
  ["Plugins", paths.plugins(), ["/storage/plugins"]],
  ["Evaluations", paths.evaluations(), ["/evaluations"]],
  ["Token", paths.tokens(), ["/settings"]],
];

function App() {
  const path = usePath();
  const route = match(path);
  useEffect(() => {
    if (route.page === "redirect") navigate(route.to, true);
  }, [route.page === "redirect" ? route.to : ""]);
  return (
    <div class="shell">
      <nav class="nav" aria-label="Main">
        <div class="brand">berth</div>
        {NAV.map(([label, to, prefixes]) => (
          <Link key={to} to={to} class={prefixes.some((p) => path.startsWith(p)) ? "nav-on" : ""}>
            {label}
          </Link>
        ))}
        <div class="nav-foot muted">{getToken() === "" ? "anonymous" : "token set"}</div>
      </nav>
      <main class="main">
        <Current key={path} route={route} />
      </main>
    </div>
  );
}

function Current(props: { route: ReturnType<typeof match> }) {
  const r = props.route;
  switch (r.page) {
    case "jobs":
      return <JobsPage />;
    case "job":
      return <JobPage id={r.id} ns={r.ns} />;
    case "deployments":
      return <DeploymentsPage id={r.id} ns={r.ns} />;
    case "alloc":
      return <AllocPage id={r.id} task={r.task} />;
    case "clients":
      return <ClientsPage />;
    case "client":
      return <ClientPage id={r.id} />;
    case "volumes":
      return <VolumesPage />;
    case "volume":
      return <VolumePage id={r.id} ns={r.ns} />;
    case "plugins":
      return <PluginsPage />;
    case "plugin":
      return <PluginPage id={r.id} />;
    case "evaluations":
      return <EvaluationsPage />;
    case "tokens":
      return <TokensPage />;
    case "redirect":
      return null;
    case "not-found":
      return (
        <section class="page">
          <h1>Not found</h1>
          <p>
            No page at <code>/ui{r.path}</code>. <Link to={paths.jobs()}>Jobs</Link>
          </p>
        </section>
      );
  }
}

const root = document.getElementById("app");
if (root) render(<App />, root);
