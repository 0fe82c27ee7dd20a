import { editDistance } from "../shared/edit-distance.ts";

/**
 * End-of-life dates (UTC days) of deprecated models, copied from the Anthropic SDK's own list,
 * `DEPRECATED_MODELS` in @anthropic-ai/sdk 1.14.0 `internal/data/deprecated-models.mjs`. The SDK's
 * package exports do not expose that module, so it is mirrored here; a unit test compares the two so
 * an SDK upgrade cannot leave this table stale.
 */
export const DEPRECATED_MODELS: Readonly<Record<string, string>> = {
	"claude-mythos-preview": "2026-06-30",
	"claude-opus-4-5": "2027-01-22",
	"claude-opus-4-5-20251101": "2027-01-22",
	"claude-sonnet-4-5": "2026-11-30",
	"claude-sonnet-4-5-20250929": "2026-11-30",
};

/**
 * The model ids the Anthropic SDK of this release names (its `Model` type in @anthropic-ai/sdk
 * 1.14.0, `resources/messages/messages.d.ts`), mirrored because a type has no value at run time; a
 * unit test compares the two. Only to tell a misspelt id from a newer one: any id is sent as written.
 */
export const KNOWN_MODELS: readonly string[] = [
	"claude-fable-5-2",
	"claude-mythos-5-2",
	"claude-haiku-5-5",
	"claude-sonnet-5-5",
	"claude-fable-5-1",
	"claude-opus-5-5",
	"claude-mythos-5-1",
	"claude-sonnet-5",
	"claude-fable-5",
	"claude-mythos-5",
	"claude-opus-5",
	"claude-opus-4-8",
	"claude-opus-4-7",
	"claude-mythos-preview",
	"claude-opus-4-6",
	"claude-sonnet-4-6",
	"claude-haiku-4-5",
	"claude-haiku-4-5-20251001",
	"claude-opus-4-5",
	"claude-opus-4-5-20251101",
	"claude-sonnet-4-5",
	"claude-sonnet-4-5-20250929",
];

const FAMILIES = new Set([...KNOWN_MODELS.map((id) => id.split("-")[1]), "opus", "sonnet", "haiku"]);
/**
 * How the API's ids are made: a known family, then a version of numbers joined by hyphens
 * (claude-sonnet-5-5), or the older order, version first (claude-3-5-haiku); then a date or latest.
 */
const ID_FORMS = [/^claude-([a-z]+)-(?:\d+(?:-\d+)?|preview)(?:-\d{8}|-latest)?$/, /^claude-\d+(?:-\d+)?-([a-z]+)(?:-\d{8}|-latest)?$/];
/**
 * A gateway's spelling of an id, which the schema takes for a proxy at ANTHROPIC_BASE_URL: Bedrock's
 * (anthropic.claude-…-v1:0, with a region's prefix), Vertex's (claude-…@20250101), a path's.
 */
const GATEWAY_ID = /[:@/]|^[\w-]+\.(?:[\w-]+\.)*claude-/;

/** Ids already judged: every agent listed asks for its models' (the distance is not free). */
const judged = new Map<string, string | null>();

/**
 * Why a model id is likely misspelt, or null: one the SDK knows, one of a known family in the API's
 * form (a model newer than this release is named so), or a gateway's, is taken. The id is not
 * refused: the Worker cannot list the ids the API serves, and a misspelt one fails its job's first
 * call (404).
 */
export function modelIdProblem(model: string): string | null {
	const known = judged.get(model);
	if (known !== undefined) return known;
	const problem = judge(model);
	if (judged.size >= 1000) judged.clear();
	judged.set(model, problem);
	return problem;
}

function judge(model: string): string | null {
	if (KNOWN_MODELS.includes(model) || GATEWAY_ID.test(model)) return null;
	if (ID_FORMS.some((form) => FAMILIES.has(form.exec(model)?.[1] ?? ""))) return null;
	const close = model.length <= 64 ? closestModel(model.toLowerCase()) : null;
	return `${model} is not a model id this release knows${close ? ` (did you mean ${close}?)` : ""}: the API's are written like claude-sonnet-5-5; a misspelt one fails its job's first call (404)`;
}

function closestModel(model: string): string | null {
	let best: { id: string; distance: number } | null = null;
	for (const id of KNOWN_MODELS) {
		if (/-\d{8}$/.test(id)) continue;
		const distance = Math.min(editDistance(id, model), editDistance(id, `claude-${model}`));
		if (distance <= 2 && (best === null || distance < best.distance)) best = { id, distance };
	}
	return best?.id ?? null;
}
