import { describe, expect, it } from "vitest";
import { fnv1a32, toBase64Url } from "../../src/shared/hash.ts";
import { SCHEDULER_SHARDS, shardName, shardOf } from "../../src/scheduler/shards.ts";

// What a job list's cursor and an ETag are made of: base64url without padding (RFC 4648 §5), so a
// cursor goes into a query string and a header as it is, with nothing to escape.
describe("toBase64Url", () => {
	it("writes every + as -, every / as _, and leaves no padding", () => {
		// btoa gives "+/+/+/8=" and "+/+//w==".
		expect(toBase64Url(String.fromCharCode(0xfb, 0xff, 0xbf, 0xfb, 0xff))).toBe("-_-_-_8");
		expect(toBase64Url(String.fromCharCode(0xfb, 0xff, 0xbf, 0xff))).toBe("-_-__w");
	});
});

// An agent's scheduler shard is its name's FNV-1a hash: a hash that changed between releases would
// move every agent to another shard object on the next deploy, away from its pending minutes.
describe("fnv1a32", () => {
	it("is FNV-1a of 32 bits, unsigned, as its published test vectors give it", () => {
		expect([fnv1a32(""), fnv1a32("a"), fnv1a32("foobar")]).toEqual([0x811c9dc5, 0xe40c292c, 0xbf9cf968]);
	});

	it("puts an agent on the same shard in every release", () => {
		expect([shardOf("a"), shardOf("foobar"), shardOf("site-watch")]).toEqual([12, 8, 4]);
	});
});

// A shard's object is found by its name: a name that changed between releases would leave every
// shard's agents and pending minutes in objects the next deploy no longer asks.
describe("shardName", () => {
	it("names each shard's object as every release has", () => {
		expect(Array.from({ length: SCHEDULER_SHARDS }, (_, i) => shardName(i))).toEqual(Array.from({ length: 16 }, (_, i) => `shard-${i}`));
	});
});
