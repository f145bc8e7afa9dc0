// Checks docker/grafana/worldgen.json, the Grafana dashboard shipped with the deployment:
//   1. types: the dashboard as an object literal of @grafana/schema's Dashboard type (Grafana's own
//      generated schema types), type-checked by TypeScript, which rejects unknown and misspelt
//      fields and values of the wrong type;
//   2. rules no type states: unique panel ids, every panel and query on the dashboard's Prometheus
//      variable, panels inside the 24-column grid and not overlapping, every $variable in a query
//      defined by the dashboard or Grafana;
//   3. with --prometheus=URL, every query evaluated there with the variables at "all": Prometheus
//      must accept it and answer at least one series (so each names metrics and labels the
//      deployment exports).
// With --self-test, broken copies of the dashboard must each fail the check they break.
//
// Usage: node check_dashboard.mjs REPO_ROOT [--prometheus=URL] [--self-test]   (run from its npm
// folder; see CMakeLists.txt and dashboard_test.sh). Exit 0 when everything holds.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = process.argv[2];
const prometheus = process.argv.find((a) => a.startsWith("--prometheus="))?.slice(13);
const selfTest = process.argv.includes("--self-test");
if (!root) {
  console.error("usage: node check_dashboard.mjs REPO_ROOT [--prometheus=URL] [--self-test]");
  process.exit(2);
}
const file = path.join(root, "docker/grafana/worldgen.json");
const dashboard = JSON.parse(readFileSync(file, "utf8"));

// Grafana's built-in variables a query may use besides the dashboard's own.
const kBuiltIn = new Set(["__rate_interval", "__interval", "__range"]);
// What each variable stands for when the queries are run here: "all" for the dashboard's own
// (their allValue), a window covering the test's load for the intervals.
function substitute(expr, variables) {
  return expr.replace(/\$(\w+)/g, (_, name) => {
    if (kBuiltIn.has(name)) return "1m";
    return variables.find((v) => v.name === name)?.allValue ?? `$${name}`;
  });
}

const panelsOf = (d) => (d.panels || []).flatMap((p) => [p, ...(p.panels || [])]);
const queriesOf = (d) =>
  panelsOf(d).flatMap((p) => (p.targets || []).map((t) => ({ panel: p.title, expr: t.expr })));

// 1. Types.
function typeProblems(d) {
  const dir = mkdtempSync(path.join(here, ".typecheck-"));
  try {
    const source = path.join(dir, "dashboard.ts");
    writeFileSync(source, 'import type { Dashboard } from "@grafana/schema";\n' +
      `export const dashboard: Dashboard = ${JSON.stringify(d, null, 1)};\n`);
    try {
      execFileSync(process.execPath,
        [path.join(here, "node_modules/typescript/bin/tsc"), "--noEmit", "--strict",
          "--skipLibCheck", "--module", "nodenext", "--moduleResolution", "nodenext",
          "--target", "es2022", source],
        { encoding: "utf8", cwd: here });
      return [];
    } catch (e) {
      return String(e.stdout || e.message).split("\n").filter((l) => l.includes("error TS"))
        .map((l) => `types: ${l.replace(/^.*error TS\d+: /, "")}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// 2. Rules.
function ruleProblems(d) {
  const problems = [];
  const variables = d.templating?.list || [];
  const source = variables.find((v) => v.type === "datasource" && v.query === "prometheus");
  if (!source) return ["no Prometheus datasource variable"];
  const uid = `\${${source.name}}`;
  const ids = new Set();
  const placed = [];
  for (const p of panelsOf(d)) {
    if (ids.has(p.id)) problems.push(`panel "${p.title}": id ${p.id} used twice`);
    ids.add(p.id);
    const g = p.gridPos;
    if (!g || g.x < 0 || g.w < 1 || g.x + g.w > 24 || g.h < 1) {
      problems.push(`panel "${p.title}": gridPos ${JSON.stringify(g)} is outside the 24 columns`);
    } else {
      for (const q of placed) {
        const h = q.gridPos;
        if (g.x < h.x + h.w && h.x < g.x + g.w && g.y < h.y + h.h && h.y < g.y + g.h) {
          problems.push(`panel "${p.title}" overlaps panel "${q.title}"`);
        }
      }
      placed.push(p);
    }
    if (p.type === "row") continue;
    const sources = [p.datasource, ...(p.targets || []).map((t) => t.datasource)];
    if (!sources.every((s) => s?.type === "prometheus" && s?.uid === uid)) {
      problems.push(`panel "${p.title}": a datasource other than ${uid}`);
    }
    if (!(p.targets || []).length) problems.push(`panel "${p.title}": no query`);
  }
  for (const { panel, expr } of queriesOf(d)) {
    for (const [, name] of expr.matchAll(/\$(\w+)/g)) {
      if (!kBuiltIn.has(name) && !variables.some((v) => v.name === name)) {
        problems.push(`panel "${panel}": $${name} is no variable of the dashboard`);
      }
    }
  }
  return problems;
}

// 3. Live queries.
async function liveProblems(d) {
  const problems = [];
  const variables = d.templating?.list || [];
  for (const { panel, expr } of queriesOf(d)) {
    const query = substitute(expr, variables);
    const response = await fetch(`${prometheus}/api/v1/query?query=${encodeURIComponent(query)}`);
    const body = await response.json();
    if (body.status !== "success") {
      problems.push(`panel "${panel}": Prometheus refused ${query}: ${body.error}`);
    } else if (body.data.result.length === 0) {
      problems.push(`panel "${panel}": no series for ${query}`);
    }
  }
  return problems;
}

async function check(d) {
  return [...typeProblems(d), ...ruleProblems(d), ...(prometheus ? await liveProblems(d) : [])];
}

// Broken copies, each with the words its problem must contain.
function mutations(d) {
  const first = (c) => panelsOf(c).find((p) => p.type !== "row");
  return [
    ["misspelt field", (c) => { first(c).titel = "x"; }, "titel"],
    ["overlapping panels", (c) => { panelsOf(c)[2].gridPos = { ...first(c).gridPos }; },
      "overlaps"],
    ["another datasource", (c) => { first(c).datasource = { type: "prometheus", uid: "x" }; },
      "datasource other than"],
    ["undefined variable", (c) => { first(c).targets[0].expr += ' unless on() vector($region)'; },
      "$region is no variable"],
    ...(prometheus ? [
      ["misspelt metric", (c) => {
        const t = panelsOf(c).find((p) => p.title === "Calls in flight, game servers and blend threads").targets[0];
        t.expr = t.expr.replace("worldgen_inflight_calls", "worldgen_inflight_call");
      }, "no series"],
      ["query Prometheus cannot parse", (c) => { first(c).targets[0].expr += " +"; }, "refused"],
    ] : []),
  ].map(([name, apply, want]) => {
    const copy = structuredClone(d);
    apply(copy);
    return { name, copy, want };
  });
}

const problems = await check(dashboard);
for (const line of problems) console.log(`dashboard: ${line}`);
let failed = problems.length > 0;
console.log(`dashboard: ${panelsOf(dashboard).length} panels, ${queriesOf(dashboard).length} ` +
  `queries${prometheus ? " (evaluated live)" : ""}, ${problems.length} problems`);
if (selfTest) {
  for (const m of mutations(dashboard)) {
    const found = await check(m.copy);
    const hit = found.find((l) => l.includes(m.want));
    console.log(`self-test: ${m.name}: ${hit ? `caught (${hit})` : "NOT CAUGHT"}`);
    failed ||= !hit;
  }
}
process.exit(failed ? 1 : 0);
