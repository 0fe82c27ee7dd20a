import { afterEach, beforeEach, expect } from "vitest";
import { MessagesEmulator } from "../../emulator/messages-api.ts";
import { fake, guardedFetch, resetOutbound, unmocked } from "../helpers/outbound.ts";

// Installed before any test module runs, so the SDK and every DO in this isolate see the guard.
globalThis.fetch = guardedFetch as typeof fetch;

beforeEach(() => {
	resetOutbound();
	// Alarms also fire on their own: a job a test did not mean to run still talks to the emulator,
	// never to the network. A test that scripts the model registers its own (useEmulator) on top.
	const standing = new MessagesEmulator();
	fake("https://api.anthropic.com", (request) => standing.handle(request));
	// Any failing job opens an incident and alerts ALERT_WEBHOOK_URL; tests that check alerts add their own sink.
	fake("https://alerts.example.test", () => new Response("ok"));
	// fleet.yaml's agents deliver here (vitest.config.mts binds their targets' secrets to it).
	fake("https://fleet-deliveries.example.test", () => new Response("ok"));
	// fleet.yaml's site-watch fetches example.com: a test that ticks across a quarter hour claims its
	// job, which may run by its own start alarm during a later test.
	fake("https://example.com", () => new Response("<html>Example Domain</html>", { headers: { "content-type": "text/html" } }));
});
afterEach(() => {
	expect(unmocked, "outbound requests that no fake in the test answered").toEqual([]);
});
