/**
 * Job ids unique across the fleet. The design's format leaves 6 characters a day (36^6, about 2.2
 * billion), and agents drawing them at random collide by the birthday bound: ~2 pairs a day at
 * 100,000 jobs a day, ~475 at a 1,000-agent fleet running every minute. The D1 index is keyed by
 * id, so the second job of a pair could not be found by it. Instead each day's numbers are dealt
 * out: number n = k × SLOTS + slot, where each scheduler shard owns a slot and counts k up in its
 * own storage, and a bijection spreads the numbers over the suffixes so ids still look random (they
 * are not secrets: the API authenticates every read). The bijection is keyed by the day, so the
 * counters' fresh start each day does not deal yesterday's suffixes again in the same order (an id
 * with its date mistyped would otherwise open another real job). The last slot is for random draws
 * when no shard could be asked; those only ever meet each other.
 */
import { SCHEDULER_SHARDS } from "../scheduler/shards.ts";
import { DAY_MS } from "../shared/time.ts";

const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
const ID_SPACE = 36 ** 6;
/** One slot per shard, and one for random draws. */
const SLOTS = SCHEDULER_SHARDS + 1;
const FALLBACK_SLOT = SCHEDULER_SHARDS;
/** How many numbers each slot has a day. */
export const SLOT_CAPACITY = Math.floor(ID_SPACE / SLOTS);

const BASE_KEYS = [0x9e3779b9, 0x7f4a7c15, 0x85ebca6b, 0xc2b2ae35];

function round(half: number, key: number): number {
	let x = Math.imul(half ^ key, 0x45d9f3b);
	x ^= x >>> 15;
	x = Math.imul(x, 0x2c1b3c6d);
	return (x ^ (x >>> 13)) & 0xffff;
}

/** The Feistel round keys of a day (YYYY-MM-DD): the base keys mixed with the day's number. */
function roundKeys(day: string): number[] {
	const dayNumber = Math.floor(Date.parse(`${day}T00:00:00Z`) / DAY_MS);
	return BASE_KEYS.map((key, i) => {
		let x = Math.imul(dayNumber ^ key, 0x85ebca6b) ^ Math.imul(i + 1, 0x27d4eb2f);
		x ^= x >>> 16;
		x = Math.imul(x, 0xc2b2ae35);
		return (x ^ (x >>> 13)) >>> 0;
	});
}

// A tick deals for one day (two around midnight): the last day's keys are kept.
let keysOf: { day: string; keys: number[] } | null = null;
function keysFor(day: string): number[] {
	if (keysOf?.day !== day) keysOf = { day, keys: roundKeys(day) };
	return keysOf.keys;
}

/** A 4-round Feistel permutation of the 32-bit integers, keyed. */
function permute32(n: number, keys: readonly number[]): number {
	let left = n >>> 16;
	let right = n & 0xffff;
	for (const key of keys) {
		const next = left ^ round(right, key);
		left = right;
		right = next;
	}
	return ((left << 16) | right) >>> 0;
}

/** A permutation of [0, ID_SPACE): the 32-bit one, walked until it lands inside (about twice). */
function scatter(n: number, keys: readonly number[]): number {
	let x = permute32(n, keys);
	while (x >= ID_SPACE) x = permute32(x, keys);
	return x;
}

function suffixOf(n: number, day: string): string {
	let x = scatter(n, keysFor(day));
	let out = "";
	for (let i = 0; i < 6; i++) {
		out = ALPHABET[x % 36] + out;
		x = Math.floor(x / 36);
	}
	return out;
}

/** The UTC day of `now` as an id carries it. */
export const idDay = (now: number): string => new Date(now).toISOString().slice(0, 10);

/** The id of number `k` of shard `shard`'s slot on `day` (YYYY-MM-DD). */
export function dealtJobId(day: string, shard: number, k: number): string {
	if (!Number.isInteger(shard) || shard < 0 || shard >= SCHEDULER_SHARDS) throw new RangeError(`no scheduler shard ${shard}`);
	if (!Number.isInteger(k) || k < 0 || k >= SLOT_CAPACITY) throw new RangeError(`job id number ${k} is outside a shard's ${SLOT_CAPACITY} a day`);
	return `job-${day}-${suffixOf(k * SLOTS + shard, day)}`;
}

// The largest multiple of SLOT_CAPACITY below 2^32: draws at or above it are drawn again, so every
// number of the slot is equally likely (a plain `% SLOT_CAPACITY` would favour the lower ones).
const UNBIASED_DRAW_LIMIT = 2 ** 32 - (2 ** 32 % SLOT_CAPACITY);

/**
 * A random id from the slot no shard deals, dated with the UTC day of `now`: for when no shard could
 * be asked, and a job made without an id (createJob's default).
 */
export function drawnJobId(now: number): string {
	const draw = new Uint32Array(1);
	do crypto.getRandomValues(draw);
	while (draw[0]! >= UNBIASED_DRAW_LIMIT);
	const day = idDay(now);
	return `job-${day}-${suffixOf((draw[0]! % SLOT_CAPACITY) * SLOTS + FALLBACK_SLOT, day)}`;
}
