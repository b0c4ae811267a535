// skillrunner view: the read-only front end over the eval history.
//
// Served mode: location.pathname picks the page and the JSON API feeds it.
// Export mode (opened from file://, no server): body[data-page] picks the page
// and #page-data holds what the API would have answered, so nothing is fetched.
//
// Every string that comes from a run, a dataset or a model goes into the page
// as a text node; the only markup made here is elements created one by one,
// and the CSP (default-src 'self') forbids inline code and style attributes.
"use strict";

// A block rather than a wrapping function: in strict mode its declarations
// stay inside it, off window.
{
  const SVG_NS = "http://www.w3.org/2000/svg";
  const body = document.body;
  const EXPORT = body.hasAttribute("data-page");
  const ROOT = body.getAttribute("data-root") ?? (EXPORT ? "" : "/");
  const app = document.getElementById("app");
  const DASH = "—";
  const MARKS = { pass: "✓", fail: "✗", breached: "✗", error: "!", judge_error: "!", indeterminate: "?", refused: "⊘" };
  const CASE_FILTERS = ["all", "failed", "flipped", "refused", "indeterminate", "slow", "costly"];

  class ViewError extends Error {
    constructor(code, message) {
      super(message);
      this.code = code;
    }
  }

  // ---- DOM building (text only ever enters as text nodes) ----

  function build(node, props, kids) {
    for (const [key, value] of Object.entries(props || {})) {
      if (value == null || value === false) continue;
      if (key === "testid") node.setAttribute("data-testid", value);
      else if (key === "data") setData(node, value);
      else if (typeof value === "function") node.addEventListener(key.replace(/^on/, ""), value);
      else node.setAttribute(key, value === true ? "" : String(value));
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid == null || kid === false) continue;
      node.appendChild(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return node;
  }

  function setData(node, data) {
    for (const [key, value] of Object.entries(data)) {
      if (value != null) node.setAttribute(`data-${key}`, String(value));
    }
  }

  const h = (tag, props, ...kids) => build(document.createElement(tag), props, kids);
  const s = (tag, props, ...kids) => build(document.createElementNS(SVG_NS, tag), props, kids);
  const code = (text, props) => h("code", props, text);
  const muted = (...kids) => h("span", { class: "muted" }, kids);
  const anchor = (href, text, props) => (href ? h("a", { ...props, href }, text) : h("span", props, text));

  function td(content, cls, props) {
    return h("td", { ...props, class: cls }, content);
  }

  // head: column names, "#" in front for a numeric column; wideOnly: the
  // names of the columns narrow windows leave out (their cells carry class wide-only).
  function table(testid, head, rows, caption, wideOnly = []) {
    const headRow = h("tr", {}, head.map((label) => {
      const numeric = label.startsWith("#");
      const text = numeric ? label.slice(1) : label;
      const cls = [numeric ? "num" : null, wideOnly.includes(text) ? "wide-only" : null].filter(Boolean).join(" ");
      return h("th", { scope: "col", class: cls || null }, text);
    }));
    return h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": caption || String(testid).split("-").join(" ") },
      h("table", { testid }, caption ? h("caption", {}, caption) : null, h("thead", {}, headRow), h("tbody", {}, rows)));
  }

  function panel(title, testid, ...content) {
    return h("section", { class: "panel", testid }, title ? h("h2", {}, title) : null, content);
  }

  function facts(pairs) {
    return h("dl", { class: "facts" },
      pairs.filter(Boolean).map(([term, value]) => h("div", {}, h("dt", {}, term), h("dd", {}, value))));
  }

  // ---- formatting ----

  function pct(rate) {
    return rate == null ? DASH : `${(rate * 100).toFixed(1)}%`;
  }

  function interval(low, high) {
    if (low == null || high == null) return DASH;
    return `${(low * 100).toFixed(1)}–${(high * 100).toFixed(1)}%`;
  }

  function formatP(p) {
    if (p == null) return `p = ${DASH}`;
    if (p < 1e-9) return "p < 1e-9";
    return `p = ${String(Number(p.toPrecision(3)))}`;
  }

  function usd(value) {
    if (value == null) return DASH;
    if (value === 0) return "$0";
    return `$${value < 0.01 ? value.toFixed(4) : value.toFixed(2)}`;
  }

  function ms(value) {
    if (value == null) return DASH;
    if (value < 1000) return `${Math.round(value)} ms`;
    if (value < 10000) return `${(value / 1000).toFixed(1)} s`;
    if (value < 600000) return `${Math.round(value / 1000)} s`;
    return `${Math.floor(value / 60000)} min ${Math.round((value % 60000) / 1000)} s`;
  }

  function when(iso) {
    if (!iso) return DASH;
    const date = new Date(iso);
    if (Number.isNaN(date.getTime())) return String(iso);
    return `${date.toISOString().slice(0, 16).replace("T", " ")} UTC`;
  }

  const time = (iso) => (iso ? h("time", { datetime: iso, title: iso }, when(iso)) : DASH);
  const count = (n) => (n == null ? DASH : String(n));
  const pretty = (value) => JSON.stringify(value, null, 2);
  const words = (value) => String(value).split("_").join(" ");

  function tone(value) {
    const v = String(value ?? "");
    if (v === "pass" || v === "ok" || v === "promoted") return "good";
    if (v === "fail" || v === "breached" || v === "rolled_back") return "bad";
    if (v.includes("error") || v === "indeterminate") return "warn";
    if (v === "refused") return "refused";  // neither a failure nor an error: a colour of its own
    return "neutral";
  }

  function badge(value, label) {
    const v = value == null ? "unknown" : String(value);
    return h("span", { class: `badge ${tone(v)}`, data: { value: v } },
      h("span", { class: "mark", "aria-hidden": "true" }, MARKS[v] || "•"), " ", label ?? words(v));
  }

  // ---- links (served paths or exported files) ----

  // The export's file name of a string: its UTF-8 bytes, [A-Za-z0-9.-] kept,
  // every other byte as _XX, so any id is a safe, unique file name.
  function fileName(text) {
    let out = "";
    for (const byte of new TextEncoder().encode(String(text))) {
      const c = String.fromCharCode(byte);
      out += /[A-Za-z0-9.-]/.test(c) ? c : `_${byte.toString(16).toUpperCase().padStart(2, "0")}`;
    }
    return out;
  }

  const enc = encodeURIComponent;
  const exported = (...parts) => `${ROOT}${parts[0]}/${parts.slice(1).map(fileName).join("__")}.html`;

  const link = {
    index: () => (EXPORT ? `${ROOT}index.html` : ROOT),
    rollouts: () => (EXPORT ? `${ROOT}rollouts.html` : `${ROOT}rollouts`),
    suite: (suite) => (EXPORT ? exported("suites", suite) : `${ROOT}suites/${enc(suite)}`),
    run: (run) => (EXPORT ? exported("runs", run) : `${ROOT}runs/${enc(run)}`),
    // The export holds each run against its baseline only: b must be that one.
    compare: (a, b) => {
      if (EXPORT) return b ? exported("compare", a, b) : null;
      return `${ROOT}compare/${enc(a)}${b ? `/${enc(b)}` : ""}`;
    },
    case: (suite, skill, id) =>
      EXPORT ? exported("cases", suite, skill, id) : `${ROOT}cases/${enc(suite)}/${enc(skill)}/${enc(id)}`,
    versions: (run) => (EXPORT ? exported("versions", run) : `${ROOT}versions/${enc(run)}`),
  };

  const api = (path, query) => `${ROOT}api/${path}${query && String(query) ? `?${query}` : ""}`;

  // ---- routing and loading ----

  function parseRoute(pathname) {
    const rel = pathname.startsWith(ROOT) ? pathname.slice(ROOT.length) : pathname.replace(/^\//, "");
    let parts;
    try {
      parts = rel.split("/").filter(Boolean).map(decodeURIComponent);
    } catch {
      return { page: "notfound" };
    }
    const [head, ...rest] = parts;
    if (!head) return { page: "suites" };
    if (head === "suites" && rest.length === 1) return { page: "suite", suite: rest[0] };
    if (head === "runs" && rest.length === 1) return { page: "run", run: rest[0] };
    if (head === "compare" && (rest.length === 1 || rest.length === 2)) {
      return { page: "compare", a: rest[0], b: rest[1] ?? null };
    }
    if (head === "cases" && rest.length === 3) return { page: "case", suite: rest[0], skill: rest[1], id: rest[2] };
    if (head === "rollouts" && rest.length === 0) return { page: "rollouts" };
    if (head === "versions" && rest.length === 1) return { page: "versions", run: rest[0] };
    return { page: "notfound" };
  }

  function apiUrl(route) {
    const query = new URLSearchParams();
    switch (route.page) {
      case "suites": return api("suites");
      case "suite": {
        const from = new URLSearchParams(location.search);
        for (const name of ["skill", "model", "git_ref", "limit"]) if (from.get(name)) query.set(name, from.get(name));
        return api(`suites/${enc(route.suite)}`, query);
      }
      case "run": return api(`runs/${enc(route.run)}`);
      case "compare":
        query.set("a", route.a);
        if (route.b) query.set("b", route.b);
        return api("compare", query);
      case "case":
        for (const [key, value] of [["suite", route.suite], ["skill", route.skill], ["case", route.id]]) query.set(key, value);
        return api("cases", query);
      case "rollouts": return api("rollouts");
      case "versions": return api(`runs/${enc(route.run)}/versions`);
      default: throw new ViewError("NOT_FOUND", `There is no page at ${location.pathname}.`);
    }
  }

  async function fetchJson(url) {
    const response = await fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } });
    let data = null;
    try {
      data = await response.json();
    } catch {
      // not JSON: reported below by its HTTP status
    }
    if (!response.ok || data == null) {
      throw new ViewError(data?.error?.code ?? `HTTP ${response.status}`, data?.error?.message ?? response.statusText);
    }
    return data;
  }

  function embeddedData() {
    const node = document.getElementById("page-data");
    if (!node) throw new ViewError("NO_DATA", "This exported page has no #page-data.");
    return JSON.parse(node.textContent);
  }

  async function start() {
    app.setAttribute("data-state", "loading");
    try {
      const route = EXPORT ? { page: body.getAttribute("data-page") } : parseRoute(location.pathname);
      const render = PAGES[route.page];
      if (!render) throw new ViewError("NOT_FOUND", `There is no page at ${location.pathname}.`);
      const data = EXPORT ? embeddedData() : await fetchJson(apiUrl(route));
      show(render(data));
    } catch (error) {
      showError(error);
      if (!(error instanceof ViewError)) throw error;
    }
  }

  function show(view) {
    document.title = `${view.title} · skillrunner view`;
    renderHeader(view.crumbs);
    app.replaceChildren(view.body);
    app.setAttribute("data-state", "ready");
  }

  function showError(error) {
    const known = error instanceof ViewError;
    document.title = "Error · skillrunner view";
    renderHeader([["Suites", link.index()], ["Error", null]]);
    app.replaceChildren(h("div", { class: "page", testid: "error" },
      h("h1", {}, known && error.code === "NOT_FOUND" ? "Not found" : "Something went wrong"),
      h("p", { class: "error-box" }, code(known ? error.code : "SCRIPT_ERROR"), " ", error.message || String(error))));
    app.setAttribute("data-state", "error");
  }

  function renderHeader(crumbs) {
    let header = body.querySelector(":scope > header.top");
    if (!header) {
      header = h("header", { class: "top" });
      body.insertBefore(header, body.firstChild);
    }
    const last = crumbs.length - 1;
    const trail = h("ol", {}, crumbs.map(([label, href], i) =>
      h("li", {}, i === last || !href ? h("span", { "aria-current": i === last ? "page" : null }, label) : h("a", { href }, label))));
    header.replaceChildren(h("div", { class: "bar" },
      h("a", { class: "brand", href: link.index() }, "skillrunner", h("span", { class: "brand-sub" }, "view")),
      h("nav", { class: "crumbs", "aria-label": "Breadcrumbs", testid: "breadcrumbs" }, trail),
      h("nav", { class: "tools", "aria-label": "Pages" },
        EXPORT ? h("span", { class: "tag", title: "Static pages written by skillrunner view --export" }, "static export") : null,
        h("a", { href: link.rollouts(), testid: "rollouts-link" }, "Rollouts"))));
  }

  const indexCrumb = () => ["Suites", link.index()];

  // ---- suites (index) ----

  function renderSuites(data) {
    const suites = data.suites || [];
    const rows = suites.map((suite) => h("tr", { testid: "suite-row", data: { suite: suite.suite } },
      td(h("a", { href: link.suite(suite.suite), testid: "suite-link" }, suite.suite), "strong"),
      td(count(suite.runs), "num"),
      td(suite.last ? h("a", { href: link.run(suite.last.run_id), class: "id" }, suite.last.run_id) : DASH),
      td(time(suite.last?.started_at)),
      td(suite.last ? badge(suite.last.status) : DASH),
      td(suite.last?.git_ref ? code(suite.last.git_ref) : DASH),
      td(listText(suite.skills)), td(listText(suite.models))));
    const body = h("div", { class: "page suites" },
      h("div", { class: "title" }, h("h1", {}, "Eval suites"),
        data.history ? h("p", { class: "lede" }, "History ", code(data.history), `: ${suites.length} suite${suites.length === 1 ? "" : "s"}.`) : null),
      suites.length
        ? panel(null, null, table("suites-table", ["Suite", "#Runs", "Last run", "Started", "Status", "Git ref", "Skills", "Models"], rows))
        : panel(null, null, h("p", { class: "empty" }, "No eval run is recorded in this history yet.")));
    return { title: "Suites", crumbs: [["Suites", null]], body };
  }

  function listText(values) {
    if (!values || !values.length) return muted(DASH);
    return h("span", { class: "list" }, values.map((v, i) => [i ? ", " : null, v]));
  }

  // ---- suite: trends, cost and latency, runs ----

  function renderSuite(data) {
    const state = { data, local: EXPORT ? { skill: "", git_ref: "" } : null, root: h("div", { class: "page suite" }) };
    state.redraw = () => state.root.replaceChildren(...suiteContent(state));
    state.redraw();
    return { title: data.suite, crumbs: [indexCrumb(), [data.suite, null]], body: state.root };
  }

  function suiteContent(state) {
    const view = state.local ? filterLocally(state.data, state.local) : state.data;
    const runs = view.runs || [];
    const span = runs.length ? ` from ${when(runs[0].started_at)} to ${when(runs[runs.length - 1].started_at)}` : "";
    return [
      h("div", { class: "title" }, h("h1", {}, "Suite ", h("span", { class: "id" }, view.suite)),
        h("p", { class: "lede" }, `${runs.length} run${runs.length === 1 ? "" : "s"}${span}.`)),
      filterBar(state),
      trendsPanel(view),
      runMetricsPanel(runs),
      runsPanel(runs, state.data.runs || []),
    ];
  }

  // The export has every run and series embedded: skill and git ref filter
  // here; model cannot (runs do not say their model), so it is not offered.
  function filterLocally(data, filters) {
    const runs = (data.runs || []).filter((run) => !filters.git_ref || run.git_ref === filters.git_ref);
    const kept = new Set(runs.map((run) => run.run_id));
    const series = (data.series || []).filter((one) => !filters.skill || one.skill === filters.skill)
      .map((one) => ({ ...one, points: one.points.filter((point) => kept.has(point.run_id)) }));
    return { ...data, runs, series, filters: { skill: filters.skill || null, model: null, git_ref: filters.git_ref || null } };
  }

  function filterBar(state) {
    const data = state.data;
    const current = state.local || data.filters || {};
    const choices = [["skill", "Skill", data.skills], ["model", "Model", data.models], ["git_ref", "Git ref", data.git_refs]]
      .filter(([name]) => !state.local || name !== "model");
    const active = choices.some(([name]) => current[name]);
    return h("form", { class: "filters", role: "search", testid: "filters", onsubmit: (event) => event.preventDefault() },
      choices.map(([name, label, values]) =>
        filterSelect(name, label, values || [], current[name] || "", (value) => changeFilter(state, name, value))),
      active ? h("button", { type: "button", class: "link-button", testid: "filter-clear", onclick: () => changeFilter(state, null, "") }, "Clear filters") : null);
  }

  function filterSelect(name, label, values, current, onChange) {
    const id = `filter-${name}`;
    const options = current && !values.includes(current) ? [...values, current] : values;
    const select = h("select", { id, name, testid: id, disabled: options.length === 0, onchange: (event) => onChange(event.target.value) },
      h("option", { value: "" }, options.length ? `All (${options.length})` : "None recorded"),
      options.map((value) => h("option", { value }, value)));
    select.value = current;
    return h("label", { class: "field", for: id }, h("span", { class: "field-label" }, label), select);
  }

  // name null clears every filter.
  function changeFilter(state, name, value) {
    if (state.local) {
      if (name) state.local[name] = value;
      else for (const key of Object.keys(state.local)) state.local[key] = "";
      state.redraw();
      return;
    }
    const query = new URLSearchParams(location.search);
    for (const key of name ? [name] : ["skill", "model", "git_ref"]) query.delete(key);
    if (name && value) query.set(name, value);
    const search = String(query);
    history.pushState(null, "", `${location.pathname}${search ? `?${search}` : ""}`);
    start();
  }

  function trendsPanel(view) {
    const series = view.series || [];
    if (!series.length) return panel("Measures over runs", "trends", h("p", { class: "empty" }, "No measure is recorded for these runs."));
    const bySkill = new Map();
    for (const one of series) bySkill.set(one.skill, [...(bySkill.get(one.skill) || []), one]);
    return panel("Measures over runs", "trends", chartLegend(),
      [...bySkill].map(([skill, list]) => h("div", { class: "skill-group", data: { skill } },
        h("h3", {}, code(skill)),
        h("div", { class: "charts" }, list.map((one) => trendCard(view.runs || [], one))))));
  }

  function chartLegend() {
    const swatch = (...shapes) => s("svg", { class: "swatch", viewBox: "0 0 24 12", "aria-hidden": "true" }, shapes);
    return h("p", { class: "legend" },
      h("span", {}, swatch(s("line", { class: "line", x1: 0, x2: 24, y1: 6, y2: 6 }), s("circle", { class: "pt", cx: 12, cy: 6, r: 3 })), "pass rate"),
      h("span", {}, swatch(s("rect", { class: "band", x: 0, y: 1, width: 24, height: 10 })), "Wilson 95% interval"),
      h("span", {}, swatch(s("path", { class: "pt breached", d: "M12,1L17,6L12,11L7,6Z" })), "threshold breached"),
      h("span", { class: "muted" }, "Runs oldest to newest; a point links to its run."));
  }

  function trendCard(runs, series) {
    const last = series.points[series.points.length - 1];
    return h("figure", { class: "card chart", testid: "trend-chart", data: { skill: series.skill, measure: series.measure } },
      h("figcaption", {},
        h("span", { class: "chart-title" }, series.label || series.measure),
        last ? h("span", { class: "latest" }, h("strong", {}, pct(last.rate)), ` ${last.successes}/${last.n} · 95% ${interval(last.low, last.high)}`) : null),
      trendSvg(runs, series));
  }

  function trendSvg(runs, series) {
    const index = new Map(runs.map((run, i) => [run.run_id, i]));
    const label = series.label || series.measure;
    const points = series.points.filter((point) => index.has(point.run_id)).map((point) => {
      const i = index.get(point.run_id);
      const tip = `Run #${i + 1} ${point.run_id} · ${when(runs[i].started_at)}\n${label}: ${pct(point.rate)} ` +
        `(${point.successes}/${point.n}), 95% interval ${interval(point.low, point.high)}${point.breached ? "\nthreshold breached" : ""}`;
      return { i, value: point.rate, low: point.low, high: point.high, breached: point.breached, tip, href: link.run(point.run_id) };
    });
    return bandChart(runs.length, points, runTicks(runs.length), `${label}: pass rate per run with its 95% interval`);
  }

  function runTicks(total) {
    if (!total) return [];
    const picks = new Set([0, total - 1]);
    if (total >= 5) picks.add(Math.round((total - 1) / 2));
    return [...picks].sort((x, y) => x - y).map((i) => [i, `#${i + 1}`]);
  }

  // ---- charts (SVG built node by node) ----

  const CHART = { width: 600, height: 220, left: 50, right: 18, top: 14, bottom: 34 };

  function frame(total, domain, ticks, format, xTicks, label) {
    const { width, height, left, right, top, bottom } = CHART;
    const x = (i) => (total <= 1 ? left + (width - left - right) / 2 : left + (i * (width - left - right)) / (total - 1));
    const y = (v) => top + (1 - (v - domain[0]) / (domain[1] - domain[0] || 1)) * (height - top - bottom);
    const svg = s("svg", { class: "plot", viewBox: `0 0 ${width} ${height}`, role: "group", "aria-label": label });
    const grid = ticks.map((t) => s("g", { class: "tick" },
      s("line", { x1: left, x2: width - right, y1: y(t), y2: y(t) }),
      s("text", { x: left - 8, y: y(t), dy: "0.32em", "text-anchor": "end" }, format(t))));
    const xLabels = xTicks.map(([i, text]) => s("text", {
      x: x(i), y: height - bottom + 20,
      "text-anchor": total <= 1 ? "middle" : i === 0 ? "start" : i === total - 1 ? "end" : "middle",
    }, text));
    const baseline = height - bottom;
    const marks = Array.from({ length: total }, (_, i) => s("line", { x1: x(i), x2: x(i), y1: baseline, y2: baseline + 4 }));
    svg.append(s("g", { class: "grid" }, grid),
      s("g", { class: "xaxis" }, s("line", { class: "axis", x1: left, x2: width - right, y1: baseline, y2: baseline }), marks, xLabels));
    return { svg, x, y };
  }

  const pathD = (pairs) => pairs.map(([x, y], k) => `${k ? "L" : "M"}${x.toFixed(1)},${y.toFixed(1)}`).join("");

  // `scale` (optional) turns the values into [domain, ticks, format]; by default rates or counts.
  function bandChart(total, points, xTicks, label, scale) {
    const values = points.flatMap((p) => [p.low, p.high, p.value]).filter((v) => v != null);
    const pick = scale || ((vs) => (vs.every((v) => v >= 0 && v <= 1) ? rateScale(vs) : linearScale(vs, String)));
    const [domain, ticks, format] = pick(values);
    const f = frame(total, domain, ticks, format, xTicks, label);
    const banded = points.filter((p) => p.low != null && p.high != null);
    if (banded.length) {
      const pad = banded.length === 1 ? 10 : 0;
      const spread = (x) => (pad ? [x - pad, x + pad] : [x]);
      const upper = banded.flatMap((p) => spread(f.x(p.i)).map((x) => [x, f.y(p.high)]));
      const lower = banded.flatMap((p) => spread(f.x(p.i)).map((x) => [x, f.y(p.low)])).reverse();
      f.svg.append(s("path", { class: "band", testid: "band", d: `${pathD([...upper, ...lower])}Z` }));
    }
    appendLine(f, points, "line");
    f.svg.append(markers(f, points));
    return f.svg;
  }

  function appendLine(f, points, cls) {
    const drawn = points.filter((p) => p.value != null);
    if (drawn.length > 1) f.svg.append(s("path", { class: cls, d: pathD(drawn.map((p) => [f.x(p.i), f.y(p.value)])) }));
  }

  function markers(f, points) {
    return s("g", { class: "markers" }, points.filter((p) => p.value != null).map((p) => {
      const x = f.x(p.i);
      const y = f.y(p.value);
      // A breached run is a red diamond, not a dot: told apart by shape as well as colour.
      const shape = p.breached
        ? s("path", { class: "pt breached", testid: "breach-marker", d: `M${x},${y - 6}L${x + 6},${y}L${x},${y + 6}L${x - 6},${y}Z` })
        : s("circle", { class: "pt", cx: x, cy: y, r: 3.5 });
      const tip = s("title", {}, p.tip);
      return p.href ? s("a", { href: p.href, class: "pt-link" }, shape, tip) : s("g", {}, shape, tip);
    }));
  }

  function stepTicks(low, high, step) {
    const ticks = [];
    for (let i = 0; low + i * step <= high + 1e-9; i++) ticks.push(Number((low + i * step).toFixed(6)));
    return ticks;
  }

  // Rates near 100% would be a flat line on a 0-100% axis: start the axis
  // just under the lowest interval bound instead.
  function rateScale(values) {
    const min = values.length ? Math.min(...values) : 0;
    const low = Math.min(0.9, Math.max(0, Math.floor((min - 0.02) * 10) / 10));
    const step = 1 - low <= 0.2 ? 0.05 : 1 - low <= 0.5 ? 0.1 : 0.2;
    return [[low, 1], stepTicks(low, 1, step), (v) => `${Math.round(v * 100)}%`];
  }

  // A difference of two rates (candidate - stable): an axis symmetric about 0, in percentage points.
  function differenceScale(values) {
    const widest = Math.max(0.05, ...values.map((v) => Math.abs(v)));
    const bound = [0.05, 0.1, 0.25, 0.5, 1].find((b) => b >= Math.min(widest, 1)) || 1;
    const format = (v) => `${v > 0 ? "+" : ""}${Math.round(v * 100)} pts`;
    return [[-bound, bound], stepTicks(-bound, bound, bound / 2), format];
  }

  function linearScale(values, format) {
    const max = Math.max(0, ...values);
    if (max === 0) return [[0, 1], [0, 1], format];
    const magnitude = 10 ** Math.floor(Math.log10(max / 4));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((candidate) => candidate * 4 >= max);
    return [[0, step * 4], stepTicks(0, step * 4, step), format];
  }

  function metricChart(runs, lines, format, label) {
    const values = lines.flatMap(([, value]) => runs.map(value)).filter((v) => v != null);
    const [domain, ticks] = linearScale(values, format);
    const f = frame(runs.length, domain, ticks, format, runTicks(runs.length), label);
    for (const [name, value, cls] of lines) {
      const points = runs.map((run, i) => ({ i, value: value(run), tip: `Run #${i + 1} ${run.run_id}\n${name}: ${format(value(run))}`, href: link.run(run.run_id) }));
      appendLine(f, points, cls);
      f.svg.append(markers(f, points));
    }
    return f.svg;
  }

  function runMetricsPanel(runs) {
    const cards = [];
    const card = (title, testid, legend, chart) => h("figure", { class: "card chart", testid },
      h("figcaption", {}, h("span", { class: "chart-title" }, title), legend ? h("span", { class: "latest" }, legend) : null), chart);
    if (runs.some((run) => run.latency_p50_ms != null || run.latency_p95_ms != null)) {
      cards.push(card("Latency per case", "latency-chart", "solid p50 · dashed p95",
        metricChart(runs, [["p50", (run) => run.latency_p50_ms, "line"], ["p95", (run) => run.latency_p95_ms, "line dashed"]], ms, "Latency p50 and p95 per run")));
    }
    if (runs.some((run) => run.cost_usd != null)) {
      cards.push(card("Cost per run", "cost-chart", null, metricChart(runs, [["cost", (run) => run.cost_usd, "line"]], usd, "Cost per run")));
    }
    cards.push(card("Duration per run", "duration-chart", null,
      metricChart(runs, [["duration", (run) => run.duration_ms, "line"]], ms, "Wall-clock duration per run")));
    return panel("Cost and latency", "run-metrics", h("div", { class: "charts" }, cards));
  }

  function runsPanel(runs, allRuns) {
    const order = new Map(allRuns.map((run, i) => [run.run_id, i]));
    const rows = runs.map((run, i) => {
      // Exported compare pages pair a run with the run before it (its baseline).
      const before = allRuns[(order.get(run.run_id) ?? 0) - 1];
      const compare = EXPORT ? (before ? link.compare(run.run_id, before.run_id) : null) : (i || order.get(run.run_id) ? link.compare(run.run_id) : null);
      return runRow(run, i + 1, compare);
    }).reverse();
    // Cost and duration are charted above; narrow windows drop their columns.
    return panel("Runs", null, table("runs-table",
      ["#", "Run", "Git ref", "Status", "#Cases", "#Cost", "#Duration", "#Latency p50 / p95", "Compare"], rows,
      "Newest first. Latency: per case.", ["Cost", "Duration"]));
  }

  function runRow(run, number, compareHref) {
    const breaches = run.breaches || [];
    return h("tr", { testid: "run-row", data: { run: run.run_id } },
      td(String(number), "num muted"),
      td([h("a", { href: link.run(run.run_id), class: "id", testid: "run-link" }, run.run_id), h("span", { class: "block muted small" }, time(run.started_at))]),
      td(run.git_ref ? code(run.git_ref) : muted(DASH)),
      td([badge(run.status), breaches.length
        ? h("span", { class: "block small breach-count", title: breaches.map((b) => b.message).join("\n") }, `${breaches.length} gate${breaches.length === 1 ? "" : "s"} breached`)
        : null]),
      td(count(run.cases), "num"),
      td(usd(run.cost_usd), "num wide-only"), td(ms(run.duration_ms), "num wide-only"),
      td(`${ms(run.latency_p50_ms)} / ${ms(run.latency_p95_ms)}`, "num nowrap"),
      td(compareHref ? h("a", { href: compareHref, testid: "compare-link" }, "vs previous") : muted(DASH), "nowrap"));
  }

  // ---- run ----

  function renderRun(data) {
    const run = data.run;
    const compareHref = run.baseline_run_id ? link.compare(run.run_id, run.baseline_run_id) : null;
    const body = h("div", { class: "page run" },
      h("div", { class: "title" },
        h("h1", {}, "Run ", h("span", { class: "id" }, run.run_id)), badge(run.status),
        compareHref ? h("a", { class: "button", href: compareHref, testid: "compare-link" }, "Compare with baseline") : null,
        run.versions ? h("a", { class: "button", href: link.versions(run.run_id), testid: "versions-link" }, "Candidate against stable") : null),
      facts([
        ["Suite", h("a", { href: link.suite(run.suite) }, run.suite)],
        ["Started", time(run.started_at)], ["Finished", time(run.finished_at)],
        ["Duration", ms(run.duration_ms)], ["Git ref", run.git_ref ? code(run.git_ref) : DASH], ["Cost", usd(run.cost_usd)],
        ["Baseline", run.baseline_run_id ? h("a", { href: link.run(run.baseline_run_id), class: "id" }, run.baseline_run_id) : "none"],
      ]),
      gatesPanel(data.breaches || [], data.thresholds || {}),
      runMeasuresPanel(data.measures || []),
      casesPanel(data.cases || [], run),
      data.skills ? panel("Per-skill summary", "skills-summary",
        h("details", {}, h("summary", {}, "summary.json's skills, as recorded"), h("pre", { class: "json" }, pretty(data.skills)))) : null);
    return { title: `Run ${run.run_id}`, crumbs: [indexCrumb(), [run.suite, link.suite(run.suite)], [`Run ${run.run_id}`, null]], body };
  }

  function gatesPanel(breaches, thresholds) {
    const list = breaches.length
      ? h("ul", { class: "breaches", testid: "breaches" }, breaches.map((b) => h("li", { testid: "breach" },
        badge("fail", b.kind ? `${words(b.kind)} breached` : "breached"), " ",
        b.skill ? [code(b.skill), " "] : null, h("strong", {}, b.measure), ": ", b.message)))
      : h("p", { class: "ok-line", testid: "breaches" }, badge("pass", "held"), " No threshold or regression gate was breached.");
    const rows = flatten(thresholds).map(([key, value]) => h("tr", {}, td(code(key)), td(String(value), "num")));
    return panel("Gates", "gates", list,
      rows.length ? h("details", { class: "thresholds" }, h("summary", {}, `Thresholds (${rows.length})`),
        table("thresholds", ["Threshold", "#Value"], rows)) : null);
  }

  function flatten(value, prefix = "") {
    if (value == null || typeof value !== "object" || Array.isArray(value)) return [[prefix, JSON.stringify(value)]];
    return Object.entries(value).flatMap(([key, inner]) => {
      const name = prefix ? `${prefix}.${key}` : key;
      return inner != null && typeof inner === "object" && !Array.isArray(inner) ? flatten(inner, name) : [[name, typeof inner === "number" ? inner : JSON.stringify(inner)]];
    });
  }

  function intervalBar(rate, low, high) {
    if (rate == null) return null;
    const x = (v) => 2 + v * 116;
    return s("svg", { class: "ibar", viewBox: "0 0 120 14", "aria-hidden": "true" },
      s("line", { class: "track", x1: 2, x2: 118, y1: 7, y2: 7 }),
      low != null && high != null ? s("rect", { class: "band", x: x(low), y: 2, width: Math.max(1, x(high) - x(low)), height: 10 }) : null,
      s("line", { class: "rate", x1: x(rate), x2: x(rate), y1: 1, y2: 13 }));
  }

  function runMeasuresPanel(measures) {
    const rows = measures.map((m) => h("tr", { testid: "measure-row", data: { skill: m.skill, measure: m.measure } },
      td(code(m.skill)), td(m.label || m.measure), td(`${count(m.successes)} / ${count(m.n)}`, "num"),
      td(h("strong", {}, pct(m.rate)), "num"), td(interval(m.low, m.high), "num muted"), td(intervalBar(m.rate, m.low, m.high), "bar")));
    return panel("Measures", null, measures.length
      ? table("measures-table", ["Skill", "Measure", "#Passed", "#Rate", "#95% interval", "0–100%"], rows)
      : h("p", { class: "empty" }, "No measure was recorded for this run."));
  }

  function casesPanel(cases, run) {
    const rows = cases.map((c) => caseRow(c, run));
    const counter = h("span", { class: "muted", "aria-live": "polite", testid: "cases-shown" });
    const buttons = CASE_FILTERS.map((name) => h("button", {
      type: "button", class: "chip-button", testid: `case-filter-${name}`, "aria-pressed": String(name === "all"), data: { filter: name },
    }, `${name} (${cases.filter((c) => caseMatches(c, name)).length})`));
    const apply = (name) => {
      let shown = 0;
      rows.forEach(([row, detail], i) => {
        const visible = caseMatches(cases[i], name);
        row.hidden = !visible;
        if (detail.isConnected) detail.hidden = !visible || row.getAttribute("data-expanded") !== "true";
        shown += visible;
      });
      for (const button of buttons) button.setAttribute("aria-pressed", String(button.getAttribute("data-filter") === name));
      counter.textContent = `${shown} of ${cases.length} shown`;
    };
    for (const button of buttons) button.addEventListener("click", () => apply(button.getAttribute("data-filter")));
    const view = panel(`Cases (${cases.length})`, "cases",
      h("div", { class: "chips", role: "group", "aria-label": "Show cases" }, buttons, counter),
      table("cases-table", ["Skill", "Case", "#Repeat", "Outcome", "Flags", "#Duration", "#Cost", "Error", EXPORT ? null : "Record"].filter(Boolean),
        rows.map(([row]) => row)));
    apply("all");
    return view;
  }

  function caseMatches(c, filter) {
    return filter === "all" || (c.flags || []).includes(filter);
  }

  // Returns [row, detail row]: the detail (the full record) is fetched and put
  // in place on first expand, served mode only.
  function caseRow(c, run) {
    const detail = h("tr", { class: "detail" });
    const row = h("tr", {
      testid: "case-row",
      data: { skill: c.skill, case: c.case, repeat: c.repeat ?? 0, outcome: c.outcome, flags: (c.flags || []).join(" ") },
    },
      td(code(c.skill)), td(h("a", { href: link.case(run.suite, c.skill, c.case), testid: "case-link" }, c.case)),
      td(String(c.repeat ?? 0), "num muted"), td([badge(c.outcome), gateTags(c.gates)]),
      td(h("span", { class: "flags" }, (c.flags || []).map((flag) => h("span", { class: `flag flag-${flag}` }, flag)))),
      td(ms(c.duration_ms), "num"), td(usd(c.cost_usd), "num"), td(c.error_code ? code(c.error_code) : null),
      EXPORT ? null : td(recordButton(c, run, detail)));
    return [row, detail];
  }

  function recordButton(c, run, detail) {
    const button = h("button", { type: "button", class: "link-button", "aria-expanded": "false", testid: "record-toggle" }, "show");
    button.addEventListener("click", async () => {
      const row = button.closest("tr");
      const open = row.getAttribute("data-expanded") !== "true";
      row.setAttribute("data-expanded", String(open));
      button.setAttribute("aria-expanded", String(open));
      button.textContent = open ? "hide" : "show";
      if (!detail.isConnected) {
        const cell = h("td", { colspan: row.children.length }, muted("Loading the record…"));
        detail.append(cell);
        row.after(detail);
        cell.replaceChildren(await recordView(c, run));
      }
      detail.hidden = !open;
    });
    return button;
  }

  async function recordView(c, run) {
    const query = new URLSearchParams({ skill: c.skill, case: c.case, repeat: String(c.repeat ?? 0) });
    try {
      const data = await fetchJson(api(`runs/${enc(run.run_id)}/case`, query));
      return h("pre", { class: "json record", testid: "case-record", tabindex: "0", "aria-label": "The case's record" }, pretty(data.record));
    } catch (error) {
      return h("p", { class: "error-box" }, code(error.code || "ERROR"), " ", error.message);
    }
  }

  // ---- compare ----

  function renderCompare(data) {
    const flips = data.flips || [];
    const down = flips.filter((f) => f.direction === "pass_to_fail");
    const up = flips.filter((f) => f.direction !== "pass_to_fail");
    const suite = data.a.suite;
    const body = h("div", { class: "page compare" },
      h("div", { class: "title" }, h("h1", {}, "Compare runs"),
        h("p", { class: "lede" }, `${flips.length} case${flips.length === 1 ? "" : "s"} flipped: ${down.length} pass → fail, ${up.length} fail → pass.`)),
      h("div", { class: "pair" }, runCard(data.b, "b", "B · older"), h("div", { class: "pair-arrow", "aria-hidden": "true" }, "→"), runCard(data.a, "a", "A · newer")),
      compareMeasuresPanel(data.measures || [], data.alpha),
      flipsPanel("Pass → fail", "flips-pass-to-fail", down, suite),
      flipsPanel("Fail → pass", "flips-fail-to-pass", up, suite));
    return {
      title: `Compare ${data.a.run_id} with ${data.b.run_id}`,
      crumbs: [indexCrumb(), [suite, link.suite(suite)], [`Run ${data.a.run_id}`, link.run(data.a.run_id)], ["Compare", null]],
      body,
    };
  }

  function runCard(run, key, heading) {
    return h("div", { class: `card run-card run-${key}`, testid: `run-${key}` },
      h("div", { class: "run-card-head" }, h("span", { class: "side-name" }, heading), badge(run.status)),
      h("a", { href: link.run(run.run_id), class: "id big" }, run.run_id),
      h("div", { class: "muted small" }, when(run.started_at), run.git_ref ? [" · ", code(run.git_ref)] : null));
  }

  // design.md §12.3: a versions: both run, each skill's candidate against its stable version: the
  // report's section (both rates per measure, flips both ways, McNemar p) and the flipped cases.
  function renderVersions(data) {
    const run = data.run;
    const sides = ["Stable", "Candidate"];
    const body = h("div", { class: "page versions" },
      h("div", { class: "title" }, h("h1", {}, "Candidate against stable"),
        h("p", { class: "lede" }, "Run ", h("a", { href: link.run(run.run_id), class: "id" }, run.run_id),
          " ran these skills at both versions over the same cases.")),
      (data.versions || []).map((v) => {
        const down = v.flips.filter((f) => f.direction === "pass_to_fail");
        const up = v.flips.filter((f) => f.direction !== "pass_to_fail");
        return h("section", { class: "version-pair", testid: "version-pair", data: { skill: v.skill, candidate: v.candidate } },
          h("h2", {}, code(v.skill), `: version ${v.stable_version} (stable) against ${v.candidate_version} (candidate)`),
          compareMeasuresPanel(v.measures, v.alpha, [`Stable v${v.stable_version}`, `Candidate v${v.candidate_version}`],
            "Paired over the cases both versions ran"),
          flipsPanel("Pass → fail", "flips-pass-to-fail", down, run.suite, sides),
          flipsPanel("Fail → pass", "flips-fail-to-pass", up, run.suite, sides));
      }));
    return {
      title: `Candidate against stable: run ${run.run_id}`,
      crumbs: [indexCrumb(), [run.suite, link.suite(run.suite)], [`Run ${run.run_id}`, link.run(run.run_id)], ["Candidate against stable", null]],
      body,
    };
  }

  function compareMeasuresPanel(measures, alpha, labels = ["B (older)", "A (newer)"], paired = "Paired over the cases both runs have") {
    const rows = measures.map((m) => {
      const change = m.a_rate != null && m.b_rate != null ? m.a_rate - m.b_rate : null;
      return h("tr", { testid: "measure-row", class: m.significant ? "significant" : null, data: { skill: m.skill, measure: m.measure } },
        td([h("span", { class: "block" }, m.label || m.measure), code(m.skill, { class: "small" })]), td(count(m.cases), "num"),
        td(rateWithInterval(m.b_rate, m.b_interval), "num"), td(rateWithInterval(m.a_rate, m.a_interval), "num"),
        td(signedPoints(change), "num nowrap"),
        td(count(m.pass_to_fail), "num", { testid: "pass-to-fail" }), td(count(m.fail_to_pass), "num", { testid: "fail-to-pass" }),
        td([h("span", { testid: "mcnemar-p", class: "p-value block" }, formatP(m.p_value)), changeVerdict(m, change)], "num nowrap"));
    });
    return panel("Is the change real?", "compare-measures",
      h("p", { class: "muted" }, `${paired}; exact two-sided McNemar test, significant when p < ${alpha ?? 0.05}.`),
      table("measures-table", ["Measure", "#Cases", `#${labels[0]}`, `#${labels[1]}`, "#Change", "#Pass → fail", "#Fail → pass", "#McNemar p"], rows));
  }

  function rateWithInterval(rate, bounds) {
    const [low, high] = bounds || [];
    return [h("strong", {}, pct(rate)), h("span", { class: "muted small block" }, interval(low, high))];
  }

  function signedPoints(change) {
    if (change == null) return DASH;
    const sign = change > 0 ? "+" : change < 0 ? "−" : "±";
    return `${sign}${Math.abs(change * 100).toFixed(1)} pts`;
  }

  function changeVerdict(m, change) {
    if (!m.pass_to_fail && !m.fail_to_pass) return badge("same", "no flips");
    if (!m.significant) {
      const flips = (m.pass_to_fail || 0) + (m.fail_to_pass || 0);
      const said = `not significant (${flips} flip${flips === 1 ? "" : "s"})`;
      return m.underpowered ? badge("noise", `${said}; underpowered: ${m.cases} paired cases can never be significant`) : badge("noise", said);
    }
    return (change ?? m.fail_to_pass - m.pass_to_fail) < 0 ? badge("fail", "significant drop") : badge("pass", "significant rise");
  }

  function flipsPanel(title, testid, flips, suite, sides = ["B · older", "A · newer"]) {
    return panel(`${title} (${flips.length})`, testid, flips.length
      ? flips.map((flip) => flipView(flip, suite, sides))
      : h("p", { class: "empty" }, "None."));
  }

  function flipView(flip, suite, sides) {
    return h("article", { class: "card flip", testid: "flip", data: { skill: flip.skill, case: flip.case, repeat: flip.repeat ?? 0, direction: flip.direction } },
      h("header", { class: "flip-head" },
        h("h3", {}, code(flip.skill), " / ", h("a", { href: link.case(suite, flip.skill, flip.case), testid: "case-link" }, flip.case)),
        flip.repeat ? muted(`repeat ${flip.repeat}`) : null,
        h("span", { class: "flip-change" }, badge(flip.from), h("span", { "aria-label": "became" }, " → "), badge(flip.to))),
      h("div", { class: "sides" }, flipSide(flip.b, "b", sides[0]), flipSide(flip.a, "a", sides[1])),
      diffView(flip.diff || []));
  }

  function flipSide(side, key, heading) {
    const one = side || {};
    const hasOutput = one.output !== undefined && one.output !== null;
    return h("section", { class: `side side-${key}`, "aria-label": heading },
      h("div", { class: "side-head" }, h("span", { class: "side-name" }, heading), badge(one.outcome),
        muted(`${ms(one.duration_ms)} · ${usd(one.cost_usd)}`)),
      hasOutput ? h("pre", { class: "json output", testid: `output-${key}` }, pretty(one.output))
        : h("p", { class: "muted output", testid: `output-${key}` }, "No output."),
      one.error ? h("p", { class: "error-box" }, code(one.error.code || "ERROR"), " ", one.error.message || "") : null,
      gatesView(one.gates),
      checksView(one.checks),
      reviewView(one.review),
      attemptsView(one.attempts));
  }

  // design.md §12.3: the gates a case failed, in JUnit's order, each with its message.
  function gateTags(gates) {
    if (!Array.isArray(gates) || !gates.length) return null;
    return h("span", { class: "gates", testid: "gates" }, gates.map((g) =>
      h("span", { class: "flag bad gate", title: g.message, data: { gate: g.type } }, g.type)));
  }

  function gatesView(gates) {
    if (!Array.isArray(gates) || !gates.length) return null;
    return h("div", { class: "gates", testid: "failed-gates" }, h("h4", {}, "Why it failed"),
      h("ul", {}, gates.map((g) => h("li", { data: { gate: g.type } }, code(g.type), " ", g.message))));
  }

  // Each check: op, pointer, expected, actual and, when it failed, why.
  function checksView(checks) {
    if (!Array.isArray(checks) || !checks.length) return null;
    const value = (v) => (v === null || v === undefined ? DASH : code(typeof v === "string" ? v : JSON.stringify(v)));
    return h("div", { class: "checks", testid: "checks" }, h("h4", {}, `Checks (${checks.length})`),
      table("checks-table", ["Result", "Op", "Pointer", "Expected", "Actual", "Message"], checks.map((c) =>
        h("tr", { testid: "check-row", data: { op: c.op, pointer: c.pointer, pass: String(c.pass) } },
          td(badge(c.pass ? "pass" : "fail")), td(code(`${c.negate ? "not " : ""}${c.op}`)),
          td(c.pointer ? code(c.pointer) : DASH), td(value(c.expected)), td(value(c.actual)), td(c.message || DASH)))));
  }

  function inputView(input) {
    if (input === undefined || input === null) {
      return h("p", { class: "muted", testid: "case-input" }, "No input recorded (a run older than inputs kept).");
    }
    return h("details", { class: "input", open: true }, h("summary", {}, "Input"),
      h("pre", { class: "json", testid: "case-input" }, pretty(input)));
  }

  function reviewView(review) {
    if (!review || typeof review !== "object") return null;
    const results = Array.isArray(review.criteria_results) ? review.criteria_results : [];
    const notes = (title, list) => (Array.isArray(list) && list.length ? [h("h5", {}, title), h("ul", {}, list.map((item) => h("li", {}, String(item))))] : null);
    return h("div", { class: "review", testid: "review" },
      h("h4", {}, "Review ", "pass" in review ? badge(review.pass ? "pass" : "fail") : null),
      results.length ? h("ul", { class: "criteria" }, results.map((r) => h("li", {},
        badge(r.verdict), " ", code(r.criterion_id ?? "?"), r.confidence != null ? muted(` ${r.confidence}% sure`) : null,
        r.reasoning ? h("div", { class: "reasoning" }, r.reasoning) : null))) : null,
      notes("Issues", review.issues), notes("Suggested fixes", review.suggested_fixes));
  }

  function attemptsView(attempts) {
    if (!Array.isArray(attempts) || !attempts.length) return null;
    return h("details", { class: "attempts" }, h("summary", {}, `Attempts (${attempts.length})`),
      h("ol", {}, attempts.map((a) => h("li", {},
        h("div", {}, h("strong", {}, a.kind ?? "attempt"), a.role ? muted(` ${a.role}`) : null, a.model ? [" ", code(a.model)] : null,
          muted(` · ${ms(a.duration_ms)}`)),
        Array.isArray(a.errors) && a.errors.length ? h("ul", { class: "errors" }, a.errors.map((e) => h("li", {}, code(e.path || "/"), " ", e.message))) : null,
        a.raw ? h("pre", { class: "raw" }, a.raw) : null))));
  }

  function diffView(diff) {
    const json = (value) => (value === undefined ? "" : JSON.stringify(value));
    return h("div", { class: "diff", testid: "diff" }, h("h4", {}, "Structural diff, B → A"),
      diff.length ? h("ul", { class: "diff-list" }, diff.map((d) => h("li", { class: `diff-${d.op}`, data: { op: d.op, pointer: d.pointer } },
        h("span", { class: `op op-${d.op}` }, d.op), " ", code(d.pointer || "(root)", { class: "pointer" }), " ",
        "b" in d ? code(json(d.b), { class: "val old" }) : null,
        "b" in d && "a" in d ? h("span", { class: "arrow", "aria-hidden": "true" }, " → ") : null,
        "a" in d ? code(json(d.a), { class: "val new" }) : null)))
        : h("p", { class: "muted" }, "The two outputs are the same."));
  }

  // ---- case across runs ----

  function renderCase(data) {
    const runs = data.runs || [];
    const body = h("div", { class: "page case" },
      h("div", { class: "title" }, h("h1", {}, "Case ", h("span", { class: "id" }, data.case)),
        h("p", { class: "lede" }, "Skill ", code(data.skill), " in suite ", h("a", { href: link.suite(data.suite) }, data.suite),
          `, over the last ${runs.length} run${runs.length === 1 ? "" : "s"}.`)),
      stripPanel(runs),
      panel("Outputs, newest first", "case-runs", runs.length ? runs.map((run, i) => caseRunView(run, i + 1)).reverse() : h("p", { class: "empty" }, "No run has this case.")));
    return { title: `Case ${data.case}`, crumbs: [indexCrumb(), [data.suite, link.suite(data.suite)], [`${data.skill} / ${data.case}`, null]], body };
  }

  function stripPanel(runs) {
    const passes = runs.filter((run) => run.outcome === "pass").length;
    const changes = runs.slice(1).filter((run, i) => run.outcome !== runs[i].outcome).length;
    const cells = runs.map((run, i) => h("li", { class: `cell ${tone(run.outcome)}`, testid: "strip-cell", data: { run: run.run_id, outcome: run.outcome } },
      h("a", { href: link.run(run.run_id), title: `#${i + 1} ${run.run_id} · ${when(run.started_at)} · ${run.outcome}` },
        h("span", { class: "mark", "aria-hidden": "true" }, MARKS[run.outcome] || "•"),
        h("span", { class: "sr-only" }, `run ${run.run_id}: ${run.outcome}`))));
    return panel("Outcome over runs", "outcomes",
      h("ol", { class: "strip", testid: "case-strip", "aria-label": "Outcome per run, oldest first" }, cells),
      h("p", { class: "muted" }, `Oldest first. Passed ${passes} of ${runs.length}; the outcome changed ${changes} time${changes === 1 ? "" : "s"}.`));
  }

  function caseRunView(run, number) {
    const verdicts = Object.entries(run.verdicts || {});
    return h("article", { class: "card case-run", testid: "case-run", data: { run: run.run_id, outcome: run.outcome } },
      h("header", { class: "case-run-head" },
        muted(`#${number}`), h("a", { href: link.run(run.run_id), class: "id" }, run.run_id), badge(run.outcome),
        muted(`${when(run.started_at)} · ${ms(run.duration_ms)} · ${usd(run.cost_usd)}`),
        run.git_ref ? code(run.git_ref) : null, run.error_code ? code(run.error_code, { class: "error-code" }) : null),
      verdicts.length ? h("p", { class: "verdicts" }, verdicts.map(([criterion, verdict]) =>
        h("span", { class: `flag ${tone(verdict)}` }, `${criterion}: ${verdict}`))) : null,
      gatesView(run.gates),
      inputView(run.input),
      run.output !== undefined && run.output !== null
        ? h("pre", { class: "json output", testid: "case-output" }, pretty(run.output))
        : h("p", { class: "muted", testid: "case-output" }, "No output."),
      checksView(run.checks));
  }

  // ---- rollouts ----

  function renderRollouts(data) {
    const list = data.rollouts || [];
    const body = h("div", { class: "page rollouts" },
      h("div", { class: "title" }, h("h1", {}, "Rollouts")),
      list.length ? list.map(rolloutView) : panel(null, null, h("p", { class: "empty", testid: "no-rollouts" }, "No rollout is recorded in this history.")));
    return { title: "Rollouts", crumbs: [indexCrumb(), ["Rollouts", null]], body };
  }

  function trafficText(traffic) {
    if (typeof traffic !== "number") return traffic == null ? DASH : String(traffic);
    return traffic <= 1 ? pct(traffic) : `${traffic}%`;
  }

  function rolloutView(rollout) {
    const arms = Object.entries(rollout.arms || {}).map(([arm, a]) => h("tr", {},
      td(arm), td(count(a.calls), "num"), td(count(a.ok), "num"), td(a.calls ? pct(a.ok / a.calls) : DASH, "num"), td(count(a.samples), "num")));
    const decisions = (rollout.decisions || []).map((d) => h("tr", {},
      td(time(d.at), "nowrap"), td(badge(d.state)), td(trafficText(d.traffic), "num"), td(d.reason ?? "")));
    return panel(null, "rollout",
      h("h2", {}, code(rollout.skill), " ", muted(`v${rollout.stable_version} → v${rollout.candidate_version}`), " ", badge(rollout.state)),
      facts([["State", words(rollout.state)], ["Traffic to the candidate", trafficText(rollout.traffic)]]),
      table("arms-table", ["Arm", "#Calls", "#OK", "#OK rate", "#Samples"], arms),
      (rollout.measures || []).length ? h("div", { class: "charts" }, rollout.measures.map(rolloutChart)) : null,
      decisions.length ? [h("h3", {}, "Decisions"), table("decisions-table", ["At", "State", "#Traffic", "Reason"], decisions)] : null);
  }

  // The interval shown within ±0.5 (its first points span ±1 and would flatten the rest).
  function clipped(p) {
    const clamp = (v) => (v == null ? v : Math.max(-0.5, Math.min(0.5, v)));
    return { ...p, low: clamp(p.low), high: clamp(p.high) };
  }

  function rolloutChart(measure) {
    const points = (measure.points || []).map((p, i) => ({
      i, value: p.estimate, low: p.low, high: p.high, tip: `${when(p.at)}\n${measure.measure}: ${p.estimate} (${p.low} to ${p.high})`,
    }));
    const ticks = points.length ? [[0, when(measure.points[0].at)], [points.length - 1, when(measure.points[points.length - 1].at)]] : [];
    // The band can reach ±1 while little is counted: clip it to the axis, which fits the estimates.
    return h("figure", { class: "card chart", testid: "rollout-chart", data: { measure: measure.measure } },
      h("figcaption", {}, h("span", { class: "chart-title" }, measure.measure)),
      bandChart(points.length, points.map(clipped), points.length > 1 ? ticks : ticks.slice(0, 1),
        `${measure.measure}: candidate minus stable over time, with its always-valid interval`, differenceScale));
  }

  const PAGES = { suites: renderSuites, suite: renderSuite, run: renderRun, compare: renderCompare, case: renderCase, rollouts: renderRollouts, versions: renderVersions };

  if (!EXPORT) window.addEventListener("popstate", () => start());
  start();
}
