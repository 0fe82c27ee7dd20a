import { describe, expect, it } from "vitest";
import { modelLine } from "../../scripts/model-line.mjs";

// npm start's banner says where the Worker's model calls go: .dev.vars's ANTHROPIC_BASE_URL (a gateway)
// when set, by its host only.
const emulator = "http://127.0.0.1:8788";
const apiKey = "sk-ant-api03-secret-key";

describe("npm start's banner, model line", () => {
	it("names the host ANTHROPIC_BASE_URL in .dev.vars points at, not the Anthropic Messages API", () => {
		const line = modelLine({ apiKey, baseUrl: "https://gateway.example.com:8443/v1/anthropic", allowed: "https://gateway.example.com:8443", emulator });
		expect(line).toBe("the Messages API at gateway.example.com:8443 (ANTHROPIC_BASE_URL and ANTHROPIC_API_KEY from .dev.vars)");
		expect(modelLine({ apiKey, baseUrl: ' "https://gw.example" ', allowed: '"https://gw.example"', emulator })).toContain("the Messages API at gw.example ");
	});

	it("says the Worker sends no model call to a host ANTHROPIC_ALLOWED_BASE_URLS does not list, as the Worker refuses it, where it named the host", () => {
		expect(modelLine({ apiKey, baseUrl: "https://gw.example/v1", emulator })).toBe(
			"the Worker sends no model call: ANTHROPIC_BASE_URL points at gw.example, which may not receive ANTHROPIC_API_KEY: keys are only sent to api.anthropic.com or an origin listed in ANTHROPIC_ALLOWED_BASE_URLS; no request was sent (ANTHROPIC_BASE_URL in .dev.vars)",
		);
		expect(modelLine({ apiKey, baseUrl: "https://gw.example/v1", allowed: "https://other.example", emulator })).toMatch(/^the Worker sends no model call: ANTHROPIC_BASE_URL points at gw\.example/);
	});

	it("says only the host: never a key, nor a URL's user, password, path or query", () => {
		const line = modelLine({ apiKey, baseUrl: "https://user:sk-ant-in-url@gw.example/p/sk-ant-path?key=sk-ant-query", allowed: "https://gw.example", emulator });
		expect(line).toContain("gw.example");
		expect(line).not.toMatch(/sk-ant|user/);
		// Not a URL (a key pasted into the wrong variable, say): said so, not echoed.
		expect(modelLine({ apiKey, baseUrl: "sk-ant-api03-pasted", emulator })).toBe(
			"the Worker sends no model call: ANTHROPIC_BASE_URL is not a valid URL; no request was sent (ANTHROPIC_BASE_URL in .dev.vars)",
		);
		expect(modelLine({ apiKey, baseUrl: "ftp://gw.example", emulator })).toBe(
			"the Worker sends no model call: ANTHROPIC_BASE_URL must be an http(s) URL, not ftp:; no request was sent (ANTHROPIC_BASE_URL in .dev.vars)",
		);
	});

	it("says the Anthropic Messages API with no base URL, and the emulator with no key, as before", () => {
		for (const baseUrl of [undefined, "", "  "]) expect(modelLine({ apiKey, baseUrl, emulator })).toBe("the Anthropic Messages API (ANTHROPIC_API_KEY from .dev.vars)");
		// No key: the emulator answers, whatever .dev.vars's base URL (npm start points the Worker at it).
		expect(modelLine({ apiKey: "", baseUrl: "https://gw.example", emulator })).toBe(
			"NO API KEY: the local Messages API emulator (http://127.0.0.1:8788) answers for Claude; put ANTHROPIC_API_KEY in .dev.vars to use the real API",
		);
	});
});
