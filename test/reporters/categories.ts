import path from "node:path";
import type { Reporter, TestModule } from "vitest/node";

/**
 * One line per category of the suite (its folder under test/), with cases tried and passed, so the
 * coverage of faults, load, bad input and security reads at a glance at the end of a run.
 */
export default class CategorySummary implements Reporter {
	onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
		const totals = new Map<string, { tried: number; passed: number; failed: number }>();
		for (const mod of testModules) {
			const rel = path.relative(path.join(process.cwd(), "test"), mod.moduleId);
			const category = rel.split(path.sep)[0] ?? "other";
			const t = totals.get(category) ?? { tried: 0, passed: 0, failed: 0 };
			for (const test of mod.children.allTests()) {
				const state = test.result().state;
				if (state === "skipped" || state === "pending") continue;
				t.tried++;
				if (state === "passed") t.passed++;
				else t.failed++;
			}
			totals.set(category, t);
		}
		const width = Math.max(...[...totals.keys()].map((k) => k.length));
		console.log("\ncases by category:");
		for (const [category, t] of [...totals].sort(([a], [b]) => a.localeCompare(b))) {
			console.log(`  ${category.padEnd(width)}  ${String(t.tried).padStart(4)} tried, ${String(t.passed).padStart(4)} passed, ${t.failed} failed`);
		}
	}
}
