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
