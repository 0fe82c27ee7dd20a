import { MessagesEmulator } from "../../emulator/messages-api.ts";
import type { EmulatorOptions } from "../../emulator/wire.ts";
import { loadFleet } from "../../src/config/bundled.ts";
import { fake } from "./outbound.ts";

/** The system prompts of fleet.yaml's agents, which these tests never script. */
const FILE_AGENT_SYSTEMS = new Set(loadFleet().agents.flatMap((a) => (a.system_prompt ? [a.system_prompt] : [])));

/**
 * A Messages API emulator answering for https://api.anthropic.com in this test (the Worker's
 * ANTHROPIC_BASE_URL is empty in tests, so the SDK calls the real host, which the guard routes here).
 * A call from one of fleet.yaml's agents gets the emulator's demo answer instead of the test's
 * script: a test that ticks at their times claims their jobs, which run by their own start alarm,
 * maybe during a later test, and must not take its scripted answers.
 */
export function useEmulator(options: EmulatorOptions = {}): MessagesEmulator {
	const emulator = new MessagesEmulator(options);
	const demo = new MessagesEmulator();
	fake("https://api.anthropic.com", async (request) => {
		const body = (await request.clone().json().catch(() => null)) as { system?: { text?: unknown }[] } | null;
		const first = Array.isArray(body?.system) ? body.system[0]?.text : undefined;
		return typeof first === "string" && FILE_AGENT_SYSTEMS.has(first) ? demo.handle(request) : emulator.handle(request);
	});
	return emulator;
}

/** A promise and the function that resolves it: a test's hold on a fake until it lets go. */
export function gate(): { promise: Promise<void>; open: () => void } {
	let open = () => {};
	const promise = new Promise<void>((resolve) => (open = resolve));
	return { promise, open };
}

/** The emulator's answers held back until `release`; `arrived` when the first request is in. */
export function heldModel(emulator: MessagesEmulator): { arrived: Promise<void>; release: () => void } {
	const { promise: held, open: release } = gate();
	const { promise: arrived, open: reached } = gate();
	fake("https://api.anthropic.com", async (req) => {
		reached();
		await held;
		return emulator.handle(req);
	});
	return { arrived, release };
}

/**
 * The emulator's answer to the calls whose first message holds `marker` held back until `release`
 * (`arrived` when the first is in); other calls are answered at once, `others` when the first is in.
 */
export function heldModelFor(emulator: MessagesEmulator, marker: string): { arrived: Promise<void>; release: () => void; others: Promise<void> } {
	const { promise: held, open: release } = gate();
	const { promise: arrived, open: reached } = gate();
	const { promise: others, open: other } = gate();
	fake("https://api.anthropic.com", async (req) => {
		const prompt = JSON.stringify(((await req.clone().json()) as { messages: { content: unknown }[] }).messages[0]!.content);
		if (prompt.includes(marker)) {
			reached();
			await held;
		} else other();
		return emulator.handle(req);
	});
	return { arrived, release, others };
}
