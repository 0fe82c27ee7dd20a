// Counts what Cloudflare bills for, in the real bundle, without touching the product's source: a
// copy of the bundle whose export block is replaced by thin subclasses and wrappers that count at
// the bindings.
//
//   DO requests     every call through a Durable Object stub (RPC method or fetch), counted where it
//                   is made, plus every alarm() invocation
//   DO SQLite       ctx.storage.sql.exec: statements, rows written (cursor.rowsWritten) and rows
//                   read (cursor.rowsRead, once a cursor has been read); setAlarm calls
//   D1              every statement's meta.rows_read / meta.rows_written (first() is answered from
//                   all(), the same rows); batches; exec()
//   R2              class A (put, list, createMultipartUpload, uploadPart, complete), class B (get,
//                   head), free (delete, abort), and bytes put
//
// Counters are per origin: "worker" (the fetch/scheduled handlers' env), or the Durable Object
// class whose env or storage made the call. GET /__bench/counters answers them (?reset to zero
// them); workerd runs the Worker and its objects in one isolate locally, so one global holds all.
import { copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";

/** Writes an instrumented copy of the bundle at `scriptPath` into `outdir`; returns its entry path. */
export function instrumentBundle(scriptPath, outdir) {
	const dir = path.dirname(scriptPath);
	mkdirSync(outdir, { recursive: true });
	for (const file of readdirSync(dir)) {
		if (file === path.basename(scriptPath) || file.endsWith(".map") || file === "README.md") continue;
		copyFileSync(path.join(dir, file), path.join(outdir, file));
	}
	const source = readFileSync(scriptPath, "utf8");
	// The bundle is minified: its export block is `export{a as AgentDO,…,c as default};` on the last line.
	const block = [...source.matchAll(/export\s*\{([^}]*)\};?/g)].at(-1);
	if (!block) throw new Error("instrumentBundle: no export block at the end of the bundle");
	const at = block.index;
	const names = block[1]
		.split(",")
		.map((s) => s.trim())
		.filter(Boolean)
		.map((s) => {
			const [local, exported = local] = s.split(/\s+as\s+/);
			return { local, exported };
		});
	const def = names.find((n) => n.exported === "default");
	const classes = names.filter((n) => n.exported !== "default");
	if (!def) throw new Error("instrumentBundle: the bundle has no default export");
	const shim = `
// ── bench instrumentation (bench/lib/instrument.mjs): counts at the bindings ──
${SHIM}
${classes
	.map(
		({ local, exported }) => `class ${local}$bench extends ${local} {
  constructor(ctx, env) {
    super(ctx, env);
    __benchAdopt(this, ctx, env, ${JSON.stringify(exported)});
  }
}
if (typeof ${local}.prototype.alarm === "function") {
  ${local}$bench.prototype.alarm = function (info) {
    __benchCount(${JSON.stringify(exported)}, "do_alarms");
    __benchCount(${JSON.stringify(exported)}, "do_requests");
    return ${local}.prototype.alarm.call(this, info);
  };
}`,
	)
	.join("\n")}
const __benchDefault = __benchWorker(${def.local});
export {
${classes.map(({ local, exported }) => `  ${local}$bench as ${exported},`).join("\n")}
  __benchDefault as default
};
`;
	const out = path.join(outdir, path.basename(scriptPath));
	writeFileSync(out, source.slice(0, at) + shim);
	return out;
}

/** GET /__bench/counters (optionally resetting them). */
export async function readCounters(w, reset = false) {
	const res = await w.fetch(`/__bench/counters${reset ? "?reset" : ""}`);
	if (res.status !== 200) throw new Error(`/__bench/counters: ${res.status}`);
	return res.json();
}

/** Sums counters over origins: { key: total }. */
export function totals(counters) {
	const out = {};
	for (const c of Object.values(counters)) for (const [k, v] of Object.entries(c)) out[k] = (out[k] ?? 0) + v;
	return out;
}

// Plain JavaScript, appended to the bundle as is.
const SHIM = String.raw`
const __bench = (globalThis.__droverBench ??= { counters: {} });
function __benchCount(origin, key, n = 1) {
  if (!n) return;
  const c = (__bench.counters[origin] ??= {});
  c[key] = (c[key] ?? 0) + n;
}
function __benchBind(target, value) {
  return typeof value === "function" ? value.bind(target) : value;
}
function __benchCursor(cursor, origin) {
  let read = 0;
  let written = cursor.rowsWritten;
  __benchCount(origin, "sql_rows_written", written);
  const sync = () => {
    const r = cursor.rowsRead;
    const w = cursor.rowsWritten;
    __benchCount(origin, "sql_rows_read", r - read);
    __benchCount(origin, "sql_rows_written", w - written);
    read = r;
    written = w;
  };
  const proxy = new Proxy(cursor, {
    get(t, p) {
      if (p === Symbol.iterator) return () => proxy;
      const v = Reflect.get(t, p);
      if (typeof v !== "function") return v;
      return (...a) => {
        const out = Reflect.apply(v, t, a);
        sync();
        return out;
      };
    },
  });
  return proxy;
}
function __benchCtx(ctx, origin) {
  const sql = new Proxy(ctx.storage.sql, {
    get(t, p) {
      if (p === "exec") {
        return (query, ...args) => {
          __benchCount(origin, "sql_execs");
          return __benchCursor(t.exec(query, ...args), origin);
        };
      }
      return __benchBind(t, Reflect.get(t, p));
    },
  });
  const storage = new Proxy(ctx.storage, {
    get(t, p) {
      if (p === "sql") return sql;
      const v = Reflect.get(t, p);
      if (typeof v === "function" && (p === "setAlarm" || p === "deleteAlarm" || p === "put" || p === "delete")) {
        return (...a) => {
          __benchCount(origin, "storage_" + String(p));
          return Reflect.apply(v, t, a);
        };
      }
      return __benchBind(t, v);
    },
  });
  return new Proxy(ctx, {
    get(t, p) {
      if (p === "storage") return storage;
      return __benchBind(t, Reflect.get(t, p));
    },
  });
}
function __benchD1(db, origin) {
  const meta = (r) => {
    __benchCount(origin, "d1_statements");
    __benchCount(origin, "d1_rows_read", r?.meta?.rows_read ?? 0);
    __benchCount(origin, "d1_rows_written", r?.meta?.rows_written ?? 0);
    if ((r?.meta?.rows_written ?? 0) > 0) __benchCount(origin, "d1_write_statements");
  };
  const real = new WeakMap();
  const wrap = (stmt) => {
    const w = {
      bind: (...a) => wrap(stmt.bind(...a)),
      async all() { const r = await stmt.all(); meta(r); return r; },
      async run() { const r = await stmt.run(); meta(r); return r; },
      async first(col) {
        const r = await stmt.all();
        meta(r);
        const row = r.results[0];
        if (row === undefined) return null;
        return col === undefined ? row : (row[col] ?? null);
      },
      async raw(opts) { __benchCount(origin, "d1_raw_unmetered"); return stmt.raw(opts); },
    };
    real.set(w, stmt);
    return w;
  };
  return {
    prepare: (q) => wrap(db.prepare(q)),
    async batch(stmts) {
      __benchCount(origin, "d1_batches");
      const rs = await db.batch(stmts.map((s) => real.get(s) ?? s));
      for (const r of rs) meta(r);
      return rs;
    },
    async exec(q) { __benchCount(origin, "d1_exec_unmetered"); return db.exec(q); },
    withSession: (...a) => db.withSession(...a),
    dump: () => db.dump(),
  };
}
function __benchR2(bucket, origin) {
  const A = (op) => { __benchCount(origin, "r2_class_a"); __benchCount(origin, "r2_" + op); };
  const B = (op) => { __benchCount(origin, "r2_class_b"); __benchCount(origin, "r2_" + op); };
  const F = (op) => { __benchCount(origin, "r2_free"); __benchCount(origin, "r2_" + op); };
  const size = (v) => (typeof v === "string" ? v.length : (v?.byteLength ?? 0));
  const upload = (u) => ({
    get key() { return u.key; },
    get uploadId() { return u.uploadId; },
    uploadPart(n, v, o) { A("uploadPart"); __benchCount(origin, "r2_bytes_put", size(v)); return u.uploadPart(n, v, o); },
    complete(parts) { A("completeMultipartUpload"); return u.complete(parts); },
    abort() { F("abortMultipartUpload"); return u.abort(); },
  });
  return {
    put(k, v, o) { A("put"); __benchCount(origin, "r2_bytes_put", size(v)); return bucket.put(k, v, o); },
    get(k, o) { B("get"); return bucket.get(k, o); },
    head(k) { B("head"); return bucket.head(k); },
    list(o) { A("list"); return bucket.list(o); },
    delete(k) { F("delete"); return bucket.delete(k); },
    async createMultipartUpload(k, o) { A("createMultipartUpload"); return upload(await bucket.createMultipartUpload(k, o)); },
    resumeMultipartUpload(k, id) { return upload(bucket.resumeMultipartUpload(k, id)); },
  };
}
function __benchNamespace(ns, origin, binding) {
  const stub = (s) =>
    new Proxy(s, {
      get(t, p) {
        if (p === "then") return undefined;
        const v = Reflect.get(t, p);
        if (typeof p !== "string" || typeof v !== "function") return v;
        return (...a) => {
          __benchCount(origin, "do_requests");
          __benchCount(origin, "do_call " + binding + "." + p);
          return Reflect.apply(v, t, a);
        };
      },
    });
  return new Proxy(ns, {
    get(t, p) {
      const v = Reflect.get(t, p);
      if (p === "get" || p === "getByName") return (...a) => stub(Reflect.apply(v, t, a));
      return __benchBind(t, v);
    },
  });
}
// workerd's DurableObject base class insists on the real state object, so the object is built
// with the real ctx and env, then its ctx, env and every field holding the SQL handle (in its own
// fields and theirs, a few levels down: the object's passes hold it, and their closing work too)
// are swapped for counting ones. Statements the constructor runs (schema migrations on each load)
// are not counted.
function __benchAdopt(self, ctx, env, origin) {
  const wctx = __benchCtx(ctx, origin);
  const wsql = wctx.storage.sql;
  const realSql = ctx.storage.sql;
  Object.defineProperty(self, "ctx", { value: wctx, writable: true, configurable: true });
  Object.defineProperty(self, "env", { value: __benchEnv(env, origin), writable: true, configurable: true });
  __benchSwapSql(self, realSql, wsql, 0, new Set());
}
function __benchSwapSql(holder, realSql, wsql, depth, seen) {
  if (depth > 3 || seen.has(holder)) return;
  seen.add(holder);
  for (const key of Object.keys(holder)) {
    const v = holder[key];
    if (v === realSql) holder[key] = wsql;
    else if (v && typeof v === "object" && !Array.isArray(v) && !(v instanceof Map) && !(v instanceof Set)) __benchSwapSql(v, realSql, wsql, depth + 1, seen);
  }
}
const __benchEnvs = new WeakMap();
function __benchEnv(env, origin) {
  const cached = __benchEnvs.get(env);
  if (cached && cached.origin === origin) return cached.env;
  const out = { ...env };
  for (const [name, value] of Object.entries(env)) {
    if (value === null || typeof value !== "object" && typeof value !== "function") continue;
    if (typeof value.idFromName === "function") out[name] = __benchNamespace(value, origin, name);
    else if (typeof value.prepare === "function" && typeof value.batch === "function") out[name] = __benchD1(value, origin);
    else if (typeof value.createMultipartUpload === "function") out[name] = __benchR2(value, origin);
  }
  __benchEnvs.set(env, { origin, env: out });
  return out;
}
function __benchWorker(handler) {
  const out = { ...handler };
  out.fetch = async (request, env, ctx) => {
    const url = new URL(request.url);
    if (url.pathname === "/__bench/counters") {
      const body = JSON.stringify(__bench.counters);
      if (url.searchParams.has("reset")) __bench.counters = {};
      return new Response(body, { headers: { "content-type": "application/json" } });
    }
    return handler.fetch(request, __benchEnv(env, "worker"), ctx);
  };
  if (handler.scheduled) out.scheduled = (controller, env, ctx) => handler.scheduled(controller, __benchEnv(env, "worker"), ctx);
  return out;
}
`;
