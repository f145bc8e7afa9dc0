// Checks docker/kubernetes offline: every overlay is rendered by docker/kubernetes/render.sh
// (kubectl kustomize), then
//   1. every object is validated against the Kubernetes OpenAPI schema (npm kubernetes-models) or
//      the prometheus-operator CRD schema (@kubernetes-models/prometheus-operator): types, formats,
//      required fields;
//   2. every object is type-checked by TypeScript against the same models' types, which rejects
//      fields the schema does not know (a misspelt field is silently dropped by a cluster);
//   3. the cross-field rules no schema can state (Rules below).
// With --self-test, broken copies of the rendered objects must each fail the check they break, so
// the checks are known to bite.
//
// Usage: node check_manifests.mjs REPO_ROOT [--self-test]   (run from its npm folder; see
// CMakeLists.txt). Exit 0 when everything holds; prints one line per problem otherwise.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse, parseAllDocuments } from "yaml";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = process.argv[2];
const selfTest = process.argv.includes("--self-test");
if (!root) {
  console.error("usage: node check_manifests.mjs REPO_ROOT [--self-test]");
  process.exit(2);
}

// The modules the prober's image has (docker/blackbox.Dockerfile copies this file).
const blackboxModules = parse(readFileSync(path.join(root, "docker/blackbox.yml"), "utf8")).modules;

// The model module of an object's apiVersion and kind.
function modelModule(apiVersion, kind) {
  if (apiVersion === "monitoring.coreos.com/v1") {
    return `@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/${kind}`;
  }
  return `kubernetes-models/${apiVersion}/${kind}`;
}

function render(overlay) {
  const out = execFileSync("bash", [path.join(root, "docker/kubernetes/render.sh"), overlay], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  return parseAllDocuments(out).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${overlay}: YAML: ${doc.errors[0].message}`);
    return doc.toJS();
  });
}

const describe = (o) => `${o.kind}/${o.metadata?.name}`;

// 1. Schema validation at run time.
async function schemaProblems(objects) {
  const problems = [];
  for (const o of objects) {
    let Model;
    try {
      Model = (await import(modelModule(o.apiVersion, o.kind)))[o.kind];
    } catch {
      problems.push(`${describe(o)}: no schema for ${o.apiVersion} ${o.kind}`);
      continue;
    }
    try {
      new Model(o).validate();
    } catch (e) {
      problems.push(`${describe(o)}: schema: ${e.message}`);
    }
  }
  return problems;
}

// 2. Unknown fields: each object as an object literal passed to its model's constructor; TypeScript
// reports properties the type does not have.
function typeProblems(objects) {
  const dir = mkdtempSync(path.join(here, ".typecheck-"));
  try {
    const lines = [];
    objects.forEach((o, i) => {
      lines.push(`import { ${o.kind} as M${i} } from "${modelModule(o.apiVersion, o.kind)}";`);
    });
    objects.forEach((o, i) => {
      // The constructor sets apiVersion and kind itself (a wrong pair has no model to import).
      const { apiVersion, kind, ...rest } = o;
      lines.push(`// ${describe(o)}`, `new M${i}(${JSON.stringify(rest, null, 1)});`);
    });
    const file = path.join(dir, "objects.ts");
    writeFileSync(file, lines.join("\n") + "\n");
    const tsc = path.join(here, "node_modules/typescript/bin/tsc");
    try {
      execFileSync(
        process.execPath,
        [tsc, "--noEmit", "--strict", "--skipLibCheck", "--module", "nodenext",
          "--moduleResolution", "nodenext", "--target", "es2022", file],
        { encoding: "utf8", cwd: here });
      return [];
    } catch (e) {
      const text = String(e.stdout || e.message);
      const source = readFileSync(file, "utf8").split("\n");
      return text.split("\n").filter((l) => l.includes("error TS")).map((l) => {
        // Name the object: the nearest "// Kind/name" comment above the reported line.
        const line = Number((l.match(/\((\d+),\d+\)/) || [])[1] || 0);
        let owner = "?";
        for (let k = line - 1; k >= 0; --k) {
          if (source[k]?.startsWith("// ")) {
            owner = source[k].slice(3);
            break;
          }
        }
        return `${owner}: types: ${l.replace(/^.*error TS\d+: /, "")}`;
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// Kubernetes quantities in base units (cores, bytes).
function quantity(q) {
  const m = String(q).match(/^([0-9.]+)(m|k|M|G|T|Ki|Mi|Gi|Ti)?$/);
  if (!m) throw new Error(`not a quantity: ${q}`);
  const unit = { m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, Ki: 2 ** 10, Mi: 2 ** 20,
    Gi: 2 ** 30, Ti: 2 ** 40 }[m[2]] ?? 1;
  return Number(m[1]) * unit;
}

const matches = (selector, labels) =>
  Object.entries(selector || {}).every(([k, v]) => labels?.[k] === v) &&
  Object.keys(selector || {}).length > 0;

function flags(container) {
  const out = {};
  for (const a of container.args || []) {
    const m = a.match(/^--([a-z_0-9]+)=(.*)$/);
    if (m) out[m[1]] = m[2];
  }
  return out;
}

// Memory the server may use besides its caches and budgets (code, threads, allocator slack).
const kProcessBaseBytes = 128 * 2 ** 20;

// JSON with object keys sorted (kustomize reorders them).
function canonical(value) {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

// Whether a container of a pod spec sees FILE inside a mounted Secret.
function inMountedSecret(pod, container, file) {
  const mount = (container.volumeMounts || [])
    .find((m) => file.startsWith(m.mountPath.replace(/\/?$/, "/")));
  const volume = mount && (pod.volumes || []).find((v) => v.name === mount.name);
  return volume?.secret !== undefined;
}

// 3. The rules between fields and objects.
function ruleProblems(objects, alertsYaml) {
  const problems = [];
  const p = (o, msg) => problems.push(`${describe(o)}: ${msg}`);
  const of = (kind) => objects.filter((o) => o.kind === kind);
  const deployments = of("Deployment");
  const services = of("Service");
  const podsOf = (selector) =>
    deployments.filter((d) => matches(selector, d.spec.template.metadata.labels));

  for (const d of deployments) {
    if (!matches(d.spec.selector.matchLabels, d.spec.template.metadata.labels)) {
      p(d, "spec.selector does not select its own pod template");
    }
    const pod = d.spec.template.spec;
    if (pod.securityContext?.runAsNonRoot !== true) p(d, "pods must run as non-root");
    for (const c of pod.containers) {
      if (c.securityContext?.readOnlyRootFilesystem !== true) {
        p(d, `container ${c.name}: root filesystem must be read-only`);
      }
      for (const r of ["cpu", "memory"]) {
        const req = c.resources?.requests?.[r];
        const lim = c.resources?.limits?.[r];
        if (req === undefined || lim === undefined) {
          p(d, `container ${c.name}: needs ${r} request and limit`);
        } else if (quantity(lim) < quantity(req)) {
          p(d, `container ${c.name}: ${r} limit ${lim} < request ${req}`);
        }
      }
    }
  }

  // The server Deployment(s): the container running worldgen-server.
  for (const d of deployments) {
    const c = d.spec.template.spec.containers.find((x) => /worldgen-server|\/server/.test(x.image));
    if (!c) continue;
    const f = flags(c);
    // The rules compare these flags with other fields, so the manifest states them rather than
    // leaning on server/main.cc's defaults (which a copy here could drift from).
    const compared = ["port", "metrics_port", "blend_threads", "shutdown_drain_delay_seconds",
      "shutdown_grace_seconds", "cache_bytes", "chunk_cache_bytes", "max_reply_bytes",
      "grpc_memory_bytes", "fair_share"];
    const unset = compared.filter((k) => f[k] === undefined);
    if (unset.length > 0) {
      p(d, `set ${unset.map((k) => `--${k}`).join(", ")} in args: the rules compare them`);
      continue;
    }
    const port = Number(f.port);
    const grpcPort = (c.ports || []).find((x) => x.name === "grpc");
    if (!grpcPort || grpcPort.containerPort !== port) {
      p(d, `containerPort "grpc" must be --port (${port})`);
    }
    const metricsPort = (c.ports || []).find((x) => x.name === "metrics");
    if (!metricsPort || metricsPort.containerPort !== Number(f.metrics_port)) {
      p(d, `containerPort "metrics" must be --metrics_port`);
    }
    for (const probe of ["startupProbe", "readinessProbe", "livenessProbe"]) {
      if (c[probe]?.grpc?.port !== port) p(d, `${probe} must be a grpc probe on --port (${port})`);
    }
    const drain = Number(f.shutdown_drain_delay_seconds);
    const grace = Number(f.shutdown_grace_seconds);
    const period = d.spec.template.spec.terminationGracePeriodSeconds ?? 30;  // Kubernetes' default
    if (period < drain + grace) {
      p(d, `terminationGracePeriodSeconds ${period} < drain delay ${drain} + grace ${grace}`);
    }
    const budget = ["cache_bytes", "chunk_cache_bytes", "max_reply_bytes", "grpc_memory_bytes"]
      .map((k) => Number(f[k]))
      .reduce((a, b) => a + b, 0) + kProcessBaseBytes;
    const memory = quantity(c.resources?.limits?.memory ?? 0);
    if (memory < budget) {
      p(d, `memory limit ${c.resources?.limits?.memory} < caches + reply budget + gRPC quota + ` +
        `128Mi = ${(budget / 2 ** 20).toFixed(0)}Mi`);
    }
    const cpu = quantity(c.resources?.limits?.cpu ?? 0);
    const threads = Number(f.blend_threads);
    if (threads !== 0 && threads !== Math.ceil(cpu)) {
      p(d, `--blend_threads=${threads} but the CPU limit gives ${Math.ceil(cpu)}`);
    }
    if (f.world_config) {
      const mount = (c.volumeMounts || []).find((m) => m.mountPath === f.world_config);
      const volume = mount && d.spec.template.spec.volumes.find((v) => v.name === mount.name);
      const map = volume?.configMap?.name;
      if (!map || !of("ConfigMap").some((m) => m.metadata.name === map)) {
        p(d, `--world_config=${f.world_config} is not a mounted ConfigMap of this render`);
      }
    }
  }

  for (const s of services) {
    const targets = podsOf(s.spec.selector);
    if (targets.length !== 1) {
      p(s, `selector matches ${targets.length} Deployments' pods, want 1`);
      continue;
    }
    const names = targets[0].spec.template.spec.containers.flatMap((c) => c.ports || [])
      .map((x) => x.name);
    for (const port of s.spec.ports) {
      if (typeof port.targetPort === "string" && !names.includes(port.targetPort)) {
        p(s, `targetPort ${port.targetPort} is no container port of ${describe(targets[0])}`);
      }
    }
  }
  for (const b of of("PodDisruptionBudget")) {
    if (podsOf(b.spec.selector.matchLabels).length !== 1) p(b, "selects no Deployment's pods");
  }
  for (const h of of("HorizontalPodAutoscaler")) {
    const ref = h.spec.scaleTargetRef;
    if (!deployments.some((d) => d.metadata.name === ref.name && ref.kind === "Deployment")) {
      p(h, `scaleTargetRef ${ref.kind}/${ref.name} is not in this render`);
    }
    if (h.spec.minReplicas > h.spec.maxReplicas) p(h, "minReplicas > maxReplicas");
    // A count in the Deployment would reset the autoscaler's on every apply.
    const target = deployments.find((d) => d.metadata.name === ref.name);
    if (target && target.spec.replicas !== undefined) {
      p(target, `sets spec.replicas while ${describe(h)} scales it`);
    }
  }
  for (const m of of("ServiceMonitor")) {
    const svc = services.filter((s) => matches(m.spec.selector.matchLabels, s.metadata.labels));
    if (svc.length === 0) p(m, "selects no Service");
    for (const e of m.spec.endpoints) {
      if (!svc.every((s) => s.spec.ports.some((x) => x.name === e.port))) {
        p(m, `port ${e.port} is not a port of every selected Service`);
      }
    }
  }
  // The balancer follows a headless Service of the server's pods, on its gRPC port.
  for (const d of deployments) {
    for (const c of d.spec.template.spec.containers) {
      const dns = (c.env || []).find((e) => e.name === "WORLDGEN_UPSTREAM_DNS")?.value;
      if (!dns) continue;
      const [host, port] = dns.split(":");
      const s = services.find((x) => x.metadata.name === host.split(".")[0]);
      if (!s || s.spec.clusterIP !== "None") {
        p(d, `WORLDGEN_UPSTREAM_DNS ${dns} is not a headless Service`);
      } else if (!s.spec.ports.some((x) => x.port === Number(port))) {
        p(d, `WORLDGEN_UPSTREAM_DNS port ${port} is not a port of ${describe(s)}`);
      }
    }
  }
  // --fair_share=forwarded_for trusts the last X-Forwarded-For entry, which the balancer appends,
  // and client_header the x-worldgen-client header, which it sets: a NetworkPolicy must isolate
  // the server's pods, and every ingress rule that opens their gRPC
  // port (or all ports) must admit the balancer's pods alone (a Deployment following the server
  // through WORLDGEN_UPSTREAM_DNS).
  const trusted = { forwarded_for: "X-Forwarded-For", client_header: "x-worldgen-client" };
  const balancers = deployments.filter((d) => d.spec.template.spec.containers
    .some((c) => (c.env || []).some((e) => e.name === "WORLDGEN_UPSTREAM_DNS")));
  for (const d of deployments) {
    const c = d.spec.template.spec.containers.find((x) => /worldgen-server|\/server/.test(x.image));
    if (!c || !(flags(c).fair_share in trusted)) continue;
    const fairShare = flags(c).fair_share;
    const labels = d.spec.template.metadata.labels;
    const grpcPort = Number(flags(c).port);
    const policies = of("NetworkPolicy").filter((n) => matches(n.spec.podSelector.matchLabels ?? {},
      labels) && (n.spec.policyTypes ?? ["Ingress"]).includes("Ingress"));
    if (policies.length === 0) {
      p(d, `--fair_share=${fairShare} needs a NetworkPolicy that lets only the balancer reach ` +
        `the gRPC port (a client reaching a replica could name itself in ${trusted[fairShare]})`);
      continue;
    }
    for (const n of policies) {
      for (const rule of n.spec.ingress ?? []) {
        const opensGrpc = !rule.ports || rule.ports.some((x) => x.port === "grpc" ||
          x.port === grpcPort);
        if (!opensGrpc) continue;
        const onlyBalancer = (rule.from ?? []).length > 0 && rule.from.every((peer) => {
          if (!peer.podSelector || peer.namespaceSelector || peer.ipBlock) return false;
          const admitted = deployments.filter((x) => matches(peer.podSelector.matchLabels ?? {},
            x.spec.template.metadata.labels));
          return admitted.length > 0 && admitted.every((x) => balancers.includes(x));
        });
        if (!onlyBalancer) {
          p(n, `an ingress rule admits gRPC to ${describe(d)}'s pods from others than the ` +
            `balancer, whose ${trusted[fairShare]} --fair_share=${fairShare} trusts`);
        }
      }
    }
  }
  // TLS and API keys at the balancer (render-config.sh's WORLDGEN_TLS_*, WORLDGEN_API_KEYS):
  // certificate and key together, a client CA only with them, every file in a mounted Secret (a
  // path nothing mounts fails only when nginx starts in the cluster).
  for (const d of deployments) {
    const spec = d.spec.template.spec;
    for (const c of spec.containers) {
      const env = Object.fromEntries((c.env || []).map((e) => [e.name, e.value]));
      const files = ["WORLDGEN_TLS_CERT", "WORLDGEN_TLS_KEY", "WORLDGEN_TLS_CLIENT_CA",
        "WORLDGEN_API_KEYS"].filter((k) => env[k]);
      if (files.length === 0) continue;
      if (!env.WORLDGEN_TLS_CERT !== !env.WORLDGEN_TLS_KEY) {
        p(d, "WORLDGEN_TLS_CERT and WORLDGEN_TLS_KEY go together");
      }
      if (env.WORLDGEN_TLS_CLIENT_CA && !env.WORLDGEN_TLS_CERT) {
        p(d, "WORLDGEN_TLS_CLIENT_CA needs WORLDGEN_TLS_CERT and WORLDGEN_TLS_KEY");
      }
      for (const k of files) {
        if (!inMountedSecret(spec, c, env[k])) p(d, `${k} ${env[k]} is not in a mounted Secret`);
      }
    }
  }
  // The endpoint probe (docker/blackbox.yml run by the prober Deployment): the job the alerts
  // read, a module the prober has, a prober URL Prometheus can resolve from another namespace,
  // targets that are Services of this render, and the module's TLS files in a mounted Secret.
  for (const probe of of("Probe")) {
    const spec = probe.spec;
    if (!alertsYaml.includes(`job="${spec.jobName}"`)) {
      p(probe, `jobName ${spec.jobName} is not the job docker/alerts.yml reads`);
    }
    const module = blackboxModules[spec.module];
    if (!module) p(probe, `module ${spec.module} is not in docker/blackbox.yml`);
    const service = (host, port) => {
      const s = services.find((x) => x.metadata.name === host.split(".")[0]);
      return s && s.spec.ports.some((x) => x.port === Number(port)) ? s : undefined;
    };
    const [proberHost, proberPort] = (spec.prober?.url ?? "").split(":");
    const namespace = probe.metadata.namespace ?? "default";
    const proberService = service(proberHost, proberPort);
    if (!proberService || !new RegExp(`^[a-z0-9-]+\\.${namespace}\\.svc(\\.|$)`).test(proberHost)) {
      p(probe, `prober.url ${spec.prober?.url} is not SERVICE.${namespace}.svc:PORT of a Service ` +
        "of this render (Prometheus resolves it from its own namespace)");
      continue;
    }
    for (const target of spec.targets?.staticConfig?.static ?? []) {
      const [host, port] = target.split(":");
      if (!service(host, port)) p(probe, `target ${target} is not a Service port of this render`);
    }
    const files = Object.values(module?.grpc?.tls_config ?? {});
    for (const d of podsOf(proberService.spec.selector)) {
      const pod = d.spec.template.spec;
      for (const file of files.filter((f) => typeof f === "string" && f.startsWith("/"))) {
        if (!pod.containers.some((c) => inMountedSecret(pod, c, file))) {
          p(d, `module ${spec.module}'s ${file} is not in a mounted Secret`);
        }
      }
    }
  }
  // Generated, not copied: the PrometheusRule holds exactly docker/alerts.yml's groups.
  const rules = of("PrometheusRule");
  if (rules.length !== 1) {
    problems.push(`want one PrometheusRule, have ${rules.length}`);
  } else if (canonical(rules[0].spec.groups) !== canonical(parse(alertsYaml).groups)) {
    p(rules[0], "groups differ from docker/alerts.yml");
  }
  // Generated, not copied: the dashboard's ConfigMap holds docker/grafana/worldgen.json.
  const dashboards = of("ConfigMap").filter((m) => m.metadata.labels?.grafana_dashboard === "1");
  if (dashboards.length !== 1) {
    problems.push(`want one ConfigMap labelled grafana_dashboard, have ${dashboards.length}`);
  } else if (canonical(JSON.parse(dashboards[0].data?.["worldgen.json"] ?? "null")) !==
             canonical(dashboardJson)) {
    p(dashboards[0], "worldgen.json differs from docker/grafana/worldgen.json");
  }
  return problems;
}

async function check(objects, alertsYaml) {
  return [...(await schemaProblems(objects)), ...typeProblems(objects),
    ...ruleProblems(objects, alertsYaml)];
}

// Broken copies of a render, each with the words its problem must contain (those that apply to it:
// the TLS ones to a render with TLS).
function mutations(objects) {
  const server = (os) => os.find((o) => o.kind === "Deployment" && o.metadata.name === "worldgen");
  const container = (os) => server(os).spec.template.spec.containers[0];
  const balancer = (os) => os.find((o) => o.kind === "Deployment" &&
    o.metadata.name === "worldgen-balancer").spec.template.spec.containers[0];
  const envVar = (os, name) => os.filter((o) => o.kind === "Deployment")
    .flatMap((d) => d.spec.template.spec.containers).flatMap((c) => c.env || [])
    .find((e) => e.name === name);
  const tls = envVar(objects, "WORLDGEN_TLS_KEY") !== undefined;
  const keys = envVar(objects, "WORLDGEN_API_KEYS") !== undefined;
  return [
    ["readiness probe on another port", (os) => { container(os).readinessProbe.grpc.port = 50052; },
      "readinessProbe"],
    ["grace period shorter than drain + grace",
      (os) => { server(os).spec.template.spec.terminationGracePeriodSeconds = 15; },
      "terminationGracePeriodSeconds"],
    ["memory limit below the request", (os) => { container(os).resources.limits.memory = "64Mi"; },
      "memory limit"],
    ["memory limit below the flags' budget", (os) => {
      container(os).resources.limits.memory = "512Mi";
      container(os).resources.requests.memory = "512Mi";
    }, "caches + reply budget"],
    ["a compared flag left to the server's default",
      (os) => { container(os).args = container(os).args.filter((a) => !a.startsWith("--port=")); },
      "--port"],
    ["misspelt field", (os) => { server(os).spec.replicaz = 2; }, "replicaz"],
    ["a replica count beside the autoscaler", (os) => { server(os).spec.replicas = 3; },
      "sets spec.replicas while"],
    ["replicas' gRPC port open to the cluster under --fair_share=client_header", (os) => {
      os.find((o) => o.kind === "NetworkPolicy").spec.ingress.push({ ports: [{ port: "grpc" }] });
    }, "admits gRPC"],
    ["no NetworkPolicy under --fair_share=client_header", (os) => {
      os.splice(os.findIndex((o) => o.kind === "NetworkPolicy"), 1);
    }, "needs a NetworkPolicy"],
    ["no NetworkPolicy under --fair_share=forwarded_for", (os) => {
      const args = container(os).args;
      args[args.indexOf("--fair_share=client_header")] = "--fair_share=forwarded_for";
      os.splice(os.findIndex((o) => o.kind === "NetworkPolicy"), 1);
    }, "name itself in X-Forwarded-For"],
    ["port as a string", (os) => { container(os).ports[0].containerPort = "grpc"; }, "schema"],
    ["Service selecting nothing",
      (os) => { os.find((o) => o.kind === "Service").spec.selector = { app: "nothing" }; },
      "selector matches 0"],
    ["dashboard edited in the cluster", (os) => {
      const m = os.find((o) => o.metadata.name === "worldgen-dashboard");
      m.data["worldgen.json"] = m.data["worldgen.json"].replace('"worldgen"', '"worldgen2"');
    }, "differs from docker/grafana/worldgen.json"],
    ["alert rule edited by hand",
      (os) => { os.find((o) => o.kind === "PrometheusRule").spec.groups[0].rules.pop(); },
      "alerts.yml"],
    ["Probe module the prober lacks",
      (os) => { os.find((o) => o.kind === "Probe").spec.module = "worldgen_typo"; },
      "module worldgen_typo is not in docker/blackbox.yml"],
    ["Probe's prober by a name Prometheus cannot resolve",
      (os) => { os.find((o) => o.kind === "Probe").spec.prober.url = "worldgen-prober:9115"; },
      "prober.url worldgen-prober:9115"],
    ["Probe target on a port no Service has", (os) => {
      os.find((o) => o.kind === "Probe").spec.targets.staticConfig.static = ["worldgen-balancer:50052"];
    }, "target worldgen-balancer:50052"],
    ...(tls ? [
      ["prober's client certificate not mounted", (os) => {
        const d = os.find((o) => o.kind === "Deployment" && o.metadata.name === "worldgen-prober");
        d.spec.template.spec.containers[0].volumeMounts = [];
      }, "/etc/worldgen-probe/tls.crt is not in a mounted Secret"],
      ["TLS key outside the mounted Secret",
        (os) => { envVar(os, "WORLDGEN_TLS_KEY").value = "/etc/nginx/tls.key"; },
        "WORLDGEN_TLS_KEY /etc/nginx/tls.key is not in a mounted Secret"],
      ["TLS certificate without its key", (os) => {
        const c = balancer(os);
        c.env = c.env.filter((e) => e.name !== "WORLDGEN_TLS_KEY");
      }, "go together"],
    ] : []),
    ...(keys ? [
      ["API keys file outside the mounted Secret",
        (os) => { envVar(os, "WORLDGEN_API_KEYS").value = "/etc/nginx/api-keys.map"; },
        "WORLDGEN_API_KEYS /etc/nginx/api-keys.map is not in a mounted Secret"],
      ["API keys Secret not mounted", (os) => {
        const c = balancer(os);
        c.volumeMounts = c.volumeMounts.filter((m) => m.name !== "api-keys");
      }, "WORLDGEN_API_KEYS /etc/worldgen-keys/api-keys.map is not in a mounted Secret"],
    ] : []),
  ].map(([name, apply, want]) => {
    const copy = structuredClone(objects);
    apply(copy);
    return { name, objects: copy, want };
  });
}

const alertsYaml = readFileSync(path.join(root, "docker/alerts.yml"), "utf8");
const dashboardJson = JSON.parse(readFileSync(path.join(root, "docker/grafana/worldgen.json"),
  "utf8"));
const overlays = readdirSync(path.join(root, "docker/kubernetes/overlays"));
let failed = false;
for (const overlay of overlays) {
  const objects = render(overlay);
  const problems = await check(objects, alertsYaml);
  for (const line of problems) console.log(`${overlay}: ${line}`);
  failed ||= problems.length > 0;
  console.log(`kubernetes: overlay ${overlay}: ${objects.length} objects (` +
    `${[...new Set(objects.map((o) => o.kind))].join(", ")}), ${problems.length} problems`);
  if (!selfTest) continue;
  for (const m of mutations(objects)) {
    const found = await check(m.objects, alertsYaml);
    const caught = found.some((l) => l.includes(m.want));
    console.log(`self-test ${overlay}: ${m.name}: ${caught ? "caught" : "NOT CAUGHT"}` +
      (caught ? ` (${found.find((l) => l.includes(m.want))})` : ""));
    failed ||= !caught;
  }
}
process.exit(failed ? 1 : 0);
