// The key guard's configuration at its edges: a base URL of blanks is no base URL (the SDK default),
// one padded with blanks is used trimmed, one that is not http(s) is refused saying so, before any
// origin is compared, and a keyless call is served by an emulator only at a loopback name itself. A
// mutation walk found each unchecked.
import { describe, expect, it } from "vitest";
import { providerConfig } from "../../src/agent/credentials.ts";

const KEY = "sk-ant-api03-key-zero-aaaaaaaa";

describe("providerConfig", () => {
	it("takes a base URL of blanks as unset, and one padded with blanks trimmed", () => {
		expect(providerConfig({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: "  " })).toEqual({ keys: [KEY], baseURL: null, emulator: false });
		expect(providerConfig({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: " https://api.anthropic.com/v1 \n" })).toEqual({ keys: [KEY], baseURL: "https://api.anthropic.com/v1", emulator: false });
	});

	it("refuses a base URL that is not http(s), naming its scheme, with or without a key", () => {
		expect(() => providerConfig({ ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: "ftp://api.anthropic.com" })).toThrow("ANTHROPIC_BASE_URL must be an http(s) URL, not ftp:; no request was sent");
		expect(() => providerConfig({ ANTHROPIC_BASE_URL: "ws://localhost:8788" })).toThrow("ANTHROPIC_BASE_URL must be an http(s) URL, not ws:; no request was sent");
	});

	it("serves no emulator without a key at a name that is not loopback itself", () => {
		expect(() => providerConfig({ ANTHROPIC_BASE_URL: "http://gw.localhost:8788" })).toThrow("ANTHROPIC_API_KEY is not set");
	});
});
