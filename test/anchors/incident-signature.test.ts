import { describe, expect, it } from "vitest";
import { incidentId, incidentSignature, normalizeError } from "../../src/incidents/signature.ts";

// Hermes: sig = sha256(job_id + normalize(error)[:200]).hexdigest()[:12], id = f"{job_id[:6]}_{sig}",
// normalize collapsing whitespace, trimming and lowercasing; drover's job_id is the agent's name.
// The expected values were computed in Python 3:
//   norm = lambda s: re.sub(r"\s+", " ", s).strip().lower()
//   hashlib.sha256((agent + norm(e)[:200]).encode()).hexdigest()[:12]
describe("the incident signature's window is exactly 200 normalized code points", () => {
	it("matches Hermes' Python for an error of two- and four-byte characters longer than the window", async () => {
		const error = `  Tool FAILED:\n\n\t${"🔥É".repeat(150)} Disk A`;
		const sig = await incidentSignature("digest", error);
		expect(sig).toBe("315d5d412303");
		expect(incidentId("digest", sig)).toBe("digest_315d5d412303");
		const long = await incidentSignature("daily-digest-weekly", error);
		expect(long).toBe("8a767e965118");
		expect(incidentId("daily-digest-weekly", long)).toBe("daily-_8a767e965118");
	});

	it("ignores a difference at the 201st code point and not one at the 200th, counting an emoji as one", async () => {
		const head = `x${"😀".repeat(198)}`; // 199 code points, 397 UTF-16 units
		const base = await incidentSignature("digest", `${head}AB`);
		expect(await incidentSignature("digest", `${head}AC`)).toBe(base);
		expect(await incidentSignature("digest", `${head}ZB`)).not.toBe(base);
	});
});

describe("the incident signature's whitespace is Python's", () => {
	it("collapses and trims U+001C-U+001F and NEL, and keeps a byte order mark, as re.sub(r\"\\s+\", \" \", e).strip() does", async () => {
		const bom = "\ufeffWebhook answered 500:\x85\x1cInternal  Error\ufeff";
		expect(normalizeError(bom)).toBe("\ufeffwebhook answered 500: internal error\ufeff");
		expect(await incidentSignature("digest", bom)).toBe("89e0faa5c7a9");
		const separators = "\x1f\x85 Timed out\x1e";
		expect(normalizeError(separators)).toBe("timed out");
		expect(await incidentSignature("digest", separators)).toBe("cf2b85874cf9");
		expect(await incidentSignature("digest", "\ufeff")).toBe("829e45e87b4f");
		// The whitespace JavaScript and Python agree on is still collapsed and trimmed.
		expect(normalizeError(" \t\u00a0Upstream\u2003\u3000ERROR\r\n")).toBe("upstream error");
	});
});
