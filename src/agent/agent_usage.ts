/** `berth agent -h`: every flag of the agent (parsed in options.ts). */
export const AGENT_USAGE = `Usage: berth agent [-dev | -server | -client -servers=ADDR | -config=FILE] [options]

  -dev                 server and client in one process, throwaway state (a temp data dir)
  -server              run the server (state, scheduler, HTTP API)
  -client              run a node agent
  -servers=ADDR[,..]   server addresses a client dials, HOST[:PORT] (port 4647 when absent, where a
                       server started from a config file takes node agents; default: this
                       agent's own server)
  -data-dir=DIR        where state lives (required without -dev)
  -http-addr=HOST:PORT the server's HTTP listen address (default 127.0.0.1:4646)
  -node-name=NAME      the node's name (default: the hostname)
  -client-intro-token=TOKEN
                       client: the node introduction token a new node registers with (berth node
                       intro create; or NOMAD_CLIENT_INTRO_TOKEN, or DATA_DIR/client/intro_token.jwt)
  -dc=NAME             the node's datacenter (default dc1)
  -node-class=CLASS    the node's class (default none)
  -log-level=LEVEL     trace, debug, info, warn or error (default info)
  -csi-plugin-wait=DUR how long an alloc waits for its CSI node plugin (e.g. 30s; default 5m)
  -csi-claim-retry=DUR how long a refused volume claim is retried (e.g. 10m; default 24h)
  -csi-call-timeout=DUR deadline of each node CSI call, e.g. NodeStageVolume (default 5m)
  -csi-volume-stats-interval=DUR
                       how often published volumes' usage and health are read (default 1m)
  -csi-unmount-escalate-after=DUR
                       how long a volume's node unmount may hang before berth detaches it lazily
                       and marks the volume as needing attention (default 10m; 0: never)
  -heartbeat-ttl=DUR   server: how long a node may miss heartbeats before it is down (default 30s)
  -failover-heartbeat-ttl=DUR
                       server: the grace every node gets when a server starts leading, before it
                       may be marked down (default 5m)
  -csi-controller-condition-interval=DUR
                       server: how often the volume condition of controllers that report one
                       (GET_VOLUME and VOLUME_CONDITION) is polled (default 1m)
  -csi-attachment-reconcile-interval=DUR
                       server: how often claims are reconciled with the attachments controllers
                       list (LIST_VOLUMES_PUBLISHED_NODES) (default 5m)
  -csi-attachment-reconcile-dry-run
                       server: the attachment reconciler reports what it would correct, calls nothing
  -csi-capacity-interval=DUR
                       server: how often controllers that advertise GET_CAPACITY are asked for the
                       capacity of each topology segment (default 1m; also after creates/deletes)
  -etcd-endpoints=URL[,..]
                       server: keep the state in etcd (client URLs, e.g. http://127.0.0.1:2379) so
                       several servers share it; default: the embedded SQLite file
  -config=FILE|DIR     agent config in Nomad's syntax (HCL or JSON; repeatable): data_dir, bind_addr,
                       ports, addresses, advertise, server, client { servers, server_join,
                       host_volume, meta, options, … }, plugin, limits, tls, acl, telemetry,
                       http_api_response_headers; Nomad's keys berth does not use are logged as
                       warnings; the flags win over it
  -host-volume=NAME:PATH[:ro]
                       a client host volume (repeatable); a relative PATH is made inside the data dir
  -meta=KEY=VALUE      node metadata, as \${meta.KEY} and in node status (repeatable)

raw_exec runs tasks unisolated as the agent's user, so it is disabled unless the config enables it
(plugin "raw_exec" { config { enabled = true } }) or -dev is given, as in Nomad.`;
