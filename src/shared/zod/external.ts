// zod's node_modules/zod/v4/classic/external.js, export for export, without its
// `export * as locales` (see ./index.ts). Its files are named by path: the alias turns every
// "zod/…" specifier into this folder, and the package's exports map lists none of them.
export * as core from "./core.ts";
export * from "../../../node_modules/zod/v4/classic/schemas.js";
export * from "../../../node_modules/zod/v4/classic/checks.js";
export * from "../../../node_modules/zod/v4/classic/errors.js";
export * from "../../../node_modules/zod/v4/classic/parse.js";
export * from "../../../node_modules/zod/v4/classic/compat.js";
export {
	globalRegistry,
	registry,
	config,
	memoizer,
	$output,
	$input,
	$brand,
	clone,
	regexes,
	treeifyError,
	prettifyError,
	formatError,
	flattenError,
	TimePrecision,
	util,
	NEVER,
	INVALID,
	toZod,
	compile,
	withParser,
	ZodCompileAsyncError,
	ZodCompileUnsupportedError,
	getDiscriminatedOption,
} from "../../../node_modules/zod/v4/core/index.js";
export { toJSONSchema } from "../../../node_modules/zod/v4/core/json-schema-processors.js";
export { fromJSONSchema } from "../../../node_modules/zod/v4/classic/from-json-schema.js";
export { deepPartial } from "../../../node_modules/zod/v4/classic/deep-partial.js";
export { input, output } from "../../../node_modules/zod/v4/classic/in-out.js";
export { ZodISODateTime, ZodISODate, ZodISOTime, ZodISODuration } from "../../../node_modules/zod/v4/classic/iso.js";
export * as iso from "../../../node_modules/zod/v4/classic/iso.js";
export * as coerce from "../../../node_modules/zod/v4/classic/coerce.js";
