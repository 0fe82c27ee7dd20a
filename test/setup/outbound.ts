import { afterEach, beforeEach, expect } from "vitest";
import { guardedFetch, resetOutbound, unmocked } from "../helpers/outbound.ts";

// Installed before any test module runs, so the SDK and every DO in this isolate see the guard.
globalThis.fetch = guardedFetch as typeof fetch;

beforeEach(() => resetOutbound());
afterEach(() => {
	expect(unmocked, "outbound requests that no fake in the test answered").toEqual([]);
});
