/// <reference types="vite/client" />
import { describe, expect, expectTypeOf, it } from "vitest";
import type { OutputLine as ServerOutputLine } from "../../durable-objects/agent/runner/output.ts";
import type { AgentStatusShape, OccurrenceShape } from "../../src/api/agents/actions.ts";
import type { AgentNameT } from "../../src/api/agents/definitions.ts";
import type { AgentDryRunT } from "../../src/api/agents/dry-run.ts";
import type { AgentViewT } from "../../src/api/agents/views.ts";
import type { MeShape } from "../../src/api/me.ts";
import type { JobManifestShape } from "../../src/api/jobs/manifest.ts";
import type { ToolCallPageShape } from "../../src/api/jobs/tool-calls.ts";
import type { CurrentSessionShape } from "../../src/api/agents/sessions.ts";
import type { StatusShape } from "../../src/api/status.ts";
import type { AgentNamePage, AgentStatus, AgentView, CurrentSession, DryRun, JobManifest, Me, Occurrence, OutputLine, Status, ToolCallPage } from "../../src/dashboard/client/api-types.ts";
import { APP_JS } from "../../src/dashboard/client/index.ts";

// The script's source files as text (Vite inlines them at build time).
const files = import.meta.glob("/src/dashboard/client/*.client.js", { query: "?raw", import: "default", eager: true }) as Record<string, string>;

describe("the dashboard's script", () => {
	it("is every client file, each once, inside one strict function", () => {
		expect(Object.keys(files).length).toBeGreaterThan(10);
		expect(APP_JS.startsWith('"use strict";\n(() => {\n')).toBe(true);
		expect(APP_JS.endsWith("})();\n")).toBe(true);
		for (const [file, text] of Object.entries(files)) {
			// A file left out of index.ts's list would be type-checked but never served.
			expect(APP_JS.split(text).length - 1, file).toBe(1);
			expect(text.startsWith("// @ts-check\n"), file).toBe(true);
		}
	});
});

describe("the dashboard's types for the API's JSON (src/dashboard/client/api-types.ts)", () => {
	it("are the server's own where the server's module loads in the browser check, and checked against the server's here (by tsc)", () => {
		// The server's answer is one the scripts' type takes: each field they read is there, of a type they handle.
		expectTypeOf<AgentViewT>().toExtend<AgentView>();
		expectTypeOf<AgentDryRunT>().toExtend<DryRun>();
		expectTypeOf<AgentNameT>().toExtend<AgentNamePage["agents"][number]>();
		expectTypeOf<AgentStatusShape>().toExtend<AgentStatus>();
		expectTypeOf<StatusShape>().toExtend<Status>();
		expectTypeOf<OccurrenceShape>().toExtend<Occurrence>();
		expectTypeOf<MeShape>().toExtend<Me>();
		expectTypeOf<CurrentSessionShape>().toExtend<CurrentSession>();
		expectTypeOf<JobManifestShape>().toExtend<JobManifest>();
		expectTypeOf<ToolCallPageShape>().toExtend<ToolCallPage>();
		// So is a line of any type, for the scripts' loose shape (every type's fields, optional).
		expectTypeOf<ServerOutputLine>().toExtend<OutputLine>();
	});
});
