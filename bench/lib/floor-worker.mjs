// The floor for a drover job: a tiny Worker of our own, in its own workerd (Miniflare), with the
// same kinds of bindings (a SQLite-backed Durable Object, D1 with drover's `jobs` table and
// indexes, R2), that does only the storage writes one job needs and nothing else.
//
// POST /output?lines=&line_bytes=[&tool_url=]  → the output floor (see OutputFloorDO below).
// POST /claims/tick?n=&instant=[&from=&to=]  → the claim floor (see ClaimAgentFloorDO below): 16
// shards (or shards [from, to)) calling n agents' objects, each writing one ledger row and setting an alarm.
//
// POST /job?sql_rows=&d1_writes=&d1_batches=&r2_puts=&r2_bytes=&agent=  → one Durable Object request (RPC) in
// which the object, in drover's order,
//   1. inserts `sql_rows` single-row records into its SQLite (committed before the answer),
//   2. runs `d1_writes` upserts of one job row into D1's `jobs` (insert, then status changes that
//      move the row in the status indexes, as drover's index flushes do) in drover's `d1_batches`
//      round trips: all but the last carry one upsert each, awaited on its own,
//   3. puts `r2_puts` objects of `r2_bytes` bytes to R2, each awaited,
//   4. sends the last round trip, a batch of the remaining upserts, the row's final one last, as
//      drover writes its index's final row (with the count of its status) after R2,
// and answers with what it did, counted at the bindings (SQLite cursor.rowsWritten, D1 meta, R2
// operations), and with the final row's updated_at: D1's clock as it wrote the row, the same stamp
// drover's index rows carry, so both are timed from the request to their final row in D1. With
// model_calls= / tool_calls= it also makes that many requests to model_url (the emulator,
// streamed) and tool_url (the bench's hook) after the first upsert: the floor plus the agent's own
// time.
import { readFileSync } from "node:fs";
import path from "node:path";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { unstable_splitSqlQuery } from "wrangler";
import { ROOT, workerdPids } from "./local-worker.mjs";

const SCRIPT = String.raw`
import { DurableObject } from "cloudflare:workers";

export class FloorDO extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS writes (id INTEGER PRIMARY KEY, job_id TEXT NOT NULL, seq INTEGER NOT NULL, body TEXT NOT NULL)");
  }
  async job(plan) {
    const counts = { sql_execs: 0, sql_rows_written: 0, d1_statements: 0, d1_write_statements: 0, d1_rows_written: 0, d1_rows_read: 0, r2_class_a: 0, r2_put: 0, r2_bytes_put: 0 };
    const jobId = "job-2026-01-01-" + Math.random().toString(36).slice(2, 8).padEnd(6, "0");
    const at = Date.now();
    for (let i = 0; i < plan.sql_rows; i++) {
      const c = this.ctx.storage.sql.exec("INSERT INTO writes (job_id, seq, body) VALUES (?, ?, ?)", jobId, i, '{"type":"system","subtype":"bench","content":"a job state change"}');
      counts.sql_execs++;
      counts.sql_rows_written += c.rowsWritten;
    }
    const statuses = ["pending", "running", "completed"];
    let finalWrittenAt = null;
    const upsertStatement = (i) => {
      const status = statuses[Math.min(i, statuses.length - 1)];
      return this.env.DB.prepare(
          "INSERT INTO jobs (id, agent, schedule, trigger_type, status, exit_reason, dispatch, scheduled_instant, created_at, started_at, finished_at, duration_seconds, summary, revision, updated_at) " +
            "VALUES (?, ?, NULL, 'manual', ?, NULL, 'manual', NULL, ?, NULL, NULL, NULL, NULL, ?, CAST(unixepoch('subsec') * 1000 AS INTEGER)) " +
            "ON CONFLICT (id) DO UPDATE SET status = excluded.status, revision = excluded.revision, updated_at = excluded.updated_at WHERE excluded.revision > jobs.revision " +
            "RETURNING updated_at",
        ).bind(jobId, plan.agent, status, at, i + 1);
    };
    const note = (r) => {
      counts.d1_statements++;
      if ((r.meta.rows_written ?? 0) > 0) counts.d1_write_statements++;
      counts.d1_rows_written += r.meta.rows_written ?? 0;
      counts.d1_rows_read += r.meta.rows_read ?? 0;
      finalWrittenAt = r.results[0]?.updated_at ?? finalWrittenAt;
    };
    // drover's D1 round trips: one statement each but the last, which carries the rest (its final
    // row's batch) after the R2 put.
    const trips = Math.min(plan.d1_batches || plan.d1_writes, plan.d1_writes);
    for (let i = 0; i < trips - 1; i++) note(await upsertStatement(i).all());
    // The job's own calls, when asked: the same number of model requests (streamed, read to the end)
    // and tool requests a drover job makes, so the floor can include the agent's own time.
    for (let i = 0; i < (plan.model_calls ?? 0); i++) {
      const res = await fetch(plan.model_url + "/v1/messages", {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": "floor", "anthropic-version": "2023-06-01" },
        body: JSON.stringify({ model: "claude-sonnet-5-5", max_tokens: 256, stream: true, messages: [{ role: "user", content: "floor" }] }),
      });
      await res.text();
    }
    for (let i = 0; i < (plan.tool_calls ?? 0); i++) {
      const res = await fetch(plan.tool_url, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      await res.text();
    }
    const body = new Uint8Array(plan.r2_bytes).fill(97);
    for (let i = 0; i < plan.r2_puts; i++) {
      await this.env.OUTPUT.put("jobs/" + plan.agent + "/" + jobId + (i === 0 ? "" : "-" + i) + ".jsonl", body);
      counts.r2_class_a++;
      counts.r2_put++;
      counts.r2_bytes_put += body.byteLength;
    }
    if (trips > 0) {
      const last = Array.from({ length: plan.d1_writes - (trips - 1) }, (_, k) => upsertStatement(trips - 1 + k));
      for (const r of await this.env.DB.batch(last)) note(r);
    }
    counts.final_written_at = finalWrittenAt;
    return counts;
  }
}

// The output floor: the least a job writing \`lines\` lines of \`line_bytes\` bytes can do with them
// under drover's design. Each line is written to the object's SQLite and committed as it comes (the
// copy streaming and crash recovery read); at the end the lines are read back 1 MiB at a time into
// 5 MiB parts of one R2 multipart upload, and deleted.
export class OutputFloorDO extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS lines (line INTEGER PRIMARY KEY, body TEXT NOT NULL)");
  }
  async output(lines, lineBytes, key, toolUrl) {
    const sql = this.ctx.storage.sql;
    const filler = JSON.stringify({ type: "tool_result", result: "x".repeat(lineBytes) });
    for (let i = 1; i <= lines; i++) {
      // With a tool URL, each line's content is fetched first, as the job's tool results are.
      const body = toolUrl
        ? JSON.stringify({ type: "tool_result", result: await (await fetch(toolUrl, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ input: { bytes: lineBytes } }) })).text() })
        : filler;
      sql.exec("INSERT INTO lines (line, body) VALUES (?, ?)", i, body);
      await this.ctx.storage.sync();
    }
    const upload = await this.env.OUTPUT.createMultipartUpload(key);
    const parts = [];
    const PART = 5 * 1024 * 1024;
    const encoder = new TextEncoder();
    let part = new Uint8Array(PART);
    let filled = 0;
    let after = 0;
    let bytes = 0;
    const flush = async () => {
      parts.push(await upload.uploadPart(parts.length + 1, part.subarray(0, filled)));
      part = new Uint8Array(PART);
      filled = 0;
    };
    for (;;) {
      const rows = [];
      let batch = 0;
      for (const row of sql.exec("SELECT line, body FROM lines WHERE line > ? ORDER BY line", after)) {
        rows.push(row);
        batch += row.body.length;
        if (batch >= 1024 * 1024) break;
      }
      if (rows.length === 0) break;
      for (const row of rows) {
        let data = encoder.encode(row.body + "\n");
        bytes += data.length;
        while (data.length > 0) {
          const n = Math.min(PART - filled, data.length);
          part.set(data.subarray(0, n), filled);
          filled += n;
          data = data.subarray(n);
          if (filled === PART) await flush();
        }
        after = row.line;
      }
    }
    if (filled > 0 || parts.length === 0) await flush();
    await upload.complete(parts);
    sql.exec("DELETE FROM lines");
    return { bytes, parts: parts.length };
  }
}

// The claim floor: the least a cron tick can do per due agent and still claim durably. One object
// per agent, woken by its shard; one ledger row written (unique per instant, so a repeat is a no-op)
// and an alarm set within the start spread when the row is new. The alarm itself does nothing.
export class ClaimAgentFloorDO extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    ctx.storage.sql.exec("CREATE TABLE IF NOT EXISTS ledger (instant INTEGER PRIMARY KEY, claimed_at INTEGER NOT NULL)");
  }
  async claim(name, instant) {
    const written = this.ctx.storage.sql.exec("INSERT OR IGNORE INTO ledger (instant, claimed_at) VALUES (?, ?)", instant, Date.now()).rowsWritten;
    if (written > 0) {
      let h = 0;
      for (let i = 0; i < name.length; i++) h = (Math.imul(h, 31) + name.charCodeAt(i)) >>> 0;
      await this.ctx.storage.setAlarm(Date.now() + (h % 5000));
    }
    return written;
  }
  async alarm() {}
}

// A shard of the claim floor: its agents are the names i ≡ shard (mod 16); 32 calls in flight, as drover's shards.
export class ClaimShardFloorDO extends DurableObject {
  async tick(shard, shards, n, instant) {
    const names = [];
    for (let i = shard; i < n; i += shards) names.push("floor-" + String(i + 1).padStart(5, "0"));
    let claimed = 0;
    let next = 0;
    const lane = async () => {
      for (let i = next++; i < names.length; i = next++) {
        const written = await this.env.CLAIM_AGENT.getByName(names[i]).claim(names[i], instant);
        claimed += written;
      }
    };
    await Promise.all(Array.from({ length: Math.min(32, names.length) }, lane));
    return claimed;
  }
}

export default {
  async fetch(request, env) {
    const q = new URL(request.url).searchParams;
    if (new URL(request.url).pathname === "/output") {
      const done = await env.OUTPUT_FLOOR.getByName("output").output(Number(q.get("lines")), Number(q.get("line_bytes")), "jobs/floor/" + crypto.randomUUID() + ".jsonl", q.get("tool_url"));
      return Response.json(done);
    }
    if (new URL(request.url).pathname === "/claims/tick") {
      // from/to: the shards this process runs when the bench splits the 16 over several workerd.
      const shards = 16;
      const from = Number(q.get("from") ?? 0);
      const to = Number(q.get("to") ?? shards);
      const counts = await Promise.all(
        Array.from({ length: to - from }, (_, k) => env.CLAIM_SHARD.getByName("shard-" + (from + k)).tick(from + k, shards, Number(q.get("n")), Number(q.get("instant")))),
      );
      return Response.json({ claimed: counts.reduce((a, b) => a + b, 0) });
    }
    const num = (k) => Number(q.get(k) ?? 0);
    const plan = {
      sql_rows: num("sql_rows"), d1_writes: num("d1_writes"), d1_batches: num("d1_batches"), r2_puts: num("r2_puts"), r2_bytes: num("r2_bytes"), agent: q.get("agent") ?? "floor",
      model_calls: num("model_calls"), model_url: q.get("model_url"), tool_calls: num("tool_calls"), tool_url: q.get("tool_url"),
    };
    const counts = await env.FLOOR.getByName(plan.agent).job(plan);
    return Response.json({ ...counts, do_requests: 1 });
  },
};
`;

/** Starts the floor Worker; resolves to { job(plan) → counts, dispose, pid }. */
export async function startFloorWorker({ persistDir }) {
	const before = new Set(workerdPids());
	const mf = new Miniflare(
		convertV4MiniflareOptions({
			workers: [
				{
					name: "floor",
					modulesRoot: persistDir,
					modules: [{ type: "ESModule", path: path.join(persistDir, "floor.js"), contents: SCRIPT }],
					compatibilityDate: "2026-11-01",
					durableObjects: {
						FLOOR: { className: "FloorDO", useSQLite: true },
						CLAIM_AGENT: { className: "ClaimAgentFloorDO", useSQLite: true },
						CLAIM_SHARD: { className: "ClaimShardFloorDO", useSQLite: true },
						OUTPUT_FLOOR: { className: "OutputFloorDO", useSQLite: true },
					},
					d1Databases: { DB: "floor-db" },
					r2Buckets: { OUTPUT: "floor-output" },
				},
			],
			resourcePersistencePath: persistDir,
		}),
	);
	await mf.ready;
	const pid = workerdPids().find((p) => !before.has(p)) ?? null;
	// drover's job index: the same table and indexes, so the floor's D1 writes cost what drover's do.
	const db = await mf.getD1Database("DB");
	const statements = unstable_splitSqlQuery(readFileSync(path.join(ROOT, "migrations", "0001_create_job_index.sql"), "utf8"));
	await db.batch(statements.map((s) => db.prepare(s)));
	return {
		mf,
		pid,
		async job(plan) {
			const qs = new URLSearchParams(Object.entries(plan).map(([k, v]) => [k, String(v)]));
			const res = await mf.dispatchFetch(`http://floor.local/job?${qs}`, { method: "POST" });
			if (res.status !== 200) throw new Error(`floor /job: ${res.status} ${await res.text()}`);
			return res.json();
		},
		/** The output floor: `lines` lines of `lineBytes` into SQLite (fetched from `toolUrl` when given), then one multipart object in R2. */
		async output(lines, lineBytes, toolUrl) {
			const qs = new URLSearchParams({ lines: String(lines), line_bytes: String(lineBytes), ...(toolUrl ? { tool_url: toolUrl } : {}) });
			const res = await mf.dispatchFetch(`http://floor.local/output?${qs}`, { method: "POST" });
			if (res.status !== 200) throw new Error(`floor /output: ${res.status} ${await res.text()}`);
			return res.json();
		},
		/**
		 * The claim floor's tick: n agents due at `instant`, of shards [from, to) only when given (the
		 * agents of the others are another process's); resolves to how many it claimed.
		 */
		async claimsTick(n, instant, { from = 0, to = 16 } = {}) {
			const res = await mf.dispatchFetch(`http://floor.local/claims/tick?n=${n}&instant=${instant}&from=${from}&to=${to}`, { method: "POST" });
			if (res.status !== 200) throw new Error(`floor /claims/tick: ${res.status} ${await res.text()}`);
			return (await res.json()).claimed;
		},
		dispose: () => mf.dispose(),
	};
}
