// Browser test of `skillrunner view`: drives the system Chromium through
// playwright-core over a running server (--url) and a static export
// (--export), at 1400 and 800 px, against the history tests/browser/test.sh
// makes from tests/browser/fixture (two nights of evals/drift.yaml).
//
//   node view_test.mjs --url http://127.0.0.1:PORT/ --export DIR \
//     --newer RUN_ID --older RUN_ID [--versions RUN_ID --versions-summary FILE] --shots DIR
//     [--chromium /usr/bin/chromium]
//
// Each check prints "ok" or "FAIL" with its reason; the exit status is 1 when
// any failed. No browser is downloaded: the system one is launched.
import assert from "node:assert/strict";
import { mkdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { chromium } from "playwright-core";

const WIDTHS = [1400, 800];
const SUITE = "drift";
const SKILL = "drift_sentiment";
// What the fixture's second night does to the first (see fixture/evals/drift.yaml).
const FIXTURE = { cases: 20, passToFail: 7, failToPass: 1, scriptCase: "c11" };
const SCRIPT = "<script>window.__pwned=1</script>";
const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync"];

const failures = [];
// axe-core (npm), run in each page: the WCAG 2 A and AA rules (design.md §12.3).
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
const AXE_TAGS = ["wcag2a", "wcag2aa"];

function options() {
  const { values } = parseArgs({
    options: {
      url: { type: "string" }, export: { type: "string" }, newer: { type: "string" }, older: { type: "string" },
      versions: { type: "string" }, "versions-summary": { type: "string" },
      shots: { type: "string", default: "view-shots" }, chromium: { type: "string", default: "/usr/bin/chromium" },
    },
  });
  if ((!values.url && !values.export) || !values.newer || !values.older) {
    console.error("usage: view_test.mjs [--url URL] [--export DIR] --newer RUN_ID --older RUN_ID [--shots DIR]");
    process.exit(2);
  }
  return values;
}

async function check(name, body) {
  try {
    await body();
    console.log(`ok   ${name}`);
  } catch (error) {
    failures.push(name);
    console.log(`FAIL ${name}\n     ${String(error?.message ?? error).split("\n").join("\n     ")}`);
  }
}

// ---- what a page must be: loaded, clean, no overflow ----

function watch(page) {
  const problems = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console error: ${message.text()} (${message.location().url})`);
  });
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("requestfailed", (request) => problems.push(`request failed: ${request.url()} (${request.failure()?.errorText})`));
  page.on("response", (response) => {
    if (response.status() >= 400) problems.push(`HTTP ${response.status()} for ${response.url()}`);
  });
  return problems;
}

async function ready(page) {
  await page.waitForSelector("#app[data-state=ready], #app[data-state=error]", { timeout: 10000 });
  if ((await page.getAttribute("#app", "data-state")) !== "ready") {
    throw new Error(`the page shows an error: ${(await page.textContent("#app")).trim()}`);
  }
}

async function settle(page, problems) {
  const width = page.viewportSize().width;
  const scroll = await page.evaluate(() => document.documentElement.scrollWidth);
  assert.ok(scroll <= width + 1, `horizontal overflow at ${width} px: scrollWidth ${scroll}`);
  assert.equal(await page.evaluate(() => typeof window.__pwned), "undefined", "a script from the data ran");
  assert.equal(await page.locator("#app script").count(), 0, "a <script> element was made from the data");
  assert.deepEqual(problems, [], "console errors, page errors or failed requests");
}

// No violation of the WCAG 2 A and AA rules axe-core checks (keyboard, contrast, names, links told
// apart without colour), listed by rule with the nodes it found.
async function accessible(page) {
  await page.evaluate(AXE_SOURCE);  // evaluated by the browser's debugger protocol: no CSP applies to it
  const violations = await page.evaluate(async (tags) => {
    const result = await window.axe.run(document, { runOnly: { type: "tag", values: tags }, resultTypes: ["violations"] });
    return result.violations.map((v) => `${v.id} (${v.impact}) on ${v.nodes.length} node(s): ${v.help}; first: ${v.nodes[0]?.target?.join(" ")}`);
  }, AXE_TAGS);
  assert.deepEqual(violations, [], "axe-core found WCAG 2 A/AA violations");
}

// Opens url, screenshots it, runs inspect(page) and the page checks.
async function pageCheck(ctx, name, url, inspect) {
  await check(`${ctx.mode} ${name} page at ${ctx.width} px`, async () => {
    const page = await ctx.context.newPage();
    const problems = watch(page);
    try {
      await page.goto(url);
      await ready(page);
      const prefix = ctx.mode === "export" ? "export-" : "";
      await page.screenshot({ path: path.join(ctx.shots, `${prefix}${name}-${ctx.width}.png`), fullPage: true });
      await inspect(page);
      await settle(page, problems);
      await accessible(page);
    } finally {
      await page.close();
    }
  });
}

// ---- where pages are ----

// The export's file name of a string (the contract's E): UTF-8 bytes,
// [A-Za-z0-9.-] kept, every other byte _XX.
function exportName(text) {
  return [...Buffer.from(String(text), "utf8")]
    .map((byte) => (/[A-Za-z0-9.-]/.test(String.fromCharCode(byte)) ? String.fromCharCode(byte) : `_${byte.toString(16).toUpperCase().padStart(2, "0")}`))
    .join("");
}

function locations(ctx) {
  const enc = encodeURIComponent;
  if (ctx.mode === "served") {
    const at = (p) => new URL(p, ctx.origin).href;
    return {
      index: ctx.url, rollouts: at("/rollouts"), suite: (s) => at(`/suites/${enc(s)}`), run: (r) => at(`/runs/${enc(r)}`),
      compare: (a, b) => at(`/compare/${enc(a)}/${enc(b)}`), versions: (r) => at(`/versions/${enc(r)}`),
      case: (s, k, c) => at(`/cases/${enc(s)}/${enc(k)}/${enc(c)}`),
    };
  }
  const file = (...parts) => pathToFileURL(path.join(ctx.dir, ...parts)).href;
  const named = (folder, ...ids) => file(folder, `${ids.map(exportName).join("__")}.html`);
  return {
    index: file("index.html"), rollouts: file("rollouts.html"), suite: (s) => named("suites", s), run: (r) => named("runs", r),
    compare: (a, b) => named("compare", a, b), case: (s, k, c) => named("cases", s, k, c), versions: (r) => named("versions", r),
  };
}

// The answer the page was drawn from: the API's in served mode, the embedded
// #page-data in the export.
async function pageData(page, ctx, apiPath) {
  if (ctx.mode === "export") return page.evaluate(() => JSON.parse(document.getElementById("page-data").textContent));
  return page.evaluate(async (url) => (await fetch(url, { credentials: "same-origin" })).json(), apiPath);
}

const byTestId = (id, attrs = {}) =>
  `[data-testid="${id}"]${Object.entries(attrs).map(([k, v]) => `[data-${k}="${CSS_escape(v)}"]`).join("")}`;
const CSS_escape = (value) => String(value).replace(/["\\]/g, "\\$&");

// ---- the pages ----

async function inspectIndex(page, ctx) {
  const data = await pageData(page, ctx, "/api/suites");
  assert.ok(data.suites.some((s) => s.suite === SUITE), `the API lists no suite ${SUITE}`);
  assert.equal(await page.locator(byTestId("suite-row")).count(), data.suites.length, "one row per suite");
  const row = page.locator(byTestId("suite-row", { suite: SUITE }));
  assert.equal(await row.count(), 1, `no row for suite ${SUITE}`);
  assert.equal((await row.locator("td.num").first().textContent()).trim(), "2", "the drift suite's row does not say 2 runs");
}

async function inspectSuite(page, ctx) {
  const data = await pageData(page, ctx, `/api/suites/${encodeURIComponent(SUITE)}`);
  assert.ok(data.series.length > 0, "the suite has no series");
  assert.ok(data.series.some((s) => s.skill === SKILL && s.measure === "expected"), "no expected-match series for the fixture's skill");
  await assertCharts(page, data.series);
  const breached = data.series.find((s) => s.measure === "expected").points.filter((p) => p.breached).length;
  assert.equal(breached, 1, "night two breaches expected_match (0.65 < 0.9): the API should mark one point breached");
  assert.equal(await page.locator(`${byTestId("runs-table")} tbody tr`).count(), data.runs.length, "one row per run");
  assert.equal(data.runs.length, 2, "the fixture history has two runs");
  for (const name of ctx.mode === "served" ? ["skill", "model", "git_ref"] : ["skill", "git_ref"]) {
    assert.equal(await page.locator(byTestId(`filter-${name}`)).count(), 1, `no filter-${name}`);
  }
  await page.selectOption(byTestId("filter-skill"), SKILL);
  if (ctx.mode === "served") {
    await page.waitForURL((url) => url.searchParams.get("skill") === SKILL);
    await ready(page);
  }
  const filtered = data.series.filter((s) => s.skill === SKILL).length;
  assert.equal(await page.locator(byTestId("trend-chart")).count(), filtered, "charts after filtering by skill");
  await filterByGitRef(page, ctx, data);
}

// test.sh records each night at its own --git-ref: one ref, one run.
async function filterByGitRef(page, ctx, data) {
  const ref = data.runs[data.runs.length - 1].git_ref;
  assert.ok(ref, "the newer run has no git_ref (test.sh passes --git-ref)");
  await page.selectOption(byTestId("filter-git_ref"), ref);
  if (ctx.mode === "served") {
    await page.waitForURL((url) => url.searchParams.get("git_ref") === ref);
    await ready(page);
  }
  assert.equal(await page.locator(byTestId("run-row")).count(), 1, `runs shown for git ref ${ref}`);
  for (const marker of await page.locator(byTestId("trend-chart")).all()) {
    assert.equal(await marker.locator(".pt").count(), 1, `a chart filtered to git ref ${ref} has one point`);
  }
}

async function assertCharts(page, series) {
  assert.equal(await page.locator(byTestId("trend-chart")).count(), series.length, "one trend chart per series");
  for (const one of series) {
    const chart = page.locator(byTestId("trend-chart", { skill: one.skill, measure: one.measure }));
    const what = `the ${one.skill} ${one.measure} chart`;
    assert.equal(await chart.count(), 1, `${what} is missing`);
    assert.equal(await chart.locator("svg").count(), 1, `${what} has no SVG`);
    const band = chart.locator(byTestId("band"));
    assert.equal(await band.count(), 1, `${what} has no interval band`);
    assert.match((await band.getAttribute("d")) ?? "", /^M[\d.]+,[\d.]+(L[\d.]+,[\d.]+)+Z$/, `${what}'s band is not an area`);
    assert.equal(await chart.locator(".pt").count(), one.points.length, `${what}: one marker per point`);
    assert.equal(await chart.locator(byTestId("breach-marker")).count(), one.points.filter((p) => p.breached).length,
      `${what}: one breach marker per breached point`);
  }
}

async function inspectRun(page, ctx) {
  const data = await pageData(page, ctx, `/api/runs/${encodeURIComponent(ctx.newer)}`);
  assert.equal(data.cases.length, FIXTURE.cases, "the API's case count");
  const rows = page.locator(byTestId("case-row"));
  assert.equal(await rows.count(), data.cases.length, "one row per case");
  assert.equal(await page.locator(`${byTestId("measures-table")} tbody tr`).count(), data.measures.length, "one row per measure");
  const failed = data.cases.filter((c) => (c.flags || []).includes("failed")).length;
  assert.equal(failed, FIXTURE.passToFail, "night two fails 7 cases");
  await page.click(byTestId("case-filter-failed"));
  assert.equal(await page.locator(`${byTestId("case-row")}:visible`).count(), failed, "rows shown by the failed filter");
  await page.click(byTestId("case-filter-all"));
  assert.equal(await page.locator(`${byTestId("case-row")}:visible`).count(), data.cases.length, "rows shown by all");
  const script = page.locator(byTestId("case-row", { skill: SKILL, case: FIXTURE.scriptCase }));
  assert.equal(await script.getAttribute("data-outcome"), "fail", `${FIXTURE.scriptCase} fails on night two`);
  if (ctx.mode === "served") {
    await script.locator(byTestId("record-toggle")).click();
    const record = page.locator(byTestId("case-record"));
    await record.waitFor();
    assert.ok((await record.textContent()).includes(SCRIPT), "the record does not show the <script> text");
  }
  assert.equal(data.run.baseline_run_id, ctx.older, "the newer run's baseline is the older run");
}

function exactMcNemar(b, c) {
  const n = b + c;
  if (n === 0) return 1;
  let tail = 0;
  let choose = 1;
  for (let i = 0; i <= Math.min(b, c); i++) {
    tail += choose;
    choose = (choose * (n - i)) / (i + 1);
  }
  return Math.min(1, (2 * tail) / 2 ** n);
}

const formatP = (p) => (p < 1e-9 ? "p < 1e-9" : `p = ${String(Number(p.toPrecision(3)))}`);

async function inspectCompare(page, ctx) {
  const data = await pageData(page, ctx, `/api/compare?a=${encodeURIComponent(ctx.newer)}&b=${encodeURIComponent(ctx.older)}`);
  assert.equal(data.a.run_id, ctx.newer, "a is the newer run");
  assert.equal(data.b.run_id, ctx.older, "b is the older run");
  const down = data.flips.filter((f) => f.direction === "pass_to_fail").length;
  assert.deepEqual([down, data.flips.length - down], [FIXTURE.passToFail, FIXTURE.failToPass], "the API's flips each way");
  assert.equal(await page.locator(byTestId("flip")).count(), data.flips.length, "one flip shown per flipped case");
  for (const flip of data.flips) await assertFlip(page, flip);
  await assertPValues(page, data.measures);
}

async function assertFlip(page, flip) {
  const what = `flip ${flip.skill}/${flip.case}`;
  const view = page.locator(byTestId("flip", { skill: flip.skill, case: flip.case }));
  assert.equal(await view.count(), 1, `${what} is not shown`);
  const [a, b] = [view.locator(byTestId("output-a")), view.locator(byTestId("output-b"))];
  assert.equal(await a.count(), 1, `${what} has no output-a`);
  assert.equal(await b.count(), 1, `${what} has no output-b`);
  assert.equal(await view.locator(byTestId("diff")).count(), 1, `${what} has no diff`);
  if (page.viewportSize().width >= 1400) {
    const [boxA, boxB] = [await a.boundingBox(), await b.boundingBox()];
    assert.ok(boxB.x + boxB.width <= boxA.x && Math.abs(boxA.y - boxB.y) < 2, `${what}: outputs are not side by side (b then a)`);
  }
  if (flip.case === FIXTURE.scriptCase) {
    assert.equal(flip.direction, "pass_to_fail", `${what} goes pass to fail`);
    for (const output of [a, b]) assert.ok((await output.textContent()).includes(SCRIPT), `${what}: the output does not show the <script> text`);
    assert.match(await view.locator(byTestId("diff")).textContent(), /\/label/, `${what}: the diff does not name /label`);
  }
}

async function assertPValues(page, measures) {
  assert.ok(measures.length > 0, "the compare answer has no measures");
  assert.equal(await page.locator(byTestId("mcnemar-p")).count(), measures.length, "one McNemar p per measure");
  for (const m of measures) {
    const row = page.locator(byTestId("measure-row", { skill: m.skill, measure: m.measure }));
    const shown = (await row.locator(byTestId("mcnemar-p")).textContent()).trim();
    const counts = [await row.locator(byTestId("pass-to-fail")).textContent(), await row.locator(byTestId("fail-to-pass")).textContent()].map(Number);
    assert.equal(shown, formatP(exactMcNemar(...counts)), `${m.skill} ${m.measure}: p shown for ${counts[0]} and ${counts[1]} flips`);
    assert.equal(shown, formatP(m.p_value), `${m.skill} ${m.measure}: p shown vs the API's p_value ${m.p_value}`);
  }
  const outcome = measures.find((m) => m.skill === SKILL && m.measure === "expected");
  assert.ok(outcome, "no expected-match measure in the compare answer");
  assert.deepEqual([outcome.pass_to_fail, outcome.fail_to_pass], [FIXTURE.passToFail, FIXTURE.failToPass], "expected-match flips");
  assert.equal(formatP(outcome.p_value), "p = 0.0703", "the expected-match p (7 flips down, 1 up)");
}

async function inspectCase(page, ctx) {
  const query = new URLSearchParams({ suite: SUITE, skill: SKILL, case: FIXTURE.scriptCase });
  const data = await pageData(page, ctx, `/api/cases?${query}`);
  assert.deepEqual(data.runs.map((r) => r.outcome), ["pass", "fail"], "the case passed then failed");
  const cells = page.locator(`${byTestId("case-strip")} ${byTestId("strip-cell")}`);
  assert.equal(await cells.count(), data.runs.length, "one strip cell per run");
  assert.deepEqual(await cells.evaluateAll((nodes) => nodes.map((n) => n.getAttribute("data-outcome"))), ["pass", "fail"], "the strip's outcomes");
  const outputs = page.locator(byTestId("case-output"));
  assert.equal(await outputs.count(), data.runs.length, "one output per run");
  for (const text of await outputs.allTextContents()) assert.ok(text.includes(SCRIPT), "an output does not show the <script> text");
  await assertCaseDetail(page, data);
}

// design.md §12.3: the case's input, its failed gates and every check with op, pointer, expected,
// actual and message, as the API (the typed record) has them; the <script> in the input as text.
async function assertCaseDetail(page, data) {
  const inputs = page.locator(byTestId("case-input"));
  assert.equal(await inputs.count(), data.runs.length, "one input per run");
  for (const text of await inputs.allTextContents()) assert.ok(text.includes(SCRIPT), "an input does not show the <script> text");
  const failed = data.runs.find((r) => r.outcome === "fail");
  assert.deepEqual(failed.gates.map((g) => g.type), ["EXPECTED_MISMATCH", "CHECK_FAILED"], "the failed night's gates");
  const run = page.locator(byTestId("case-run", { run: failed.run_id }));
  const gates = await run.locator(`${byTestId("failed-gates")} li`).allTextContents();
  assert.deepEqual(gates, failed.gates.map((g) => `${g.type} ${g.message}`), "the failed gates shown");
  const [check] = failed.checks;
  assert.deepEqual([check.op, check.pointer, check.expected, check.pass], ["equals", "/label", "negative", false], "the API's check");
  assert.ok(check.message.length > 0 && check.actual !== "negative", "the failed check has its actual value and why");
  const cells = await run.locator(byTestId("check-row")).first().locator("td").allTextContents();
  assert.deepEqual(cells, ["✗ fail", "equals", "/label", "negative", String(check.actual), check.message], "the check row");
}

// The page's pair against summary.json's versions entry: per paired measure the cases, both rates, the
// flips each way and McNemar p; the flipped cases.
function assertAgreesWithSummary(pair, summary) {
  const entry = (summary.versions || []).find((v) => v.skill === pair.skill);
  assert.ok(entry, `summary.json has no versions entry for ${pair.skill}`);
  for (const m of pair.measures.filter((x) => !x.measure.startsWith("criterion:"))) {
    const paired = entry.paired[m.measure];
    assert.ok(paired, `summary.json's versions has no paired ${m.measure}`);
    assert.deepEqual([m.cases, m.b_rate, m.a_rate, m.pass_to_fail, m.fail_to_pass, m.p_value],
      [paired.cases, paired.baseline_rate, paired.rate, paired.pass_to_fail, paired.fail_to_pass, paired.p_value],
      `${m.measure}: the page's counts and p against summary.json`);
  }
  const flipped = entry.flipped.map((f) => f.case).sort();
  assert.deepEqual(pair.flips.filter((f) => f.direction === "pass_to_fail").map((f) => f.case).sort(), flipped,
    "the pass -> fail cases against summary.json's flipped");
}

// design.md §12.3: a versions: both run's candidate against its stable version, as the API says it
// (which the C++ test holds against summary.json's versions): per measure the two rates, the flips
// each way and McNemar p, and each flipped case with the stable and candidate sides.
async function inspectVersions(page, ctx) {
  const data = await pageData(page, ctx, `/api/runs/${encodeURIComponent(ctx.versions)}/versions`);
  assert.equal(data.versions.length, 1, "one skill at both versions");
  const [pair] = data.versions;
  const section = page.locator(byTestId("version-pair", { skill: pair.skill }));
  assert.equal(await section.count(), 1, "the skill's section");
  assert.equal(await section.locator(byTestId("measure-row")).count(), pair.measures.length, "one row per paired measure");
  for (const m of pair.measures) {
    const row = section.locator(byTestId("measure-row", { skill: m.skill, measure: m.measure }));
    const counts = [await row.locator(byTestId("pass-to-fail")).textContent(), await row.locator(byTestId("fail-to-pass")).textContent()].map(Number);
    assert.deepEqual(counts, [m.pass_to_fail, m.fail_to_pass], `${m.measure}: flips shown`);
    assert.equal((await row.locator(byTestId("mcnemar-p")).textContent()).trim(), formatP(m.p_value), `${m.measure}: p shown`);
  }
  assert.ok(ctx.versionsSummary, "--versions needs --versions-summary (the run's summary.json)");
  assertAgreesWithSummary(pair, ctx.versionsSummary);
  const schema = pair.measures.find((m) => m.measure === "schema");
  assert.ok(schema && schema.pass_to_fail > 0 && schema.significant, "the candidate's schema drop is shown significant");
  assert.equal(await section.locator(byTestId("flip")).count(), pair.flips.length, "one flip shown per flipped case");
  for (const flip of pair.flips) {
    const view = section.locator(byTestId("flip", { skill: flip.skill, case: flip.case }));
    assert.deepEqual(await view.locator(".side-name").allTextContents(), ["Stable", "Candidate"], `${flip.case}: the sides`);
    assert.deepEqual(flip.a.gates.map((g) => g.type), ["SCHEMA_INVALID"], `${flip.case}: the candidate's gate`);
  }
  if (ctx.mode === "served") {
    const run = await pageData(page, ctx, `/api/runs/${encodeURIComponent(ctx.versions)}`);
    assert.equal(run.run.versions, true, "the run says it has a versions page");
  }
}

async function inspectRollouts(page, ctx) {
  const data = await pageData(page, ctx, "/api/rollouts");
  if (data.rollouts.length) assert.equal(await page.locator(byTestId("rollout")).count(), data.rollouts.length, "one section per rollout");
  else assert.equal(await page.locator(byTestId("no-rollouts")).count(), 1, "no 'no rollout' message");
}

// ---- clicking through ----

async function follow(page, selector, expected, what) {
  const target = page.locator(selector).first();
  assert.equal(await target.count(), 1, `${what}: nothing to click (${selector})`);
  await Promise.all([page.waitForURL(expected, { timeout: 10000 }), target.click()]);
  await ready(page);
}

async function linksCheck(ctx) {
  await check(`${ctx.mode} links index -> suite -> run -> compare -> case at ${ctx.width} px`, async () => {
    const at = locations(ctx);
    const page = await ctx.context.newPage();
    const problems = watch(page);
    try {
      await page.goto(at.index);
      await ready(page);
      await follow(page, `${byTestId("suite-row", { suite: SUITE })} ${byTestId("suite-link")}`, at.suite(SUITE), "index to suite");
      await follow(page, `${byTestId("run-row", { run: ctx.newer })} ${byTestId("run-link")}`, at.run(ctx.newer), "suite to run");
      await follow(page, byTestId("compare-link"), at.compare(ctx.newer, ctx.older), "run to compare");
      const flip = byTestId("flip", { skill: SKILL, case: FIXTURE.scriptCase });
      await follow(page, `${flip} ${byTestId("case-link")}`, at.case(SUITE, SKILL, FIXTURE.scriptCase), "compare to case");
      await follow(page, `${byTestId("strip-cell", { run: ctx.older })} a`, at.run(ctx.older), "case to run");
      await follow(page, `${byTestId("breadcrumbs")} a >> nth=0`, at.index, "breadcrumb to index");
      await settle(page, problems);
    } finally {
      await page.close();
    }
  });
}

async function runAll(browser, ctx) {
  ctx.context = await browser.newContext({ viewport: { width: ctx.width, height: 900 }, deviceScaleFactor: 1 });
  ctx.context.setDefaultTimeout(10000);
  const at = locations(ctx);
  try {
    // The index first: a served URL may carry the token that sets the cookie.
    await pageCheck(ctx, "index", at.index, (page) => inspectIndex(page, ctx));
    await pageCheck(ctx, "suite", at.suite(SUITE), (page) => inspectSuite(page, ctx));
    await pageCheck(ctx, "run", at.run(ctx.newer), (page) => inspectRun(page, ctx));
    await pageCheck(ctx, "compare", at.compare(ctx.newer, ctx.older), (page) => inspectCompare(page, ctx));
    await pageCheck(ctx, "case", at.case(SUITE, SKILL, FIXTURE.scriptCase), (page) => inspectCase(page, ctx));
    await pageCheck(ctx, "rollouts", at.rollouts, (page) => inspectRollouts(page, ctx));
    if (ctx.versions) await pageCheck(ctx, "versions", at.versions(ctx.versions), (page) => inspectVersions(page, ctx));
    await linksCheck(ctx);
  } finally {
    await ctx.context.close();
  }
}

async function main() {
  const opts = options();
  mkdirSync(opts.shots, { recursive: true });
  const browser = await chromium.launch({ executablePath: opts.chromium, headless: true, args: CHROMIUM_ARGS });
  const common = {
    newer: opts.newer, older: opts.older, versions: opts.versions, shots: opts.shots,
    // summary.json of the versions run: what its page must agree with.
    versionsSummary: opts["versions-summary"] ? JSON.parse(readFileSync(opts["versions-summary"], "utf8")) : null,
  };
  try {
    for (const width of WIDTHS) {
      if (opts.url) await runAll(browser, { ...common, mode: "served", width, url: opts.url, origin: new URL(opts.url).origin });
      if (opts.export) await runAll(browser, { ...common, mode: "export", width, dir: path.resolve(opts.export) });
    }
  } finally {
    await browser.close();
  }
  if (failures.length) {
    console.log(`\n${failures.length} check(s) failed:\n  ${failures.join("\n  ")}`);
    process.exit(1);
  }
  console.log("\nall checks passed");
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
