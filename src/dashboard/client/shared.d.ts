// What index.ts puts before the *.client.js files from the Worker's own code.
declare const SseParser: typeof import("../../shared/sse.ts").SseParser;
declare const retryAfterMs: typeof import("../../shared/retry-after.ts").retryAfterMs;
declare const KeptAnswers: typeof import("../../shared/kept-answers.ts").KeptAnswers;
declare const csvOf: typeof import("../../shared/csv.ts").csvOf;
/** src/shared/note-version.ts (declared here: that module imports node:crypto, which this build has no types for). */
declare const noteVersionWeb: (value: string) => Promise<string>;
declare const AGENT_NAME_PATTERN: typeof import("../../config/agent-name.ts").AGENT_NAME_PATTERN;
declare const failedCallsWord: typeof import("../../jobs/tool-call-words.ts").failedCallsWord;
declare const usd: typeof import("../../shared/usd.ts").usd;
