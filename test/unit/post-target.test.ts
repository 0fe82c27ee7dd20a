// A URL secret's user and password go as Basic auth, not in the URL (fetch drops them), and errors
// that quote the URL as posted are scrubbed as the URL itself is.
import { describe, expect, it } from "vitest";
import { postTarget, scrubSecretUrl } from "../../src/delivery/secret-url.ts";

describe("postTarget", () => {
	it("posts to the URL without its user and password, sent as Basic auth, percent-escapes decoded", () => {
		expect(postTarget("https://bot:p%40ss%3Aword@hooks.example.test/in?x=1")).toEqual({
			url: "https://hooks.example.test/in?x=1",
			headers: { authorization: `Basic ${btoa("bot:p@ss:word")}` },
		});
		expect(postTarget("https://hooks.example.test/in")).toEqual({ url: "https://hooks.example.test/in", headers: {} });
	});

	it("sends a malformed escape as written (as curl does) rather than failing every request", () => {
		expect(postTarget("https://bot:pa%zz@hooks.example.test/in")).toEqual({ url: "https://hooks.example.test/in", headers: { authorization: `Basic ${btoa("bot:pa%zz")}` } });
	});

	it("user and password beyond Latin-1 are sent as their UTF-8 bytes", () => {
		expect(postTarget("https://b%C3%B6t:%E2%9C%93-pass@hooks.example.test/").headers.authorization).toBe(`Basic ${btoa(String.fromCharCode(...new TextEncoder().encode("böt:✓-pass")))}`);
	});
});

describe("scrubSecretUrl of a URL with a user and password", () => {
	it("hides the URL as posted (without them) too, which a network error quotes", () => {
		const secret = "https://bot:Secr3t-passw0rd@private-hooks.example.test/in/Ab12Cd34Ef56";
		expect(scrubSecretUrl("fetch failed: https://private-hooks.example.test/in/Ab12Cd34Ef56 refused", secret)).toBe("fetch failed: <url> refused");
	});
});
