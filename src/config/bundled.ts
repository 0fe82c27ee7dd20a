// Its bytes (a Data module, wrangler.toml's rules): as a Text module, bytes that are not UTF-8 would
// arrive as U+FFFD, past telling from the file's own text.
import fleetBytes from "../../fleet.yaml";
import { ConfigError } from "../errors.ts";
import { parseFleetBytes } from "./fleet.ts";
import type { AgentDefinition, Fleet } from "./schema.ts";

// Parsed once per isolate. An invalid file is remembered as its error, so every caller gets the same
// ConfigError and nothing ever runs from a half-loaded fleet.
let loaded: { fleet: Fleet } | { error: unknown } | undefined;
// Tests only (bundleFleetForTest): other bytes taken for the bundled file's, in this isolate.
let replaced: Uint8Array | undefined;

/** The bundled fleet.yaml, validated; throws its ConfigError on every call if the file is invalid. */
export function loadFleet(): Fleet {
	if (loaded === undefined) {
		try {
			loaded = { fleet: parseFleetBytes(replaced ?? new Uint8Array(fleetBytes)) };
		} catch (error) {
			loaded = { error };
		}
	}
	if ("error" in loaded) throw loaded.error;
	return loaded.fleet;
}

/** Why the bundled fleet.yaml cannot load, or null when it loads. */
export function fleetFault(): ConfigError | null {
	try {
		loadFleet();
		return null;
	} catch (err) {
		return err instanceof ConfigError ? err : null;
	}
}

/** Tests only: every caller in this isolate (the objects' too) reads these bytes as fleet.yaml; undefined restores the file. */
export function bundleFleetForTest(bytes: Uint8Array | undefined): void {
	replaced = bytes;
	loaded = undefined;
}

export function findAgent(name: string): AgentDefinition | undefined {
	return loadFleet().agents.find((agent) => agent.name === name);
}
