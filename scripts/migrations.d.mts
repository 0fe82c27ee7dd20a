export function migrationsLine(output: string): string | null;
