// app.js - askdb's page: pick a database, ask, watch the steps, read the rows.
//
// Talks to `askdb serve` (README, "The web page") with fetch alone:
// POST /api/ask with Accept: text/event-stream streams `queued`, `step`,
// `sql`, `rows`, `answer`, `error` and a last `done` event. Cancelling
// aborts the fetch; the server cancels the question when the connection
// closes. Everything the server or the model sends is put into the page as
// text (textContent), never as HTML, except the SQL that highlight.js has
// escaped; the answer in words is Markdown made into elements one by one
// (mdNodes). Libraries: highlight.js (SQL) and markdown-it as ES modules,
// Chart.js (UMD, window.Chart); all are compiled into the binary, nothing
// comes from the network.

import hljs from "./hljs-core.min.js";
import hljsSql from "./hljs-sql.min.js";
import markdownit from "./markdown-it.min.js";

hljs.registerLanguage("sql", hljsSql);

// html: false, so the model's HTML is text to markdown-it; breaks: a
// single line break is one (the model writes lines, not paragraphs).
const md = markdownit({ html: false, linkify: false, typographer: false, breaks: true });

const PAGE_ROWS = 25;
const LONG_CELL = 80;       // characters: a longer text wraps in its cell
const HISTORY_MAX = 100;
const QUESTION_MAX = 8192;   // characters (code points): the server refuses a longer question
const $ = (sel, root = document) => root.querySelector(sel);

const state = {
    db: null,              // the database's name
    conversation: null,    // conversation id for follow-ups
    controller: null,      // AbortController of the running question
    history: loadHistory(),
    histPos: -1,           // index into history while browsing with Up/Down
    draft: "",
    charts: new Set(),     // Chart instances, redrawn when the theme changes
    token: null,
    follow: true,          // the log follows the running question
    placed: 0,             // the log's scrollTop as the page last set it
};

// ---------------------------------------------------------------------------
// Small helpers
// ---------------------------------------------------------------------------

function el(tag, attrs = {}, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
        if (v === undefined || v === null || v === false) continue;
        if (k === "class") e.className = v;
        else if (k === "text") e.textContent = v;
        else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
        else e.setAttribute(k, v === true ? "" : v);
    }
    for (const kid of kids) {
        if (kid === null || kid === undefined || kid === false) continue;
        e.append(kid instanceof Node ? kid : String(kid));
    }
    return e;
}

function fmtMs(ms) {
    if (typeof ms !== "number") return "";
    return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10000 ? 2 : 1)} s`;
}

// An error class ("unknown_column") in words.
function words(cls) { return String(cls).replace(/_/g, " "); }

// The characters of a text as the server and JSON Schema count them:
// code points (an emoji is one), not UTF-16 units (String.length's two).
function chars(s) { return Array.from(s).length; }

function plural(n, one, many) { return `${n.toLocaleString()} ${n === 1 ? one : many}`; }

function loadHistory() {
    try {
        const h = JSON.parse(localStorage.getItem("askdb.history") || "[]");
        return Array.isArray(h) ? h.filter((s) => typeof s === "string") : [];
    } catch { return []; }
}

function remember(question) {
    // The server takes 8,192 characters a question: a longer one is
    // refused, and kept it would only eat the browser's few MB of storage.
    if (chars(question) > QUESTION_MAX) return;
    // Read again what is stored: another tab of the page may have added
    // its questions since this one loaded, and writing this tab's old
    // copy back would drop them.
    const h = loadHistory().filter((q) => q !== question);
    h.push(question);
    state.history = h.slice(-HISTORY_MAX);
    try { localStorage.setItem("askdb.history", JSON.stringify(state.history)); } catch { /* private mode */ }
}

// The status line under the box is a live region: a screen reader says
// each text put there. A question says "Asking…" when it starts and how
// it ended (answered(), noAnswer(), "Cancelled"); one that waits for a
// free worker says its place in the queue each time it moves (place())
// and "Asking…" again once it starts. Its steps are shown in its
// timeline and not said one by one (ten or so a question).
function setStatus(text) { $("#ask-status").textContent = text; }

// A question waiting for a worker: its place, as its step and the
// status line say it. position: the `queued` event's, 1 for the next to
// start (the questions running are not counted: they are not queued).
function place(position) {
    if (position <= 1) return "next in the queue";
    return `${plural(position - 1, "question", "questions")} ahead in the queue`;
}

// The end of an answered question: "Answered: 10 rows", "1 row", "no
// rows", and whether the rows were cut at the server's limit. rows: the
// `rows` event or the whole answer (row_count, truncated), or null.
function answered(rows) {
    if (!rows || typeof rows.row_count !== "number") return "Answered";
    const n = rows.row_count;
    if (rows.truncated)
        return `Answered: the first ${plural(n, "row", "rows")} (cut at the ${rows.truncated === "bytes" ? "byte" : "row"} limit)`;
    return `Answered: ${n === 0 ? "no rows" : plural(n, "row", "rows")}`;
}

// A failed question: the first line of why (the others list attempts).
function noAnswer(message) {
    const first = String(message || "").split("\n")[0].trim();
    return first ? `No answer: ${first}` : "No answer";
}

// ---------------------------------------------------------------------------
// The API: bearer token, JSON errors, 401 asks for a token and tries again
// ---------------------------------------------------------------------------

class ApiError extends Error {
    constructor(status, code, message, body) {
        super(message);
        this.status = status;
        this.code = code;
        this.body = body;
    }
}

function takeTokenFromUrl() {
    const m = /(?:^#|&)token=([^&]*)/.exec(location.hash);
    if (m) {
        state.token = decodeURIComponent(m[1]);
        try { sessionStorage.setItem("askdb.token", state.token); } catch { /* ignore */ }
        // The token leaves the address bar (and the history, and screenshots).
        history.replaceState(null, "", location.pathname + location.search);
    } else {
        try { state.token = sessionStorage.getItem("askdb.token"); } catch { /* ignore */ }
    }
}

let tokenPrompt = null;
// Ask for a token once, however many requests got a 401 at the same time.
function askToken(message) {
    if (tokenPrompt) return tokenPrompt;
    const dlg = $("#token-dlg");
    const err = $("#token-err");
    err.hidden = !message;
    err.textContent = message || "";
    $("#token-in").value = "";
    tokenPrompt = new Promise((resolve) => {
        const finish = (tok) => {
            $("#token-form").removeEventListener("submit", onSubmit);
            $("#token-cancel").removeEventListener("click", onCancel);
            dlg.removeEventListener("cancel", onCancel);
            if (dlg.open) dlg.close();
            tokenPrompt = null;
            resolve(tok);
        };
        const onSubmit = (ev) => {
            ev.preventDefault();
            const tok = $("#token-in").value.trim();
            if (tok) finish(tok);
        };
        const onCancel = (ev) => { ev.preventDefault(); finish(null); };
        $("#token-form").addEventListener("submit", onSubmit);
        $("#token-cancel").addEventListener("click", onCancel);
        dlg.addEventListener("cancel", onCancel);
        dlg.showModal();
        $("#token-in").focus();
    });
    return tokenPrompt;
}

// fetch() with the token; a 401 asks for a token and tries again, other
// errors become an ApiError with the server's {"error": {code, message}}.
async function api(path, opts = {}) {
    for (let tries = 0; ; tries++) {
        const headers = new Headers(opts.headers || {});
        if (state.token) headers.set("Authorization", `Bearer ${state.token}`);
        let res;
        try {
            res = await fetch(path, { ...opts, headers });
        } catch (e) {
            if (e.name === "AbortError") throw e;
            throw new ApiError(0, "network", serverGone(false));
        }
        if (res.status === 401 && tries < 5) {
            await res.body?.cancel();
            const tok = await askToken(state.token ? "That token was refused." : "");
            if (!tok) throw new ApiError(401, "unauthorized", "this server needs an access token; none was given");
            state.token = tok;
            try { sessionStorage.setItem("askdb.token", tok); } catch { /* ignore */ }
            continue;
        }
        if (!res.ok) {
            const body = await res.json().catch(() => null);
            const e = body && body.error;
            throw new ApiError(res.status, e && e.code || `http_${res.status}`,
                e && e.message || `the server answered ${res.status} ${res.statusText}`, body);
        }
        return res;
    }
}

// JSON.parse, but an integer past 2^53 keeps every digit: a BigInt (from
// the number's own text) instead of the double JSON.parse rounds it to
// (9007199254740993 read as ...992). Browsers without the reviver's
// source text keep the rounding.
function parseJson(text) {
    return JSON.parse(text, (key, v, ctx) =>
        typeof v === "number" && !Number.isSafeInteger(v) && ctx && typeof ctx.source === "string" &&
            /^-?\d+$/.test(ctx.source) ? BigInt(ctx.source) : v);
}

// JSON.stringify that writes a BigInt as the number it is.
function toJson(value, space) {
    return JSON.stringify(value, (key, v) => typeof v !== "bigint" ? v :
        JSON.rawJSON ? JSON.rawJSON(v.toString()) : v.toString(), space);
}

// A number of a result: a double or an exact big integer.
function isNum(v) { return typeof v === "number" || typeof v === "bigint"; }

async function apiJson(path, opts) {
    const res = await api(path, opts);
    return parseJson(await readBody(() => res.text()));
}

// What the page says when the server does not answer (fetch() failed:
// connection refused, a network error) or stopped answering in the middle
// of an answer (broke): not the browser's own words ("Failed to fetch",
// "NetworkError when attempting to fetch resource"), which name neither
// askdb nor what to do.
function serverGone(broke) {
    return broke ? `askdb serve at ${location.origin} stopped answering before the answer was complete. Is it still running?`
        : `askdb serve is not answering at ${location.origin}. Is it still running?`;
}

// A read of a response body; the connection breaking under it (the
// server stopped) is said as such, not as the browser's "network error".
async function readBody(read) {
    try {
        return await read();
    } catch (e) {
        if (e.name === "AbortError") throw e;
        throw new ApiError(0, "network", serverGone(true));
    }
}

// Read a text/event-stream body and call onEvent(name, data) for each
// event (data parsed as JSON). Resolves when the stream ends.
async function readSse(res, onEvent) {
    const reader = res.body.getReader();
    const dec = new TextDecoder();
    let buf = "";
    let name = "message";
    let data = [];
    const dispatch = () => {
        if (data.length) {
            const text = data.join("\n");
            let obj;
            try { obj = parseJson(text); } catch { obj = { text }; }
            onEvent(name, obj);
        }
        name = "message";
        data = [];
    };
    for (;;) {
        const { value, done } = await readBody(() => reader.read());
        if (done) break;
        buf += dec.decode(value, { stream: true });
        let nl;
        while ((nl = buf.search(/\r\n|\r|\n/)) >= 0) {
            const line = buf.slice(0, nl);
            buf = buf.slice(nl + (buf[nl] === "\r" && buf[nl + 1] === "\n" ? 2 : 1));
            if (line === "") { dispatch(); continue; }
            if (line.startsWith(":")) continue;
            const c = line.indexOf(":");
            const field = c < 0 ? line : line.slice(0, c);
            let val = c < 0 ? "" : line.slice(c + 1);
            if (val.startsWith(" ")) val = val.slice(1);
            if (field === "event") name = val;
            else if (field === "data") data.push(val);
        }
    }
    dispatch();
}

// ---------------------------------------------------------------------------
// Theme
// ---------------------------------------------------------------------------

function currentTheme() {
    const set = document.documentElement.dataset.theme;
    if (set) return set;
    return matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
}

function applyTheme(theme) {
    document.documentElement.dataset.theme = theme;
    // A button that says what it does ("Light" in the dark), not a toggle:
    // a toggle's name stays the same as it is pressed, and this one's was
    // "Switch to the light theme, pressed", which reads as light being on.
    const b = $("#theme");
    b.textContent = theme === "dark" ? "Light" : "Dark";
    b.setAttribute("aria-label", theme === "dark" ? "Switch to the light theme" : "Switch to the dark theme");
    for (const c of state.charts) restyleChart(c);
}

function initTheme() {
    let saved = null;
    try { saved = localStorage.getItem("askdb.theme"); } catch { /* ignore */ }
    applyTheme(saved === "dark" || saved === "light" ? saved : currentTheme());
    $("#theme").addEventListener("click", () => {
        const t = currentTheme() === "dark" ? "light" : "dark";
        try { localStorage.setItem("askdb.theme", t); } catch { /* ignore */ }
        applyTheme(t);
    });
}

// ---------------------------------------------------------------------------
// Databases and the schema sidebar
// ---------------------------------------------------------------------------

async function loadDatabases() {
    const sel = $("#db");
    try {
        const { databases } = await apiJson("/api/databases");
        sel.replaceChildren(...databases.map((d) =>
            el("option", { value: d.name, text: `${d.name} (${plural(d.tables, "table", "tables")})` })));
        sel.dataset.info = JSON.stringify(Object.fromEntries(databases.map((d) => [d.name, d])));
        if (!databases.length) {
            $("#schema-tree").replaceChildren(el("p", { class: "muted", text: "The server has no database (askdb serve --db NAME=FILE)." }));
            return;
        }
        let want = null;
        try { want = localStorage.getItem("askdb.db"); } catch { /* ignore */ }
        sel.value = databases.some((d) => d.name === want) ? want : databases[0].name;
        await selectDatabase(sel.value);
    } catch (e) {
        $("#schema-tree").replaceChildren(errorBox("Cannot list the databases", e));
    }
}

async function selectDatabase(name) {
    if (state.db === name) return;
    state.db = name;
    state.conversation = null;
    try { localStorage.setItem("askdb.db", name); } catch { /* ignore */ }
    const info = JSON.parse($("#db").dataset.info || "{}")[name];
    $("#db-info").textContent = info ? [info.engine, info.path].filter(Boolean).join(" · ") : "";
    // The tree is no live region: one was read out whole when it came,
    // every table of the database. A short status says what came
    // (filterSchema).
    const tree = $("#schema-tree");
    tree.replaceChildren(el("p", { class: "muted", text: "Reading the schema…" }));
    $("#schema-status").textContent = "";
    try {
        const schema = await apiJson(`/api/databases/${encodeURIComponent(name)}/schema`);
        if (state.db !== name) return;
        renderSchema(schema);
    } catch (e) {
        tree.replaceChildren(errorBox(`Cannot read the schema of ${name}`, e));
    }
}

function renderSchema(schema) {
    const tree = $("#schema-tree");
    const tables = schema.tables || [];
    if (!tables.length) {
        tree.replaceChildren(el("p", { class: "muted", text: "No tables." }));
        return;
    }
    tree.replaceChildren(...tables.map((t) => {
        const fks = new Map((t.foreign_keys || []).map((fk) => [fk.from, fk]));
        const rows = typeof t.rows === "number" ?
            `${t.rows_capped ? "≥ " : ""}${plural(t.rows, "row", "rows")}` : "";
        const cols = (t.columns || []).map((c) => {
            const fk = fks.get(c.name);
            return el("li", { "data-name": c.name.toLowerCase() },
                nameButton(c.name, `column ${c.name} of ${t.name}`),
                el("span", { class: "type", text: c.type || "" }),
                c.pk ? el("span", { class: "badge pk", title: "primary key", text: "PK" }) : null,
                fk ? el("span", { class: "badge fk", title: `references ${fk.table}(${fk.to || ""})`,
                    text: `→ ${fk.table}${fk.to ? "." + fk.to : ""}` }) : null,
                c.notnull && !c.pk ? el("span", { class: "badge", title: "NOT NULL", text: "not null" }) : null,
                (t.unique || []).some((u) => Array.isArray(u) ? u.length === 1 && u[0] === c.name : u === c.name) ?
                    el("span", { class: "badge", title: "unique", text: "unique" }) : null);
        });
        return el("details", { "data-name": t.name.toLowerCase() },
            el("summary", {},
                nameButton(t.name, `${t.kind === "view" ? "view" : "table"} ${t.name}`),
                t.kind === "view" ? el("span", { class: "badge view", text: "view" }) : null,
                el("span", { class: "meta muted", text: rows })),
            el("ul", { "aria-label": `columns of ${t.name}` }, ...cols));
    }));
    filterSchema();
}

function nameButton(name, label) {
    return el("button", {
        type: "button", class: "link name mono", text: name,
        "aria-label": `Insert ${label} into the question`,
        onclick: (ev) => { ev.preventDefault(); ev.stopPropagation(); insertName(name); },
    });
}

// Put a table or column name into the question at the cursor.
function insertName(name) {
    const q = $("#question");
    const word = /^[A-Za-z_][A-Za-z0-9_]*$/.test(name) ? name : `"${name.replace(/"/g, '""')}"`;
    const s = q.selectionStart ?? q.value.length;
    const e = q.selectionEnd ?? q.value.length;
    const before = q.value.slice(0, s);
    const after = q.value.slice(e);
    const pre = before && !/\s$/.test(before) ? " " : "";
    const post = after && !/^\s/.test(after) ? " " : "";
    q.value = before + pre + word + post + after;
    const pos = (before + pre + word + post).length;
    q.focus();
    q.setSelectionRange(pos, pos);
    if (window.matchMedia("(max-width: 760px)").matches) toggleSchema(false);
}

function filterSchema() {
    const needle = $("#schema-search").value.trim().toLowerCase();
    for (const d of $("#schema-tree").querySelectorAll("details")) {
        if (!needle) {
            // Search cleared: everything shown again, closed as it was found.
            if (d.dataset.searched) d.open = false;
            delete d.dataset.searched;
            d.hidden = false;
            for (const li of d.querySelectorAll("li")) li.hidden = false;
            continue;
        }
        d.dataset.searched = "1";
        const tableHit = d.dataset.name.includes(needle);
        let colHit = false;
        for (const li of d.querySelectorAll("li")) {
            const hit = li.dataset.name.includes(needle);
            li.hidden = !(hit || tableHit);
            colHit = colHit || hit;
        }
        d.hidden = !(tableHit || colHit);
        d.open = colHit;
    }
    // What came, or what a search left, said: the tree changes without a word.
    const n = $("#schema-tree").querySelectorAll("details:not([hidden])").length;
    $("#schema-status").textContent = !needle ? `${plural(n, "table", "tables")} in ${state.db}` :
        n ? plural(n, "table matches", "tables match") : "No table or column matches";
}

// Whether the schema is open over the page: on a phone, by its button.
function schemaOverPage() {
    return $("#schema").classList.contains("open") && $("#schema-toggle").offsetParent !== null;
}

function toggleSchema(open) {
    const s = $("#schema");
    const b = $("#schema-toggle");
    const now = open ?? !s.classList.contains("open");
    s.classList.toggle("open", now);
    b.setAttribute("aria-expanded", now ? "true" : "false");
    if (now) $("#schema-search").focus();
}

// ---------------------------------------------------------------------------
// The steps' timeline
// ---------------------------------------------------------------------------

// The model's calls besides the SQL and the words, by the prompt event's
// "for" (the agent's names).
const ASIDE = {
    plan: "Asking the model for a plan",
    plan_task: "Generating SQL for a step of the plan",
    qcheck: "Asking the model whether this is a question about the data",
    select: "Asking the model to pick one of the tied candidates",
};

// What one step event says: [icon class, what, detail].
function describeStep(ev) {
    switch (ev.step) {
    case "schema": return ["ok", "Read the schema",
        [ev.tables !== undefined && plural(ev.tables, "table", "tables"), ev.ms !== undefined && fmtMs(ev.ms)].filter(Boolean).join(", ")];
    case "values": return ev.error ? ["warn", "Value lookup failed", ev.error] :
        ["ok", "Looked up values", ev.matches !== undefined ?
            plural(Array.isArray(ev.matches) ? ev.matches.length : ev.matches, "match", "matches") : ""];
    case "link": {
        if (ev.error) return ["warn", "Picking the tables failed", ev.error];
        const n = Array.isArray(ev.tables) ? ev.tables.length : ev.tables;
        if (ev.whole || n === ev.of_tables) return ["ok", "Kept the whole schema", n !== undefined ? plural(n, "table", "tables") : ""];
        return ["ok", "Picked the tables", n !== undefined ? `${n} of ${ev.of_tables ?? "?"} tables` : ""];
    }
    case "examples": {
        // Learned pairs (askdb learn) or the bank's (source "bank").
        const bank = ev.source === "bank";
        if (ev.error) return ["warn", "Learned examples unavailable", ev.error];
        return ["ok", bank ? "Added examples from other databases" : "Added learned examples",
            ev.pairs !== undefined ? [plural(ev.pairs, "pair", "pairs"), ev.best && `closest: ${ev.best}`].filter(Boolean).join(", ") : ""];
    }
    // why: the agent's reason; a yes of the model's is only "the model".
    case "qcheck": return [ev.question === false ? "warn" : "ok",
        ev.question === false ? "Not a question about the data" : "Checked the question",
        ev.question !== false && ev.why === "the model" ? "the model: a question about the data" : ev.why || ""];
    // tasks: how many (a number, askdb.h); an older page read a list.
    // needed false: the question has no cue of several steps, and no plan
    // was asked for.
    case "plan": return ev.error ? ["warn", "Planning failed", ev.error] :
        ev.needed === false ? ["ok", "No plan needed", ""] :
        // Fewer than 2 tasks (the model: one query answers it) run no step
        // ahead of the final statement.
        ["ok", "Planned", typeof ev.tasks !== "number" ? "" :
            ev.tasks < 2 ? "one query answers it" : plural(ev.tasks, "task", "tasks")];
    case "prompt": {
        const what = ev.for === "answer" ? "Writing the answer in words" :
            ev.for && ev.for !== "sql" ? (ASIDE[ev.for] || `Asking the model (${words(ev.for)})`) :
            ev.first_candidate ? (ev.why === "unsure" ? "Not sure: generating more candidates"
                                                      : "Generating more candidates") :
            ev.why === "repeat" ? "Same query again: asking once more" :
            ev.attempt > 1 ? `Generating SQL, attempt ${ev.attempt}` : "Generating SQL";
        if (ev.first_candidate)
            return ["run", what, `candidates ${ev.first_candidate}-${ev.first_candidate + ev.candidates - 1}`];
        return ["run", what, ev.candidates > 1 ? `${ev.candidates} candidates` : ""];
    }
    case "reply": return ev.error ? ["bad", "The model failed", ev.error] :
        ev.settled && ev.reply == null ? ["ok", `Candidate ${ev.candidate} not asked`, "the vote was decided without it"] :
        [ev.cut ? "warn" : "ok", ev.candidate ? `The model replied (candidate ${ev.candidate})` : "The model replied", [fmtMs(ev.ms),
            ev.completion_tokens !== undefined && `${ev.completion_tokens} tokens`,
            ev.max_tokens_hit ? "cut: hit --max-tokens before it ended, left out" :
            ev.cut ? "cut: ran past the cap on the greedy reply's length, left out of the vote" : "",
            ev.settled ? "settled: stopped, the vote was decided without it" : "",
            ev.retries ? `${ev.retries} retries` : ""].filter(Boolean).join(", ")];
    case "validate": {
        // candidates: the error class of each ("none" when valid).
        const cands = Array.isArray(ev.candidates) ? ev.candidates : [];
        const bad = cands.filter((c) => c && c !== "none");
        if (ev.ok) {
            // settled: candidates not needed (no SQL, but not bad).
            const made = cands.length - (ev.settled || 0);
            return ["ok", cands.length > 1 ? "Validated the candidates" : "Validated the SQL",
                cands.length > 1 ? `${cands.length - bad.length} of ${made} valid` : ""];
        }
        return ["bad", "Validation failed", bad.join(", ")];
    }
    case "execute": {
        const parts = [`${plural(ev.rows ?? 0, "row", "rows")}`, fmtMs(ev.ms)];
        // truncated: 1 at the row limit, 2 at the byte limit (askdb.h's
        // askdb_result), or the answer's "rows" and "bytes".
        if (ev.truncated)
            parts.push(`cut at the ${ev.truncated === 2 || ev.truncated === "bytes" ? "byte" : "row"} limit`);
        if (ev.confidence !== undefined) {
            // votes: how many candidates gave each one's result.
            const agree = Array.isArray(ev.votes) ? ev.votes[(ev.candidate || 1) - 1] : ev.votes;
            return ["ok", "Voted on the candidates",
                [`confidence ${Math.round(ev.confidence * 100)}%`,
                    agree !== undefined ? `${agree} of ${ev.ran ?? "?"} agree` : "",
                    ev.settled ? `${ev.settled} not needed` : "",
                    ev.candidate ? `candidate ${ev.candidate} wins` : "", ...parts].filter(Boolean).join(", ")];
        }
        return ["ok", "Ran the query", parts.filter(Boolean).join(", ")];
    }
    // kind: the agent's name of the check (join_not_fk), said in words by
    // its hint; error: the checks could not run (out of memory).
    // instead: the candidate no check doubted, which stands in the
    // doubted winner's place (no repair is asked).
    case "check": return ev.error ? ["warn", "The result went unchecked", ev.error] :
        ev.instead ? ["ok", `A check doubted the result; candidate ${ev.instead}, which no check doubts, stands instead`,
            ev.hint || (ev.kind ? words(ev.kind) : "")] :
        ["warn", "A check doubted the result", ev.hint || (ev.kind ? words(ev.kind) : "")];
    case "error": return ["bad", `Attempt failed${ev.class ? ` (${words(ev.class)})` : ""}`, ev.message || ""];
    // The failed attempt or the doubting check just above says why.
    case "repair": return ["warn", ev.attempt ? `Repairing, attempt ${ev.attempt}` : "Repairing", ""];
    // A repair made without the model: requalify, join, or cast (a number
    // compared with text, which PostgreSQL refuses, compared as text).
    // ok false: the engine refuses the statement still (another fix may
    // follow, or the attempt fails).
    case "fix": return [ev.ok === false ? "warn" : "ok", ev.kind === "join" ? "Joined the table a column lives in" :
        ev.kind === "cast" ? "Cast a comparison to text" :
        ev.kind === "requalify" ? "Fixed a column's table" : "Fixed the SQL",
        [ev.changes, ev.ok === false && "the engine still refuses it"].filter(Boolean).join("; ")];
    case "select": return [ev.error ? "warn" : "ok", "Compared the tied candidates",
        ev.error ? `kept candidate ${ev.chosen}: ${ev.error}` : `candidate ${ev.chosen} of ${(ev.options || []).join(", ")}`];
    case "result": return ["ok", "The rows are ready", plural(ev.row_count ?? 0, "row", "rows")];
    case "answer_text": return ev.error ? ["warn", "Could not write the answer in words", ev.error] :
        ["ok", "Wrote the answer", ""];
    case "answer": return [ev.status === "ok" || ev.status === "empty" ? "ok" : "bad", "Done",
        ev.timings && ev.timings.total_ms !== undefined ? `total ${fmtMs(ev.timings.total_ms)}` : ""];
    default: return ["ok", ev.step || "step", ""];
    }
}

// stop: a step a cancel ended, neither done nor failed.
const ICONS = { ok: "✓", bad: "✗", warn: "!", run: "…", stop: "–" };

function addStep(turn, kind, what, detail, tMs) {
    const steps = turn.steps;
    // A running step ("…") is settled by the next one.
    for (const li of steps.querySelectorAll("li.run")) {
        li.classList.replace("run", "ok");
        li.querySelector(".icon").textContent = ICONS.ok;
        li.querySelector(".elapsed")?.remove();
    }
    const li = el("li", { class: kind },
        el("span", { class: "t", text: fmtMs(tMs ?? performance.now() - turn.t0) }),
        el("span", { class: "icon", "aria-hidden": "true", text: ICONS[kind] || "·" }),
        el("span", {}, el("span", { class: "what", text: what }),
            detail ? el("span", { class: "detail", text: ` — ${detail}` }) : null));
    steps.append(li);
    scrollToEnd(false, turn);
    return li;
}

// A step's detail (" — ...") says detail now, or nothing when empty.
function setDetail(li, detail) {
    const what = li.querySelector(".what");
    li.querySelector(".detail")?.remove();
    if (detail) what.after(el("span", { class: "detail", text: ` — ${detail}` }));
}

function settleSteps(turn, kind) {
    for (const li of turn.steps.querySelectorAll("li.run")) {
        li.classList.replace("run", kind);
        li.querySelector(".icon").textContent = ICONS[kind];
        li.querySelector(".elapsed")?.remove();
    }
}

// The running step says how long the question has taken so far: a slow
// model shows it is still working, not stuck.
function tickRunning(turn) {
    const li = turn.steps.querySelector("li.run:last-child");
    if (!li) return;
    let e = li.querySelector(".elapsed");
    if (!e) {
        e = el("span", { class: "elapsed muted" });
        li.lastElementChild.append(e);
    }
    e.textContent = ` (${fmtMs(performance.now() - turn.t0)} so far)`;
}

// Follow the newest question while the reader lets the page do so: to
// the end of the log, but never past the question's own heading, so that
// an answer taller than the view is shown from its start. A question
// starts following (force); the reader scrolling away from where the
// page put the log stops it, and scrolling back to the end resumes it.
// (Whether the log was near its end was asked after each addition, and
// an answer's rows, hundreds of pixels at once, ended the following.)
function scrollToEnd(force, turn) {
    const log = $("#log");
    if (force) state.follow = true;
    if (!state.follow) return;
    let to = log.scrollHeight - log.clientHeight;
    if (turn) {
        const top = turn.node.getBoundingClientRect().top - log.getBoundingClientRect().top + log.scrollTop;
        to = Math.min(to, top - 8);
    }
    log.scrollTop = Math.max(0, to);
    state.placed = log.scrollTop;
}

function watchLogScroll() {
    const log = $("#log");
    log.addEventListener("scroll", () => {
        state.follow = Math.abs(log.scrollTop - state.placed) < 2 ||
            log.scrollHeight - log.scrollTop - log.clientHeight < 120;
    });
}

// ---------------------------------------------------------------------------
// Values, the SQL, the table, the chart, downloads
// ---------------------------------------------------------------------------

function isBlob(v) { return v !== null && typeof v === "object" && typeof v.blob_hex === "string"; }

// How many decimals a number column of the table is shown with: its
// most, when each of its numbers has at most two (money, a percentage
// rounded to 0.1): 49.8 beside 111.72 reads as 49.80, and 50 as 50.00.
// 0 (shown as they are) when one has more (0.125, 0.30000000000000004:
// a ratio or a computed double, where added zeros would pass for
// measured digits) or is written with an exponent. Display only: the
// table adds zeros and never rounds; the sort, the chart and the
// downloads have the values as the server sent them.
function columnDecimals(rows, c) {
    let most = 0;
    for (const r of rows) {
        const v = r[c];
        if (typeof v !== "number") continue;   // NULL, or an exact big integer
        const m = /^-?\d+(?:\.(\d+))?$/.exec(String(v));
        if (!m || (m[1] || "").length > 2) return 0;
        most = Math.max(most, (m[1] || "").length);
    }
    return most;
}

// A number's text with decimals digits after the point (zeros added).
function withDecimals(v, decimals) {
    const s = String(v);
    if (!decimals) return s;
    const dot = s.indexOf(".");
    return (dot < 0 ? s + "." : s) + "0".repeat(decimals - (dot < 0 ? 0 : s.length - dot - 1));
}

// A cell's node; decimals: a number's (columnDecimals()).
function cellNode(v, decimals = 0) {
    if (v === null || v === undefined) return el("span", { class: "null", title: "NULL: no value", text: "NULL" });
    if (v === "") return el("span", { class: "empty", title: "empty text", text: "(empty)" });
    if (isBlob(v)) {
        const hex = v.blob_hex;
        return el("span", { class: "blob mono", title: `blob, ${hex.length / 2} bytes`,
            text: `x'${hex.length > 32 ? hex.slice(0, 32) + "…" : hex}'` });
    }
    const s = isNum(v) ? withDecimals(v, decimals) : String(v);
    if (typeof v !== "string") return document.createTextNode(s);
    // A long text (a description, a JSON document) or one of several
    // lines wraps within a bounded width, its lines and edge spaces kept:
    // on one line it pushed every later column thousands of pixels away.
    if (s.length > LONG_CELL || /[\r\n]/.test(s))
        return el("div", { class: "long" }, ...edgesMarked(s));
    const parts = edgesMarked(s);
    return parts.length === 1 && parts[0] === s ? document.createTextNode(s) : el("span", {}, ...parts);
}

// A text's white space at its start and end, which a cell shows as
// nothing (" x" looked like "x"), marked: each run in a span.ws that
// draws it as a faint box and says what it is (title); the text itself
// is unchanged (copied, sorted and downloaded as it is).
function edgesMarked(s) {
    const start = s.length - s.trimStart().length;
    const end = Math.max(start, s.trimEnd().length);
    if (start === 0 && end === s.length) return [s];
    const lead = s.slice(0, start), mid = s.slice(start, end), trail = s.slice(end);
    const mark = (ws, where) => {
        const what = /^ +$/.test(ws) ? plural(ws.length, "space", "spaces") :
            plural(ws.length, "white-space character", "white-space characters");
        return el("span", { class: "ws", text: ws, title: where ? `${what} ${where}` : `${what}, nothing else` });
    };
    return [lead && mark(lead, mid ? "at the start" : ""), mid, trail && mark(trail, "at the end")].filter(Boolean);
}

// Values sort: NULL first ascending, numbers by value, text by locale.
function compareValues(a, b) {
    const rank = (v) => v === null || v === undefined ? 0 : isNum(v) ? 1 : isBlob(v) ? 3 : 2;
    const ra = rank(a), rb = rank(b);
    if (ra !== rb) return ra - rb;
    if (ra === 1) return a < b ? -1 : a > b ? 1 : 0;   /* a double and a BigInt too */
    if (ra === 2) return String(a).localeCompare(String(b), undefined, { numeric: true });
    if (ra === 3) return a.blob_hex < b.blob_hex ? -1 : a.blob_hex > b.blob_hex ? 1 : 0;
    return 0;
}

function sqlBox(sql) {
    const code = el("code", { class: "hljs language-sql" });
    code.innerHTML = hljs.highlight(sql, { language: "sql", ignoreIllegals: true }).value;
    const copy = el("button", { type: "button", class: "copy", text: "Copy", "aria-label": "Copy the SQL" });
    copy.addEventListener("click", async () => {
        let ok = false;
        try {
            await navigator.clipboard.writeText(sql);
            ok = true;
        } catch {
            const ta = el("textarea", { class: "visually-hidden" });
            ta.value = sql;
            document.body.append(ta);
            ta.select();
            try { ok = document.execCommand("copy"); } catch { ok = false; }
            ta.remove();
        }
        copy.textContent = ok ? "Copied" : "Copy failed";
        setStatus(ok ? "SQL copied" : "Could not copy the SQL");
        setTimeout(() => { copy.textContent = "Copy"; }, 1500);
    });
    return el("div", { class: "sql-box" }, el("pre", { "aria-label": "SQL" }, code), copy);
}

// A table of columns/rows, sortable by any column, PAGE_ROWS a page.
function rowsTable(columns, rows) {
    const view = { sortCol: -1, dir: 1, page: 0, order: rows.map((_, i) => i) };
    const numeric = columns.map((_, c) => rows.length > 0 &&
        rows.every((r) => r[c] === null || isNum(r[c])) && rows.some((r) => isNum(r[c])));
    const decimals = columns.map((_, c) => numeric[c] ? columnDecimals(rows, c) : 0);
    const thead = el("thead");
    const tbody = el("tbody");
    const info = el("span", { class: "muted", "aria-live": "polite" });
    const prev = el("button", { type: "button", text: "Previous", "aria-label": "Previous page" });
    const next = el("button", { type: "button", text: "Next", "aria-label": "Next page" });
    const pages = () => Math.max(1, Math.ceil(rows.length / PAGE_ROWS));

    const headRow = el("tr", {}, ...columns.map((name, c) => {
        const th = el("th", { scope: "col", "aria-sort": "none" },
            el("button", { type: "button", text: name, title: `Sort by ${name}`,
                onclick: () => sortBy(c) }));
        if (numeric[c]) th.classList.add("num");
        // A column the model did not name is named by its expression,
        // hundreds of characters: on one line it pushed its values past
        // the view's edge. A long name wraps within a bounded width.
        if (name.length > LABEL_MAX) th.classList.add("long-name");
        return th;
    }));
    thead.append(headRow);

    function sortBy(c) {
        view.dir = view.sortCol === c ? -view.dir : 1;
        view.sortCol = c;
        view.order = rows.map((_, i) => i).sort((i, j) =>
            view.dir * compareValues(rows[i][c], rows[j][c]) || i - j);
        view.page = 0;
        headRow.querySelectorAll("th").forEach((th, i) =>
            th.setAttribute("aria-sort", i !== c ? "none" : view.dir > 0 ? "ascending" : "descending"));
        draw();
    }

    function draw() {
        const start = view.page * PAGE_ROWS;
        const slice = view.order.slice(start, start + PAGE_ROWS);
        tbody.replaceChildren(...slice.map((i) => el("tr", {}, ...rows[i].map((v, c) =>
            el("td", { class: numeric[c] ? "num" : null }, cellNode(v, decimals[c]))))));
        info.textContent = rows.length ?
            `Rows ${start + 1}–${start + slice.length} of ${rows.length.toLocaleString()}` : "No rows";
        prev.disabled = view.page === 0;
        next.disabled = view.page >= pages() - 1;
    }
    // Another page is read from its first row: the view kept its scroll,
    // and after reading to a page's end Next showed the next one's end.
    // The button the last (or first) page disables passes the focus to
    // the other one: it fell to the page's body, and Tab began again.
    const turnPage = (by, other) => {
        view.page += by;
        draw();
        scroller.scrollTop = 0;
        if (document.activeElement?.disabled) other.focus();
    };
    prev.addEventListener("click", () => turnPage(-1, next));
    next.addEventListener("click", () => turnPage(1, prev));
    draw();

    const table = el("table", { class: "rows" }, thead, tbody);
    const scroller = el("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": "Result rows" }, table);
    const pager = el("div", { class: "pager" }, prev, next, info);
    const wrap = el("div", { class: "rows-view" }, scroller, pager);
    // One page: no buttons, and no "Rows 1–3 of 3" above the summary's
    // "3 rows" (an empty result keeps its "No rows").
    if (pages() < 2) { prev.hidden = true; next.hidden = true; pager.hidden = rows.length > 0; }
    return wrap;
}

const DATE_RE = /^\d{4}(-\d{2}(-\d{2}([ T]\d{2}:\d{2}(:\d{2})?)?)?)?$/;
const DATE_NAME_RE = /(date|day|month|year|week|quarter|time|period|_at$)/i;
const KEY_RE = /^id$|_id$/i;

// A label longer than this is free text, not a name: the shop's longest
// product name has 27 characters, an e-mail 31, while a sentence of seven
// words passes 40; Chart.js writes each label on one line under its bar,
// where one of 40 characters or more is cut short or turned on its side.
const LABEL_MAX = 40;

// What each column holds: "number", "date", "text", "null" or "other".
function columnKinds(columns, rows) {
    return columns.map((_, c) => {
        let num = 0, text = 0, date = 0, nulls = 0;
        for (const r of rows) {
            const v = r[c];
            if (v === null) nulls++;
            else if (isNum(v)) num++;
            else if (typeof v === "string") { text++; if (DATE_RE.test(v)) date++; }
            else return "other";
        }
        if (num && !text) return "number";
        if (text && !num) return date === text ? "date" : "text";
        return nulls === rows.length ? "null" : "other";
    });
}

// A text column of free text (descriptions, comments, sentences): most
// of its values are too long to label a bar, and a chart of them says
// nothing a table does not. One long name among short ones is a label.
function longText(rows, c) {
    let long = 0, text = 0;
    for (const r of rows) {
        if (typeof r[c] !== "string") continue;
        text++;
        if (r[c].length > LABEL_MAX) long++;
    }
    return long * 2 > text;
}

// Which chart the result's shape asks for, or null: one label column
// (text, or a date) and one to four number columns, 2 to 500 rows.
// A text column of long free text labels no chart (longText()).
// Dates (or a year/month column) make a line, categories a bar chart.
// first: the chart shows every column but keys, so it comes before the
// table; a listing ("every order with its customer and status") keeps
// text the chart leaves out, and is a table first (its chart on the
// switch): drawn as a chart, its rows were a zigzag of prices by time.
function chartPlan(columns, rows) {
    if (rows.length < 2 || rows.length > 500 || columns.length < 2) return null;
    const kind = columnKinds(columns, rows);
    let label = kind.findIndex((k) => k === "date");
    if (label < 0) label = kind.findIndex((k, c) => k === "text" && !longText(rows, c));
    let dates = label >= 0 && kind[label] === "date";
    if (label < 0) {
        // Numbers only: a leading year/month-like integer column is the axis.
        if (kind[0] === "number" && DATE_NAME_RE.test(columns[0]) &&
            rows.every((r) => Number.isInteger(r[0]) || typeof r[0] === "bigint")) {
            label = 0;
            dates = true;
        } else {
            return null;
        }
    }
    // Keys (id, customer_id) are numbers but not measures.
    const values = kind.map((k, c) => (k === "number" && c !== label && !KEY_RE.test(columns[c]) ? c : -1))
        .filter((c) => c >= 0);
    if (!values.length || values.length > 4) return null;
    if (!dates && DATE_NAME_RE.test(columns[label]) && kind[label] !== "text") dates = true;
    const first = columns.every((name, c) => c === label || values.includes(c) || KEY_RE.test(name));
    return { type: dates ? "line" : "bar", label, values, first };
}

// Why chartPlan() gave no chart, in a few words: the first reason that
// applies, the rows, then the columns. Without 1 to 4 number columns
// (keys are no measures) there is nothing to draw, however long the
// text: the length of a label is said only when the numbers are there.
function chartWhyNot(columns, rows) {
    if (rows.length === 0) return "no rows";
    if (rows.length === 1) return "a single row";
    if (rows.length > 500) return "over 500 rows";
    if (columns.length < 2) return "a single column";
    const kind = columnKinds(columns, rows);
    const texts = kind.map((k, c) => (k === "text" ? c : -1)).filter((c) => c >= 0);
    const numbers = kind.filter((k, c) => k === "number" && !KEY_RE.test(columns[c])).length;
    if (numbers >= 1 && numbers <= 4 && texts.length && !kind.includes("date") &&
        texts.every((c) => longText(rows, c)))
        return `its text is too long to label a chart (over ${LABEL_MAX} characters)`;
    return "it needs a text or date column and 1 to 4 number columns";
}

function cssVar(name) { return getComputedStyle(document.documentElement).getPropertyValue(name).trim(); }

function chartColors() {
    return {
        fg: cssVar("--fg"), muted: cssVar("--muted"), line: cssVar("--line"),
        series: ["--chart-1", "--chart-2", "--chart-3", "--chart-4"].map(cssVar),
    };
}

function restyleChart(chart) {
    const c = chartColors();
    chart.data.datasets.forEach((d, i) => {
        d.borderColor = c.series[i % 4];
        d.backgroundColor = chart.config.type === "bar" ? c.series[i % 4] + "cc" : c.series[i % 4];
    });
    for (const axis of Object.values(chart.options.scales)) {
        axis.ticks.color = c.muted;
        axis.grid.color = c.line;
        if (axis.title) axis.title.color = c.muted;
    }
    chart.options.plugins.legend.labels.color = c.fg;
    chart.update("none");
}

// A column's name as a chart writes it (an axis title, the legend): a
// name past LABEL_MAX characters, an unnamed expression, is cut after its
// start; drawn whole on the axis it showed some middle part cut at both
// ends. The table and the chart's label for a screen reader have it whole.
function chartName(name) {
    const a = Array.from(name);
    return a.length > LABEL_MAX ? a.slice(0, LABEL_MAX - 1).join("") + "…" : name;
}

function makeChart(canvas, plan, columns, rows) {
    if (!window.Chart) return null;
    let order = rows.map((_, i) => i);
    if (plan.type === "line") order.sort((i, j) => compareValues(rows[i][plan.label], rows[j][plan.label]));
    const c = chartColors();
    const chart = new window.Chart(canvas, {
        type: plan.type,
        data: {
            labels: order.map((i) => rows[i][plan.label] === null ? "NULL" : String(rows[i][plan.label])),
            datasets: plan.values.map((col, k) => ({
                label: chartName(columns[col]),
                data: order.map((i) => typeof rows[i][col] === "bigint" ? Number(rows[i][col]) : rows[i][col]),
                borderColor: c.series[k % 4],
                backgroundColor: plan.type === "bar" ? c.series[k % 4] + "cc" : c.series[k % 4],
                tension: 0, pointRadius: rows.length > 60 ? 0 : 3,
            })),
        },
        options: {
            responsive: true, maintainAspectRatio: false, animation: false,
            plugins: { legend: { display: plan.values.length > 1, labels: { color: c.fg } } },
            scales: {
                x: { ticks: { color: c.muted }, grid: { color: c.line },
                    title: { display: true, text: chartName(columns[plan.label]), color: c.muted } },
                y: { beginAtZero: plan.type === "bar", ticks: { color: c.muted }, grid: { color: c.line },
                    title: { display: plan.values.length === 1, text: chartName(columns[plan.values[0]]), color: c.muted } },
            },
        },
    });
    state.charts.add(chart);
    return chart;
}

function csvField(v) {
    if (v === null || v === undefined) return "";            // NULL: an empty field
    // A blob as an SQL literal, as `askdb sql --format csv` writes it: bare
    // hex ("0123") reads back in a spreadsheet as the number 123.
    if (isBlob(v)) return `X'${v.blob_hex.toUpperCase()}'`;
    const s = String(v);
    // Empty text is "" so that it reads back apart from NULL.
    return s === "" || /[",\r\n]/.test(s) || /^\s|\s$/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

// UTF-8 with a byte-order mark: Excel reads a CSV without one in the
// machine's code page ("Zoë" as "ZoÃ«"); spreadsheets and pandas skip
// it, and Python's csv module wants encoding="utf-8-sig" (README).
function toCsv(columns, rows) {
    return "\ufeff" + [columns, ...rows].map((r) => r.map(csvField).join(",")).join("\r\n") + "\r\n";
}

function download(name, type, text) {
    const url = URL.createObjectURL(new Blob([text], { type }));
    const a = el("a", { href: url, download: name });
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// The rows of an answer: a bar of view switches and downloads, then the
// chart (when the shape allows one) or the table.
function resultView(columns, rows, meta) {
    const plan = chartPlan(columns, rows);
    const box = el("div", { class: "result" });
    const tableView = rowsTable(columns, rows);
    let chartView = null;
    const bar = el("div", { class: "result-bar" });
    const base = `askdb-${(meta.request_id || "result").replace(/[^A-Za-z0-9_-]/g, "")}`;
    const seg = el("div", { class: "seg", role: "group", "aria-label": "Show the result as" });
    const tBtn = el("button", { type: "button", class: "show-table", text: "Table", "aria-pressed": "true" });
    const cBtn = el("button", { type: "button", class: "show-chart", text: plan ? `Chart (${plan.type})` : "Chart", "aria-pressed": "false" });
    seg.append(tBtn, cBtn);
    // Why there is no chart, shown beside the disabled button and read
    // with it (a title was a tooltip: no touch screen or keyboard showed
    // it, and a disabled button takes no focus).
    let why = null;
    if (!plan) {
        cBtn.disabled = true;
        why = el("span", { class: "chart-off muted", id: `chart-off-${Math.random().toString(36).slice(2, 10)}`,
            text: `No chart: ${chartWhyNot(columns, rows)}` });
        cBtn.setAttribute("aria-describedby", why.id);
    }
    const show = (which) => {
        tBtn.setAttribute("aria-pressed", which === "table" ? "true" : "false");
        cBtn.setAttribute("aria-pressed", which === "chart" ? "true" : "false");
        tableView.hidden = which !== "table";
        if (which === "chart") {
            if (!chartView) {
                const canvas = el("canvas", { role: "img",
                    "aria-label": `${plan.type === "line" ? "Line" : "Bar"} chart of ${plan.values.map((c) => columns[c]).join(", ")} by ${columns[plan.label]}` });
                chartView = el("div", { class: "chart-wrap" }, canvas);
                box.append(chartView);
                makeChart(canvas, plan, columns, rows);
            }
            chartView.hidden = false;
        } else if (chartView) {
            chartView.hidden = true;
        }
    };
    tBtn.addEventListener("click", () => show("table"));
    cBtn.addEventListener("click", () => show("chart"));
    bar.append(seg, ...why ? [why] : [],
        el("span", { class: "spacer" }),
        el("button", { type: "button", class: "dl-csv", text: "CSV", "aria-label": "Download the rows as CSV",
            onclick: () => download(`${base}.csv`, "text/csv;charset=utf-8", toCsv(columns, rows)) }),
        el("button", { type: "button", class: "dl-json", text: "JSON", "aria-label": "Download the rows as JSON",
            onclick: () => download(`${base}.json`, "application/json",
                toJson({ sql: meta.sql, columns, rows, row_count: meta.row_count ?? rows.length,
                    truncated: meta.truncated ?? false }, 2) + "\n") }));
    box.append(bar, tableView);
    if (plan && plan.first && window.Chart) show("chart");
    return box;
}

function errorBox(title, err, attempts) {
    let msg = err.message || String(err);
    // One attempt without SQL (the model was not reached) says what the
    // message says: listed, it was the same sentence twice in the box.
    if (attempts && attempts.length === 1 && !attempts[0].sql && attempts[0].message &&
        msg.includes(attempts[0].message)) attempts = null;
    // The message may list the attempts again, one a line ("  attempt 1:
    // ..."): they follow. Its other lines (a note in parentheses: askdb
    // never changes the data, a reply hit --max-tokens) stay.
    if (attempts && attempts.length)
        msg = msg.split("\n").filter((l) => !/^\s+attempt \d+:/.test(l)).join("\n");
    const box = el("div", { class: "error-box", role: "alert" },
        el("h4", { text: title }),
        el("p", { class: "error-msg", text: msg }));
    if (attempts && attempts.length) {
        box.append(el("p", { text: `${plural(attempts.length, "attempt", "attempts")}:` }),
            el("ol", {}, ...attempts.map((a) => el("li", {},
                el("div", { text: [a.error && words(a.error), a.message].filter(Boolean).join(": ") || "failed" }),
                a.sql ? sqlBox(a.sql) : null))));
    }
    return box;
}

// ---------------------------------------------------------------------------
// Asking
// ---------------------------------------------------------------------------

function newTurn(question) {
    $("#empty-hint")?.remove();
    const node = $("#turn-tpl").content.firstElementChild.cloneNode(true);
    node.querySelector(".q").textContent = question;
    $("#log").append(node);
    return { node, t0: performance.now(), steps: node.querySelector(".steps"), out: node.querySelector(".out"),
        sql: null, rows: null, gotAnswer: false, failed: false };
}

function setBusy(busy) {
    // The Ask button is disabled under a keyboard's focus (Tab to it,
    // Enter), which would fall to the body: it goes to Cancel beside it.
    const fromAsk = busy && document.activeElement === $("#ask-btn");
    $("#cancel").hidden = !busy;
    if (fromAsk) $("#cancel").focus();
    $("#ask-btn").disabled = busy;
    $("#db").disabled = busy;
    $("#new-conv").disabled = busy;
}

function onEvent(turn, name, data) {
    switch (name) {
    case "queued":
        // Said when the place changes (askdb serve sends it only then).
        if (data.position && data.position === turn.place) break;
        turn.place = data.position;
        turn.waiting = true;
        // One step while it waits: a move in the queue changes its words.
        if (turn.waitStep?.classList.contains("run")) {
            setDetail(turn.waitStep, data.position ? place(data.position) : "");
        } else {
            turn.waitStep = addStep(turn, "run", "Waiting for the model",
                data.position ? place(data.position) : "");
        }
        if (data.position) setStatus(`Waiting: ${place(data.position)}`);
        break;
    case "step": {
        // The first step of a question that waited: it has started.
        if (turn.waiting) {
            turn.waiting = false;
            setStatus("Asking…");
            // The agent's t_ms count from its start, after the wait: the
            // steps are timed from the question's, as the wait was.
            turn.offset = performance.now() - turn.t0 - (data.t_ms || 0);
        }
        // `done` says all that "answer" says; "question" repeats the page.
        if (data.step === "answer" || data.step === "question") break;
        // The rows come next, before the words: the words' place says
        // they are being written (the answer takes it).
        if (data.step === "result") wordsPending(turn);
        // The rows stand; say where the words should be that they failed.
        if (data.step === "answer_text" && data.error) {
            wordsDone(turn);
            turn.out.prepend(el("p", { class: "notice", text: `The answer in words could not be written: ${data.error}` }));
        }
        const [kind, what, detail] = describeStep(data);
        addStep(turn, kind, what, detail, typeof data.t_ms === "number" ? data.t_ms + (turn.offset || 0) : undefined);
        break;
    }
    case "sql":
        turn.sql = data.sql;
        turn.out.append(sqlBox(data.sql));
        break;
    case "rows":
        turn.rows = data;
        if (data.truncated) {
            turn.out.append(el("p", { class: "notice", text: `Only the first ${plural(data.row_count, "row is", "rows are")} shown: the result was cut at the ${data.truncated === "bytes" ? "byte" : "row"} limit.` }));
        }
        turn.out.append(resultView(data.columns || [], data.rows || [], { ...data, sql: turn.sql, request_id: turn.requestId }));
        break;
    case "answer":
        wordsDone(turn);
        if (data.text) {
            turn.gotAnswer = true;
            turn.out.prepend(answerNode(data.text));
        }
        break;
    case "error":
        turn.failed = true;
        turn.error = data.error && data.error.message;
        settleSteps(turn, "bad");
        turn.out.append(errorBox("No answer", data.error || {}, data.attempts));
        break;
    case "done":
        finishTurn(turn, data);
        break;
    default:
        break;
    }
}

// The place of the answer in words while the model writes them (the rows
// are shown already). No live region: the status line says the same step.
function wordsPending(turn) {
    if (turn.pending) return;
    turn.pending = el("p", { class: "answer-pending muted", text: "Writing the answer in words…" });
    turn.out.prepend(turn.pending);
}

// The words came, or will not: their place goes.
function wordsDone(turn) {
    turn.pending?.remove();
    turn.pending = null;
}

// The `done` event: the whole answer. Fill in what the stream did not
// show (a server that sent only `done`, or JSON), then a summary line.
function finishTurn(turn, a) {
    turn.done = true;
    // A greeting, or a question no table of the database answers: the
    // reply says what it can answer instead.
    turn.notQuestion = a.not_a_question === true;
    wordsDone(turn);
    if (turn.followUp && a.conversation_started === true)
        turn.out.prepend(el("p", { class: "notice", text: "The server no longer had this conversation " +
            "(it restarted, or dropped it for newer ones): this question was asked without the earlier ones." }));
    if (a.conversation_id) state.conversation = a.conversation_id;
    if (a.request_id) turn.requestId = a.request_id;
    if (a.sql && !turn.sql && !turn.failed) {
        turn.sql = a.sql;
        turn.out.append(sqlBox(a.sql));
    }
    if (!turn.rows && a.columns && a.status !== "error" && !turn.failed) {
        turn.rows = a;
        turn.out.append(resultView(a.columns, a.rows || [], a));
    }
    if (a.answer && !turn.gotAnswer) {
        turn.gotAnswer = true;
        turn.out.prepend(answerNode(a.answer));
    }
    if (a.error && !turn.failed) {
        turn.failed = true;
        const err = typeof a.error === "string" ? { message: a.error } : a.error;
        turn.error = err.message;
        turn.out.append(errorBox("No answer", err, a.attempts));
    }
    settleSteps(turn, turn.failed ? "bad" : "ok");
    const bits = [];
    if (typeof a.row_count === "number" && !turn.failed) bits.push(plural(a.row_count, "row", "rows"));
    if (a.timings && typeof a.timings.total_ms === "number") bits.push(fmtMs(a.timings.total_ms));
    if (typeof a.llm_calls === "number") bits.push(plural(a.llm_calls, "model call", "model calls"));
    if (typeof a.confidence === "number" && a.candidates > 1)
        bits.push(`confidence ${Math.round(a.confidence * 100)}%` + (a.settled > 0 ? ` (${a.settled} not needed)` : ""));
    if (Array.isArray(a.attempts) && a.attempts.length > 1) bits.push(`${a.attempts.length} attempts`);
    if (bits.length) turn.out.append(el("p", { class: "summary muted", text: bits.join(" · ") }));
    addStep(turn, turn.failed ? "bad" : "ok", turn.failed ? "Gave up" : "Answered", "",
        a.timings && typeof a.timings.total_ms === "number" ? a.timings.total_ms + (turn.offset || 0) : undefined);
    foldSteps(turn, !turn.failed);
}

// The answer in words. Models write Markdown (**bold**, lists, `code`),
// which showed raw; it is rendered, safely: markdown-it parses it, and
// mdNodes() makes the elements. askdb's own note (the rows were cut, the
// candidates disagreed) follows the model's words as a last line "Note:
// ..."; it is not the model's Markdown, and would join a list's last item.
function answerNode(text) {
    const m = /\nNote: [^\n]*$/.exec(text);
    const words = m ? text.slice(0, m.index) : text;
    const box = el("div", { class: "answer" }, ...mdNodes(md.parse(words, {})));
    if (m) box.append(el("p", { class: "answer-note", text: m[0].slice(1) }));
    return box;
}

// The elements a Markdown answer may have, by markdown-it token type
// (paragraph_open: "paragraph"); a heading is a bold paragraph (the page
// has its own headings), a link is one only to http(s) or mail
// (linkTarget), and anything not listed is its text.
const MD_TAGS = {
    paragraph: "p", heading: "p", strong: "strong", em: "em", s: "s", blockquote: "blockquote",
    bullet_list: "ul", ordered_list: "ol", list_item: "li",
    table: "table", thead: "thead", tbody: "tbody", tr: "tr", th: "th", td: "td",
};

// markdown-it's tokens as DOM nodes, built with createElement and text
// nodes only: the model's text never reaches innerHTML, and no attribute
// is copied but a list's start and a checked link's address.
function mdNodes(tokens) {
    const root = document.createDocumentFragment();
    const stack = [root];
    const top = () => stack[stack.length - 1];
    const walk = (list) => {
        for (const t of list) {
            if (t.nesting === 1) {
                let node;
                if (t.hidden) node = top();   // a tight list's paragraph
                else if (t.type === "link_open") node = mdLink(t.attrGet("href"));
                else node = el(MD_TAGS[t.type.slice(0, -5)] || "span",
                    { class: t.type === "heading_open" ? "md-h" : null,
                        start: t.type === "ordered_list_open" && t.attrGet("start") || null });
                if (node !== top()) top().append(node);
                stack.push(node);
            } else if (t.nesting === -1) {
                const node = stack.length > 1 ? stack.pop() : null;
                if (node && node.mdAddress) node.append(` (${node.mdAddress})`);
            } else if (t.type === "inline") {
                walk(t.children || []);
            } else if (t.type === "softbreak" || t.type === "hardbreak") {
                top().append(el("br"));
            } else if (t.type === "code_inline") {
                top().append(el("code", { text: t.content }));
            } else if (t.type === "fence" || t.type === "code_block") {
                top().append(el("pre", {}, el("code", { text: t.content.replace(/\n$/, "") })));
            } else if (t.type === "hr") {
                top().append(el("hr"));
            } else if (t.content) {
                top().append(t.content);   // text, an image's alt text, anything else
            }
        }
    };
    walk(tokens);
    return [root];
}

// A link of the answer: an <a> to an absolute http, https or mailto
// address (its address in the title, opened apart from the page), else
// a span of its text with the address after it as text (a path of this
// server; markdown-it leaves javascript: and data: links unparsed).
function mdLink(href) {
    let url = null;
    try { url = new URL(href); } catch { /* relative, or not an address */ }
    if (!url || !["http:", "https:", "mailto:"].includes(url.protocol)) {
        const span = el("span", { class: "md-link-off" });
        span.mdAddress = String(href);
        return span;
    }
    return el("a", { href: url.href, title: url.href, target: "_blank", rel: "noopener noreferrer nofollow" });
}

// Once a question is done its steps fold away behind a button (a failed
// one keeps them open: they say what went wrong).
function foldSteps(turn, fold) {
    const steps = turn.steps;
    const n = steps.children.length;
    steps.id = steps.id || `steps-${Math.random().toString(36).slice(2, 10)}`;
    const btn = el("button", { type: "button", class: "link steps-toggle", "aria-controls": steps.id });
    const set = (open) => {
        steps.hidden = !open;
        btn.setAttribute("aria-expanded", open ? "true" : "false");
        btn.textContent = open ? "Hide the steps" : `Show the ${n} steps`;
    };
    btn.addEventListener("click", () => set(steps.hidden));
    steps.before(btn);
    set(!fold);
}

async function ask(question) {
    if (!state.db || state.controller) return;
    remember(question);
    state.histPos = -1;
    const turn = newTurn(question);
    const controller = new AbortController();
    state.controller = controller;
    setBusy(true);
    scrollToEnd(true);
    const ticker = setInterval(() => tickRunning(turn), 1000);
    addStep(turn, "run", "Asking", `database ${state.db}`, 0);
    setStatus("Asking…");
    const body = { database: state.db, question, options: { answer: $("#want-answer").checked } };
    if (state.conversation) body.conversation_id = state.conversation;
    turn.followUp = !!state.conversation;
    try {
        const res = await api("/api/ask", {
            method: "POST", signal: controller.signal,
            headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
            body: JSON.stringify(body),
        });
        const conv = res.headers.get("X-Conversation-Id");
        if (conv) state.conversation = conv;
        turn.requestId = res.headers.get("X-Request-Id");
        if (turn.requestId) turn.node.dataset.requestId = turn.requestId;
        if ((res.headers.get("Content-Type") || "").startsWith("text/event-stream")) {
            await readSse(res, (name, data) => onEvent(turn, name, data));
        } else {
            finishTurn(turn, parseJson(await readBody(() => res.text())));
        }
        if (!turn.done) throw new ApiError(0, "stream", serverGone(true));
        setStatus(turn.failed ? noAnswer(turn.error) :
            turn.notQuestion ? "Not a question about the data: see the reply" : answered(turn.rows));
    } catch (e) {
        if (e.name === "AbortError") {
            // Cancelled while the words were written: the rows stay.
            if (turn.pending && turn.rows)
                turn.out.prepend(el("p", { class: "notice", text: "Cancelled while the answer in words was written: the rows below are the answer." }));
            wordsDone(turn);
            settleSteps(turn, "stop");
            addStep(turn, "warn", "Cancelled", "you stopped this question");
            markCancelled(turn, question);
            setStatus("Cancelled");
        } else {
            wordsDone(turn);
            settleSteps(turn, "bad");
            turn.out.append(errorBox(e.status === 429 ? "The server is busy" : "The question failed", e,
                e.body && e.body.attempts));
            setStatus(noAnswer(e.message));
        }
    } finally {
        clearInterval(ticker);
        turn.steps.querySelector(".elapsed")?.remove();
        // Where the reader was: the box, the Cancel button (hidden now),
        // nowhere; or elsewhere (the schema's search, an earlier answer),
        // where they stay: the focus taken back to the box sent what they
        // typed there into the next question.
        const active = document.activeElement;
        const away = active && active !== document.body && active !== $("#cancel") &&
            active !== $("#ask-btn") && active !== $("#question");
        state.controller = null;
        setBusy(false);
        const cancelled = turn.node.classList.contains("cancelled");
        turn.node.dataset.state = cancelled ? "cancelled" : turn.failed || !turn.done ? "failed" : "done";
        // Whoever cancelled wants to see what they stopped, though they
        // had scrolled up to an earlier answer meanwhile; and its text is
        // back in the box to edit and ask again, unless they have typed
        // another question there since.
        scrollToEnd(cancelled, turn);
        if (turn.node.dataset.state === "failed") addAskAgain(turn, question);
        if (cancelled && !$("#question").value.trim()) {
            // Said: the focus was in the box already (Escape), and a
            // screen reader says nothing of a value changed under it.
            putInBox(question);
            setStatus(BACK_IN_BOX);
        } else if (!away) {
            $("#question").focus();
        }
    }
}

// The status of a cancel that put the question back in the box; the
// box's first edit ends it (it would say so of an emptied box).
const BACK_IN_BOX = "Cancelled: the question is back in the box, to edit and ask again";

// A cancelled question: marked so by its heading (read with it by a
// screen reader), with a button that puts it back in the box.
function markCancelled(turn, question) {
    turn.node.classList.add("cancelled");
    // The space: the heading is read "...? Cancelled", not "...?Cancelled".
    turn.node.querySelector(".q").append(" ", el("span", { class: "cancelled-mark", text: "Cancelled" }));
    addAskAgain(turn, question);
}

// The button of a cancelled or failed question that puts it back in the
// box to be edited (a failure often wants other words) and asked again;
// described by the question's heading, since several may have one.
function addAskAgain(turn, question) {
    const h = turn.node.querySelector(".q");
    h.id = h.id || `q-${Math.random().toString(36).slice(2, 10)}`;
    turn.out.append(el("p", { class: "again-bar" },
        el("button", { type: "button", class: "edit-again", text: "Edit and ask again",
            "aria-describedby": h.id, onclick: () => {
                putInBox(question);
                setStatus("The question is in the box: edit it, then press Enter to ask");
            } })));
}

// Put a question in the box, the cursor at its end, the focus there.
function putInBox(question) {
    const q = $("#question");
    q.value = question;
    state.histPos = -1;
    q.focus();
    q.setSelectionRange(q.value.length, q.value.length);
}

function cancel() {
    if (state.controller) state.controller.abort();
}

// ---------------------------------------------------------------------------
// The question box: Enter asks, Shift+Enter a new line, Up/Down history,
// Escape cancels
// ---------------------------------------------------------------------------

function initQuestionBox() {
    const q = $("#question");
    // A phone's box is two lines of some 35 characters: the keys of the
    // laptop's hint (Enter, Shift+Enter, Up) were cut, under a scroll bar.
    const long = q.placeholder;
    const narrow = matchMedia("(max-width: 760px)");
    const hint = () => { q.placeholder = narrow.matches ? "Ask a question about the data" : long; };
    narrow.addEventListener("change", hint);
    hint();
    q.addEventListener("input", () => {
        if ($("#ask-status").textContent === BACK_IN_BOX) setStatus("Cancelled");
    });
    $("#ask").addEventListener("submit", (ev) => {
        ev.preventDefault();
        const text = q.value.trim();
        if (state.controller) { setStatus("A question is running: wait for it, or cancel it (Escape)"); return; }
        if (!text) { setStatus("Type a question first"); return; }
        // Refused by the server, and too long to keep in the history: the
        // text stays in the box to be shortened.
        const n = chars(text);
        if (n > QUESTION_MAX) {
            setStatus(`The question is ${n.toLocaleString()} characters; the server takes at most ` +
                `${QUESTION_MAX.toLocaleString()}: shorten it`);
            return;
        }
        if (!state.db) {
            // No database yet (the token was not given, the list failed):
            // the question stays in the box, and the list is asked again.
            setStatus("No database to ask yet: reading the list again");
            loadDatabases();
            return;
        }
        q.value = "";
        ask(text);
    });
    q.addEventListener("keydown", (ev) => {
        if (ev.key === "Enter" && !ev.shiftKey && !ev.isComposing) {
            ev.preventDefault();
            $("#ask").requestSubmit();
        } else if (ev.key === "Escape" && state.controller) {
            ev.preventDefault();
            cancel();
        } else if (ev.key === "ArrowUp" && !q.value.slice(0, q.selectionStart).includes("\n")) {
            // With the questions other tabs of the page have asked since.
            if (state.histPos < 0) state.history = loadHistory();
            if (!state.history.length) return;
            ev.preventDefault();
            if (state.histPos < 0) { state.draft = q.value; state.histPos = state.history.length; }
            // An entry the box already shows (a cancelled question put
            // back) is passed over: Up that changed nothing looked dead.
            let i = state.histPos - 1;
            while (i > 0 && state.history[i] === q.value) i--;
            state.histPos = Math.max(0, i);
            q.value = state.history[state.histPos];
            q.setSelectionRange(q.value.length, q.value.length);
        } else if (ev.key === "ArrowDown" && state.histPos >= 0 && !q.value.slice(q.selectionEnd).includes("\n")) {
            ev.preventDefault();
            state.histPos++;
            if (state.histPos >= state.history.length) {
                state.histPos = -1;
                q.value = state.draft;
            } else {
                q.value = state.history[state.histPos];
            }
            q.setSelectionRange(q.value.length, q.value.length);
        }
    });
    $("#cancel").addEventListener("click", cancel);
    // Escape anywhere closes the schema where it opens over the page (a
    // phone), else cancels; but in the schema's search with text in it,
    // where it is the browser's key to clear the search.
    document.addEventListener("keydown", (ev) => {
        if (ev.key !== "Escape" || ev.defaultPrevented || $("#token-dlg").open) return;
        if (ev.target.matches("input[type=search]") && ev.target.value !== "") return;
        if (schemaOverPage()) {
            // The focus, if it was in the schema, goes back to its button;
            // elsewhere (the question box) it stays.
            const inside = $("#schema").contains(document.activeElement) || document.activeElement === document.body;
            ev.preventDefault();
            toggleSchema(false);
            if (inside) $("#schema-toggle").focus();
        } else if (state.controller) {
            cancel();
        }
    });
}

function newConversation() {
    state.conversation = null;
    for (const c of state.charts) c.destroy();
    state.charts.clear();
    $("#log").replaceChildren(el("p", { id: "empty-hint", class: "muted empty-hint",
        text: "New conversation: the next question starts afresh." }));
    setStatus("New conversation");
    $("#question").focus();
}

// Another database: a new conversation, but the answers so far stay on the
// page, under a line that says where the new one begins.
function switchDatabase(name) {
    state.conversation = null;
    if ($("#log").querySelector(".turn")) {
        $("#empty-hint")?.remove();
        $("#log").append(el("p", { class: "muted conv-divider", role: "separator",
            text: `Now asking ${name}: a new conversation starts here.` }));
        scrollToEnd();
    }
    setStatus(`Database ${name}`);
}

// ---------------------------------------------------------------------------

function init() {
    takeTokenFromUrl();
    initTheme();
    initQuestionBox();
    watchLogScroll();
    window.addEventListener("hashchange", () => {
        if (/token=/.test(location.hash)) { takeTokenFromUrl(); loadDatabases(); }
    });
    $("#db").addEventListener("change", (ev) => {
        switchDatabase(ev.target.value);
        selectDatabase(ev.target.value);
    });
    $("#schema-search").addEventListener("input", filterSchema);
    $("#schema-toggle").addEventListener("click", () => toggleSchema());
    $("#new-conv").addEventListener("click", newConversation);
    const want = $("#want-answer");
    try { want.checked = localStorage.getItem("askdb.answer") !== "0"; } catch { /* ignore */ }
    want.addEventListener("change", () => {
        try { localStorage.setItem("askdb.answer", want.checked ? "1" : "0"); } catch { /* ignore */ }
    });
    loadDatabases();
    $("#question").focus();
    document.documentElement.dataset.ready = "1";
}

init();
