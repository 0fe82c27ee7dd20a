import { alertIncident } from "../../src/incidents/alert.ts";
import { errorFields, log } from "../../src/log.ts";
import type { Incident } from "../../src/store/incidents.ts";
import { queueEffects, SEND_TIMEOUT_MS, sendDue } from "./effects.ts";
import { flushIncidentEvents } from "./incidents.ts";
import { getJob, jobsWithStatus } from "./jobs.ts";
import { flushOutbox, outboxSize, settleOutbox, type OutboxAcks } from "./outbox.ts";
import { consolidateJob, flushChunks, recordConsolidated, unconsolidated, type Consolidated } from "./output-store.ts";
import { getSetup } from "./runner/session.ts";
import { keptDefinition, readState, storedAgentName } from "./state.ts";
import type { StreamHub } from "./streams.ts";

/**
 * A pass's closing work, for the jobs that ended: their effects queued, outputs put to R2, index
 * rows and incident events sent to D1, deliveries and hooks sent. What the stores acknowledge is
 * held here and noted in SQLite with the pass's last writes. One per AgentDO instance, beside its
 * Passes, which call in at a pass's end and as each loop ends mid-pass.
 */
export class Closing {
	private readonly ctx: DurableObjectState;
	private readonly sql: SqlStorage;
	private readonly hub: StreamHub;
	private readonly currentEnv: () => Env;
	/** Whether an alarm pass is under way, whose last writes note what was acknowledged. */
	private readonly passRunning: () => boolean;
	/** The latest closing work (a pass's, or a loop's that ended mid-pass); the next starts after it. */
	private finishing: Promise<void> = Promise.resolve();
	private d1Down = false;
	/** The latest index flush; the next one starts after it (see flushIndex). */
	private flushing: Promise<boolean> = Promise.resolve(true);
	private r2Down = false;
	/**
	 * Alerts of incidents the flushes opened, sent one after another beside them: an alert webhook
	 * that hangs (10 s an alert) must not hold up the index write a trigger, cancel or decision
	 * waits on, nor the deliveries after it. One the object does not live to send, the tick sends.
	 */
	private alerting: Promise<void> = Promise.resolve();
	/**
	 * What D1 and R2 have acknowledged during the pass and SQLite has yet to note (outbox rows sent,
	 * outputs consolidated). Noted with the pass's last writes: each write made as an answer
	 * arrives would be a commit of its own, and the object's next request waits for it.
	 */
	readonly acked: OutboxAcks = new Map();
	private consolidated: Consolidated[] = [];
	/** How long a delivery or hook target may take to answer (tests shorten it to meet a hung target). */
	sendTimeoutMs = SEND_TIMEOUT_MS;


	constructor(ctx: DurableObjectState, env: () => Env, hub: StreamHub, passRunning: () => boolean) {
		this.ctx = ctx;
		this.sql = ctx.storage.sql;
		this.currentEnv = env;
		this.hub = hub;
		this.passRunning = passRunning;
	}

	private get env(): Env {
		return this.currentEnv();
	}

	/** D1 refused the last flush: the outbox waits for the retry alarm instead of spinning. */
	get indexDown(): boolean {
		return this.d1Down;
	}

	/** R2 refused the last write: finished jobs' output waits in SQLite for the retry alarm. */
	get outputDown(): boolean {
		return this.r2Down;
	}

	/** Runs closing work after the closing work before it: two at once would read the same due sends. */
	serially<T>(work: () => Promise<T>): Promise<T> {
		const run = this.finishing.then(work);
		this.finishing = run.then(
			() => {},
			() => {},
		);
		return run;
	}

	/**
	 * What ended jobs set off, in order: their effects queued, their outputs put, due sends sent. The
	 * chunks of running jobs too when `running` (not mid-pass, while their loops still write).
	 */
	async closeJobs(running: boolean, agent: string): Promise<void> {
		this.queueFinalEffects();
		await this.storeOutput(running);
		// Deliveries and hooks go one after another, each given up to SEND_TIMEOUT_MS: the final
		// statuses reach the index first, or a slow target would leave the list saying running.
		await sendDue(this.sql, this.env, agent, () => Date.now(), (jobId) => this.hub.publish(jobId), this.sendTimeoutMs, () => this.flushIndex());
	}

	/** A mid-pass share of the pass's closing work, for jobs that ended while others still run. */
	async finishEarly(): Promise<void> {
		try {
			await this.closeJobs(false, storedAgentName(this.sql) ?? "");
			await this.flushIndex();
			// Noted now, not with the pass's last writes: the next job to end would put these outputs
			// again, and R2 may refuse a second write of a key within a second.
			this.noteAcknowledged();
		} catch (err) {
			// The pass's own closing work does it all again.
			log.warn("agent.finish_early_failed", { agent: storedAgentName(this.sql), ...errorFields(err) });
		}
	}

	/**
	 * Keeps R2 in step with the jobs' lines: chunks of running jobs as they grow (not mid-pass, while
	 * their loops still write), the final object of finished ones. A failure leaves the lines in
	 * SQLite and is retried on the next alarm.
	 */
	private async storeOutput(running: boolean): Promise<void> {
		// The job whose put failed, for the log line.
		let current: string | null = null;
		try {
			if (running) {
				for (const job of jobsWithStatus(this.sql, ["running", "approval_pending"])) {
					current = job.id;
					await flushChunks(this.sql, this.env.OUTPUT, job);
				}
			}
			const noted = new Set(this.consolidated.map((c) => c.jobId));
			for (const jobId of unconsolidated(this.sql, 20)) {
				// Put already, its record waiting for the pass's last writes: not again.
				if (noted.has(jobId)) continue;
				current = jobId;
				const done = await consolidateJob(this.sql, this.env.OUTPUT, jobId);
				if (done) this.consolidated.push(done);
			}
			this.r2Down = false;
		} catch (err) {
			this.r2Down = true;
			log.warn("output.store_failed", { agent: storedAgentName(this.sql), job_id: current, ...errorFields(err) });
		}
	}

	/**
	 * Queues delivery, hooks and incident events of jobs that reached a final status, in the order they
	 * ended: a failure and a clean run of one schedule filed the other way round leave its incident open.
	 */
	queueFinalEffects(): void {
		const state = readState(this.sql);
		// A deleted or dropped agent's last: its queued runs, cancelled for it, still fire its hooks.
		const agent = state && keptDefinition(state);
		for (const { job_id } of this.sql.exec<{ job_id: string }>("SELECT job_id FROM final_effects ORDER BY queued_at, rowid LIMIT 100").toArray()) {
			this.ctx.storage.transactionSync(() => {
				const job = getJob(this.sql, job_id);
				// A job that ran is delivered and hooked as it ran (its manifest), though its agent was
				// changed or deleted since; one that never started goes by the agent as it is, or was last.
				if (job) queueEffects(this.sql, job, getSetup(this.sql, job_id)?.definition ?? agent, Date.now());
				this.sql.exec("DELETE FROM final_effects WHERE job_id = ?", job_id);
			});
		}
	}

	/**
	 * Sends the outbox (job index, then incidents) to D1; false (and the backlog kept) when D1 refuses.
	 * Flushes run one after another: two at once (a trigger indexing its job while the alarm flushes)
	 * would read the same queued rows and file a failure, and alert on it, twice. Each caller still
	 * gets a flush that starts after it queued its rows.
	 */
	flushIndex(): Promise<boolean> {
		this.flushing = this.flushing.then(() => this.flushIndexNow());
		return this.flushing;
	}

	private async flushIndexNow(): Promise<boolean> {
		try {
			await flushOutbox(this.sql, this.env.DB, this.acked);
			await flushIncidentEvents(this.sql, this.env, storedAgentName(this.sql) ?? "", (incident) => this.alertLater(incident));
			this.d1Down = false;
			return true;
		} catch (err) {
			this.d1Down = true;
			log.warn("outbox.flush_failed", { agent: storedAgentName(this.sql), backlog: outboxSize(this.sql, this.acked), ...errorFields(err) });
			return false;
		} finally {
			// No pass under way to note it with its last writes (an agent dropped from fleet.yaml).
			if (!this.passRunning()) this.noteAcknowledged();
		}
	}

	private alertLater(incident: Incident): void {
		const env = this.env;
		this.alerting = this.alerting.then(() =>
			alertIncident(env, incident, Date.now()).then(
				() => {},
				// D1 failed to claim, release or mark it (a failed send is alert_failed, logged where it is
				// sent): the tick's retry sends it once the claim lapses.
				(err: unknown) => log.warn("incident.alert_claim_failed", { agent: incident.agent, incident: incident.id, ...errorFields(err) }),
			),
		);
	}

	/** Settles once the alerts queued so far are sent (or given up to the tick's retry). */
	alertsSent(): Promise<void> {
		return this.alerting;
	}

	/** Forgets the outputs put for `jobIds` and not yet noted: retention pruned their jobs. */
	dropConsolidated(jobIds: readonly string[]): void {
		if (jobIds.length === 0 || this.consolidated.length === 0) return;
		const gone = new Set(jobIds);
		this.consolidated = this.consolidated.filter((c) => !gone.has(c.jobId));
	}

	/** Notes in SQLite what D1 and R2 acknowledged during the pass (see `acked`). */
	noteAcknowledged(): void {
		for (const done of this.consolidated.splice(0)) recordConsolidated(this.sql, done);
		settleOutbox(this.sql, this.acked);
	}
}
